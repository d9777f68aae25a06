"""Workbench: a terminal workbench for an AI agent and the extensions that give it abilities.

This module imports nothing heavy, so that ``workbench --version`` stays fast.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
