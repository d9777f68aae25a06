"""The app as the snapshot tests run it: a fresh home, a scripted model, no blinking.

Built with ``workbench.tui.app.open_app``, the factory the CLI uses, so the snapshots
show the real app. The model file is named relative to the working folder so that
the header reads the same on every machine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from visible import settled, wait_until

from workbench.tui.app import WorkbenchApp, open_app
from workbench.tui.widgets.prompt_input import PromptInput

__all__ = ["SIZE", "SMALL", "make_app", "no_cursor_blink", "send_prompt", "start_prompt", "wait_until"]

SIZE = (100, 30)
SMALL = (80, 24)


def make_app(folder: Path, replies: list[dict[str, Any]]) -> WorkbenchApp:
    """An app in ``folder`` whose model replays ``replies``; the caller closes ``app.host``."""
    (folder / "replies.json").write_text(json.dumps(replies), encoding="utf-8")
    return open_app(model="scripted:replies.json", cwd=folder)


async def no_cursor_blink(pilot: Pilot) -> None:
    """Keep the prompt's cursor steadily on, so screenshots do not depend on timing."""
    pilot.app.chat.query_one(PromptInput).cursor_blink = False
    await settled(pilot)


async def send_prompt(pilot: Pilot, text: str) -> None:
    """Type ``text``, press Enter, and wait until the turn has ended."""
    app = pilot.app
    await no_cursor_blink(pilot)
    await pilot.press(*text, "enter")
    await wait_until(pilot, lambda: not app.chat.busy)
    await app.workers.wait_for_complete()
    await settled(pilot)


async def start_prompt(pilot: Pilot, text: str) -> None:
    """Type ``text`` and press Enter without waiting for the turn to end."""
    await no_cursor_blink(pilot)
    await pilot.press(*text, "enter")
