"""Open the TUI: ``workbench`` with no subcommand.

Textual and the core are imported inside ``open_tui`` so that the rest of the CLI
starts without them.
"""

from __future__ import annotations

import os

import typer

from workbench.cli.errors import reported


def open_tui(model: str | None) -> None:
    """Open the host with the TUI's responder, run the app, then close the host.

    Args:
        model: The model spec from ``--model``; the configured model when None.

    Raises:
        typer.Exit: With the error's exit code when the host cannot be opened
            (after ``error: …`` on stderr), or with the app's non-zero return code.
    """
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
