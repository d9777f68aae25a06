"""What the shell's Pilot tests read off the screen, and how they get to a screen."""

from __future__ import annotations

from collections.abc import Callable

from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets._footer import FooterKey
from textual.worker import WorkerCancelled
from visible import drawn, settled


def text_of(widget: Widget) -> str:
    """Every line the widget and its ``Static``/``Label`` children show, joined."""
    statics = [widget] if isinstance(widget, Static) else []
    statics += list(widget.query(Static))
    return "\n".join(str(static.render()) for static in statics)


def options_of(option_list: OptionList) -> list[str]:
    """The text of each option a list shows."""
    return [str(option_list.get_option_at_index(index).prompt)
            for index in range(option_list.option_count)]


def footer_keys(screen: Screen) -> dict[str, str]:
    """What the screen's footer shows: key as shown -> description, the enabled ones."""
    return {key.key_display: key.description for key in screen.query(FooterKey)
            if not key.has_class("-disabled")}


async def open_screen(pilot: Pilot, until: Callable, key: str, kind: type[Screen]) -> Screen:
    """Press ``key`` and wait until a screen of ``kind`` is on top, mounted and drawn."""
    app = pilot.app
    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, kind) and drawn(app))
    return app.screen


async def settle(pilot: Pilot, until: Callable) -> None:
    """Let the workers that read and write finish (one made obsolete by a newer one is
    cancelled: that is fine), and wait until the screen has handled what they sent it
    and drawn what they changed."""
    while True:
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:
            continue
        break
    await settled(pilot)


def palette_listed(app, first: str = "") -> CommandList | None:
    """The command palette's list once its search has ended and its first hit starts
    with ``first`` (what a person sees), or None until then."""
    palette = app.screen
    if not isinstance(palette, CommandPalette) or not palette.has_class("-ready"):
        return None  # not on top, or its first search has not ended
    if any(worker.group == CommandPalette._GATHER_COMMANDS_GROUP and not worker.is_finished
           for worker in app.workers):
        return None  # searching for what was typed
    results = palette.query_one(CommandList)
    if not results.option_count or not options_of(results)[0].startswith(first):
        return None
    return results
