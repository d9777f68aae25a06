"""Widgets of the TUI; they post messages up and never reach into their parents."""
