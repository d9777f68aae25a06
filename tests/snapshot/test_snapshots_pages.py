"""How the Pages screen looks: an extension's page, its card drawn with the TUI's widgets.

Accept intended changes with ``pytest tests/snapshot --snapshot-update``.
"""

from __future__ import annotations

from pathlib import Path

from app_factory import SIZE, no_cursor_blink, wait_until
from page_samples import install_samples
from visible import settled

from workbench.tui.screens.pages import PagesScreen


class TestPages:
    """The Pages screen (F5)."""

    def test_page_with_a_form(self, snap_compare, snapshot_app, tmp_path: Path) -> None:
        """The planner's page: heading, facts, a table of items, a form and its buttons."""
        install_samples(tmp_path / "src")
        app = snapshot_app([])

        async def run_before(pilot) -> None:
            await no_cursor_blink(pilot)
            await pilot.app.host.pages.act("planner", "main", "item-add", {"title": "Call Anna", "done": "true"})
            await pilot.press("f5")
            await wait_until(pilot, lambda: isinstance(pilot.app.screen, PagesScreen)
                             and pilot.app.screen.card_view is not None)
            await pilot.app.workers.wait_for_complete()
            await settled(pilot)

        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
