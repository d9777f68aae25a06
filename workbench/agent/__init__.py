"""Chat sessions, the turn loop and model providers.

Imports the config package (a provider's settings) and the leaves; never a front-end
(tui, headless), the core or another service package: the core injects the tool
gateway into the loop as a callable.
"""
