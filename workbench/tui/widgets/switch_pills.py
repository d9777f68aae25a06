"""Plugins' composer switches as pills above the prompt: up to four per plugin, each a
button ``● Label`` (on) or ``○ Label`` (off) whose tooltip is its title; dim when off,
the accent when on, red on error, a dashed border while busy. Pressing one posts
``SwitchPills.Turned``; the chat screen asks the core (``host.plugin_ui.turn_switch``)
and gives the answer back with ``show``. Labels and titles are outside text, drawn as
plain content (``workbench.text.strip`` was applied by the core).
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Button


class SwitchPills(Horizontal):
    """The pills of one chat."""

    DEFAULT_CSS = """
    SwitchPills { height: auto; margin: 0 1; }
    SwitchPills Button { min-width: 8; height: 1; border: none; margin-right: 1; color: $text-muted;
                         background: $panel; }
    SwitchPills Button.-on { color: $text-accent; text-style: bold; }
    SwitchPills Button.-error { color: $text-error; }
    SwitchPills Button.-busy { border: dashed $secondary; height: 3; }
    """

    class Turned(Message):
        """The person pressed a pill: turn ``switch`` of ``plugin`` to ``on``."""

        def __init__(self, plugin: str, switch: str, on: bool) -> None:
            super().__init__()
            self.plugin = plugin
            self.switch = switch
            self.on = on

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[Any] = []

    def compose(self) -> ComposeResult:
        return iter(())

    async def show(self, rows: list[Any]) -> None:
        """Draw ``rows`` (``SwitchRow``s), replacing the pills shown."""
        self.rows = list(rows)
        await self.remove_children()
        buttons = []
        for index, row in enumerate(self.rows):
            button = Button(Content(f"{'●' if row.on else '○'} {row.label}"), id=f"pill-{index}",
                            compact=True)
            button.tooltip = row.title or None
            button.set_classes(" ".join(c for c in ("-on" if row.on else "", f"-{row.state}") if c))
            buttons.append(button)
        await self.mount_all(buttons)
        self.display = bool(self.rows)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        index = int(str(event.button.id).removeprefix("pill-"))
        row = self.rows[index]
        event.button.label = Content(f"{'○' if row.on else '●'} {row.label}")  # the click, until the answer
        self.post_message(self.Turned(row.plugin, row.id, not row.on))
