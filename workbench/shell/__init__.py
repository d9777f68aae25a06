"""The shell: a command line run with bash in the sandbox on a copy-on-write view of the
chat's project folder, its changes applied as one change set the person can undo.

Owns the ``shell`` tool source (``source.py``), running a command in a worker
(``runner.py``), reading its upper layer and applying it (``layers.py``), the change
sets (``changes.py``: the ``Changes`` service) and the network levels
(``network.py``). May import the sandbox, the store's shapes, the config's settings,
the tool contract and the leaves; never the core or a front-end.
"""
