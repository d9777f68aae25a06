"""Screens of the TUI, each with its ``.tcss`` file beside it."""
