"""Which way images are drawn: terminal graphics (the Kitty graphics protocol or
Sixel) or half blocks, chosen once before the app starts.

Asking a terminal what it can draw means writing a query and reading its answer
from the keyboard input, which only works before Textual's input thread starts
reading; a terminal that does not answer costs the whole wait. So the terminal is
asked only when the ``tui.images`` setting says so: ``halfblock`` never asks;
``auto`` asks only a terminal whose environment names one that draws images (kitty,
Ghostty, WezTerm, foot, Konsole, iTerm2, mlterm) and never one inside tmux or
screen; ``graphics`` always asks, and draws with Sixel (or the protocol the
environment names) when the terminal does not say. Until ``prepare`` runs (tests,
snapshots, a chat opened any other way) images are drawn with half blocks.

``textual_image`` (with Pillow) is imported only when the terminal is asked or
graphics are chosen, and only here, before the app starts: its import is what asks
(each question waits at most 0.1 s for the answer, the cell size too when the
terminal does not report it). A terminal that names itself falsely and answers
nothing thus costs about 0.3 s at start; ``tui.images = "halfblock"`` saves it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Literal

Protocol = Literal["kitty", "sixel"]
"""A terminal graphics protocol: ``kitty`` (Kitty's, with Unicode placeholders) or ``sixel``."""

MODES = ("auto", "graphics", "halfblock")
"""The values of the ``tui.images`` setting."""

_KITTY_TERMS = ("xterm-kitty", "xterm-ghostty")
_SIXEL_PROGRAMS = ("WezTerm", "iTerm.app", "mlterm")

_chosen: Protocol | None = None


def guess_from_environment(env: Mapping[str, str]) -> Protocol | None:
    """The protocol the environment says the terminal draws, without asking it.

    None inside a terminal multiplexer (tmux, screen): what passes through it is
    not the outer terminal's to say.
    """
    if env.get("TMUX") or env.get("STY"):
        return None
    term = env.get("TERM", "")
    program = env.get("TERM_PROGRAM", "")
    if term in _KITTY_TERMS or env.get("KITTY_WINDOW_ID") or program == "ghostty":
        return "kitty"
    if (program in _SIXEL_PROGRAMS or term.startswith(("foot", "mlterm"))
            or env.get("KONSOLE_VERSION")):
        return "sixel"
    return None


def ask_terminal() -> Protocol | None:
    """Ask the terminal which protocol it draws (via ``textual_image``).

    Only before the app starts, and only when standard input and output are both a
    terminal: up to two questions of at most 0.1 s each.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    try:
        from textual_image import renderable  # The import sends the questions.
    except Exception:  # A terminal the questions cannot be sent to (termios refuses).
        return None
    if renderable.Image is renderable.TGPImage:
        return "kitty"
    if renderable.Image is renderable.SixelImage:
        return "sixel"
    return None


def _library_ready() -> bool:
    """Import ``textual_image``'s widgets now, while the cell size can still be measured
    (it is asked once and kept): importing them once the app runs would ask then."""
    try:
        import textual_image.widget  # noqa: F401
    except Exception:
        return False
    return True


def choose(mode: str, env: Mapping[str, str],
           ask: Callable[[], Protocol | None] = ask_terminal) -> Protocol | None:
    """The protocol images are drawn with for the ``tui.images`` ``mode``; None for half blocks.

    Args:
        mode: ``auto``, ``graphics`` or ``halfblock`` (an unknown value counts as auto).
        env: The environment the terminal is described in.
        ask: Asks the terminal itself; called only when ``mode`` calls for it.
    """
    if mode == "halfblock":
        return None
    guess = guess_from_environment(env)
    if mode == "graphics":
        return ask() or guess or "sixel"
    if guess is None:
        return None
    return ask()


def prepare(mode: str, env: Mapping[str, str],
            ask: Callable[[], Protocol | None] = ask_terminal) -> Protocol | None:
    """Choose how images are drawn from now on (the TUI, before the app runs).

    Returns:
        The protocol chosen, or None for half blocks.
    """
    global _chosen
    protocol = choose(mode, env, ask)
    _chosen = protocol if protocol is not None and _library_ready() else None
    return _chosen


def use(protocol: Protocol | None) -> None:
    """Draw images with ``protocol`` from now on (None: half blocks), without asking
    (tests; outside a terminal, where ``textual_image`` asks nothing)."""
    global _chosen
    _chosen = protocol


def chosen() -> Protocol | None:
    """The protocol images are drawn with; None for half blocks."""
    return _chosen
