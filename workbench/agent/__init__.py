"""Chat sessions, the turn loop and model providers.

Must not import a front-end (tui, headless) or the core: the core injects the tool
gateway into the loop as a callable.
"""
