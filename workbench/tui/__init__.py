"""The Textual front-end: the chat screen, its widgets, modals and the event bridge.

This is the only package that imports ``textual``. It drives the core through the
``Host`` and learns what happened from the host's events; nothing below it may
import from here.
"""
