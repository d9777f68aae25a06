"""How the TUI looks: SVG snapshots under the top-level ``snapshots/`` folder.

Accept intended changes with ``pytest tests/snapshot --snapshot-update``.
"""

from __future__ import annotations

import pytest
from app_factory import SIZE, SMALL, no_cursor_blink, send_prompt, start_prompt, wait_until

from workbench.config.files import set_setting
from workbench.config.home import Home
from workbench.tui.screens.permission import PermissionScreen

WORD_COUNT = [
    {"tool_calls": [{"name": "word_count", "arguments": {"text": "the quick brown fox"}}]},
    {"text": "Your text has **4 words** on one line:\n\n- words: 4\n- characters: 19"},
]

READ_FILE = [
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "~/notes.txt"}}]},
    {"text": "I was not allowed to read it."},
]


class TestChat:
    """The chat screen: empty, and after a turn with a tool call."""

    def test_empty_chat(self, snap_compare, snapshot_app) -> None:
        """The chat screen before the first prompt."""
        assert snap_compare(snapshot_app([]), terminal_size=SIZE, run_before=no_cursor_blink)

    def test_reply_with_tool_card(self, snap_compare, snapshot_app) -> None:
        """A prompt, a finished tool-call card, and the Markdown reply."""

        async def run_before(pilot) -> None:
            await send_prompt(pilot, "How many words in: the quick brown fox?")

        assert snap_compare(snapshot_app(WORD_COUNT), terminal_size=SIZE, run_before=run_before)

    def test_reply_with_tool_card_small(self, snap_compare, snapshot_app) -> None:
        """The same conversation in an 80x24 terminal."""

        async def run_before(pilot) -> None:
            await send_prompt(pilot, "How many words in: the quick brown fox?")

        assert snap_compare(snapshot_app(WORD_COUNT), terminal_size=SMALL, run_before=run_before)


class TestToolPermission:
    """Asking for a tool's permission, and the card after a refusal."""

    @pytest.fixture(autouse=True)
    def _project_under_home(self, workdir, monkeypatch) -> None:
        # The project the prompt names is the chat's folder, shown from the home folder
        # (~/work) so that it comes out the same every run.
        monkeypatch.setenv("HOME", str(workdir.parent))

    def test_prompt_shown(self, snap_compare, snapshot_app) -> None:
        """The permission prompt over the chat when a tool needs a grant."""

        async def run_before(pilot) -> None:
            await start_prompt(pilot, "What is in my notes?")
            await wait_until(pilot, lambda: isinstance(pilot.app.screen, PermissionScreen))

        assert snap_compare(snapshot_app(READ_FILE), terminal_size=SIZE, run_before=run_before)

    def test_denied_call_fails_in_its_card(self, snap_compare, snapshot_app) -> None:
        """After Deny, the card shows the refusal and the model answers."""

        async def run_before(pilot) -> None:
            await start_prompt(pilot, "What is in my notes?")
            await wait_until(pilot, lambda: isinstance(pilot.app.screen, PermissionScreen))
            await pilot.press("d")
            await wait_until(pilot, lambda: not pilot.app.chat.busy)
            await pilot.app.workers.wait_for_complete()

        assert snap_compare(snapshot_app(READ_FILE), terminal_size=SIZE, run_before=run_before)


class TestChatLight(TestChat):
    """The chat screen in workbench-light: the same scenes."""

    @pytest.fixture(autouse=True)
    def _light(self, workdir) -> None:
        set_setting(Home.resolve().ensure(), workdir, "theme", "workbench-light")


class TestToolPermissionLight(TestToolPermission):
    """Asking for a permission, and the refused card, in workbench-light."""

    @pytest.fixture(autouse=True)
    def _light(self, workdir) -> None:
        set_setting(Home.resolve().ensure(), workdir, "theme", "workbench-light")
