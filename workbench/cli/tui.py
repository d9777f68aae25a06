"""Open the TUI: ``workbench`` with no subcommand.

Textual and the core are imported inside ``open_tui`` so that the rest of the CLI
starts without them; the core not even there, but in the app's thread, once its
first frame (the prompt box) is on the screen.
"""

from __future__ import annotations

import os

import typer

from workbench.cli.errors import reported


def open_tui(model: str | None) -> None:
    """Run the app, which opens the host after its first frame, then close the host.

    A terminal whose environment names one that draws images is asked which way it
    does before the app runs, from the ``tui.images`` setting: there the host is
    opened first (``terminal_graphics``).

    Args:
        model: The model spec from ``--model``; the configured model when None.

    Raises:
        typer.Exit: With the error's exit code when the host cannot be opened or its
            model started (after ``error: …`` on stderr, once the screen has closed),
            or with the app's non-zero return code.
    """
    from workbench.tui.widgets.bubbles import terminal_graphics

    if terminal_graphics.guess_from_environment(os.environ) is not None:
        _open_then_run(model)
        return
    from workbench.tui.app import open_later

    app = open_later(model=model)
    try:
        app.run()
    finally:
        host = app.wait_opened()
        if host is not None:
            host.close()
    with reported():
        app.raise_opening_error()
    if app.return_code:
        raise typer.Exit(app.return_code)


def _open_then_run(model: str | None) -> None:
    """Open the host, ask the terminal what it draws (``tui.images``), run the app."""
    from workbench.tui.app import open_app
    from workbench.tui.widgets.bubbles import terminal_graphics

    with reported():
        app = open_app(model=model)
    with app.host:
        with reported():
            # An unknown model or a broken model file is reported here, before the
            # screen opens, rather than at the first prompt.
            app.host.default_model.provider()
        # Before the app runs: a terminal's answer to "which images do you draw?"
        # arrives as keyboard input, which Textual reads once it runs.
        terminal_graphics.prepare(app.host.config.settings.tui.images, os.environ)
        app.run()
    if app.return_code:
        raise typer.Exit(app.return_code)
