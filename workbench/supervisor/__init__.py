"""The supervisor: the long-running owner of background processes and the scheduler.

Owns the single-scheduler lock of a home, firing due runs (each in a child process
it watches, kills with its whole process tree past the time limit, and records),
crash recovery at start, the daily run limit, and stopping idle warm-worker pools.
Every process it owns has explicit states (``workbench.states``), each transition one
event. It sits beside the scheduler, below the core: the core injects what it needs
(the command that runs one run, the pools, how to freeze a card), so this package
must not import the core or any front-end; of the config it reads only the settings'
declared defaults (``workbench.config.settings``).
"""
