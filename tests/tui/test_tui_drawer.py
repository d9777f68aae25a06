"""Pilot tests of the notification drawer and the unread count in the chat's header."""

from __future__ import annotations

from shell_helpers import footer_keys, open_screen, options_of, settle, text_of
from textual.widgets import OptionList

from workbench.supervisor.launch import notify
from workbench.tui.screens.drawer import NotificationDrawer

SIZE = (80, 24)


def unread_shown(app) -> str:
    """The unread count as the chat's header shows it ("" when there is none)."""
    return text_of(app.chat.query_one("#chat-unread")).strip()


def fail_a_run(host, title: str = "Daily digest") -> int:
    """A run of a schedule that fails, and the notification the supervisor posts for it
    (``supervisor.launch.notify``, as the launcher calls it)."""
    schedule = host.schedules.add_schedule(title=title, instruction="Summarize.",
                                 schedule={"kind": "interval", "everyMinutes": 60})
    run_id = host.store.add_run(schedule["id"], title, fired_by="schedule", due_at=None)
    host.store.start_run(run_id, owner="1@elsewhere")
    host.store.finish_run(run_id, "failed", error="the run's process exited with status 1")
    notify(host.store, host.bus.publish, host.store.get_run(run_id))
    return run_id


async def test_unread_count_in_the_header_and_marking_read(make_app, until) -> None:
    app = make_app([])
    app.host.store.add_notification("warning", "Scheduled run paused: Inbox sweep",
                                     "it needed read ~/mail", source="scheduler")
    app.host.store.add_notification("error", "Scheduled run failed: Backup",
                                    "timed out after 900 s", source="scheduler")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: unread_shown(app) == "✉ 2 unread · ^n")
        drawer = await open_screen(pilot, until, "ctrl+n", NotificationDrawer)
        listed = drawer.query_one(OptionList)
        await until(pilot, lambda: listed.option_count == 2)
        shown = options_of(listed)
        assert shown[0].startswith("✖ Scheduled run failed: Backup  new\n")
        assert "scheduler" in shown[0] and "timed out after 900 s" in shown[0]
        assert shown[1].startswith("▲ Scheduled run paused: Inbox sweep  new")
        assert text_of(drawer.query_one("#drawer-summary")) == "2 unread of 2"
        await pilot.press("enter")
        await until(pilot, lambda: len(app.host.schedules.notifications(unread_only=True)) == 1)
        await until(pilot, lambda: text_of(drawer.query_one("#drawer-summary")) == "1 unread of 2")
        assert "  new" not in options_of(listed)[0]
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.chat)
        await until(pilot, lambda: unread_shown(app) == "✉ 1 unread · ^n")
        await open_screen(pilot, until, "ctrl+n", NotificationDrawer)
        await pilot.press("a")
        await until(pilot, lambda: not app.host.schedules.notifications(unread_only=True))
        await settle(pilot, until)
        assert text_of(app.screen.query_one("#drawer-summary")) == "All 2 read"
        await pilot.press("ctrl+n")
        await until(pilot, lambda: app.screen is app.chat)
        await until(pilot, lambda: unread_shown(app) == "")


async def test_a_new_notification_arrives_live(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, until)
        assert unread_shown(app) == ""
        run_id = fail_a_run(app.host)
        await until(pilot, lambda: unread_shown(app) == "✉ 1 unread · ^n")
        drawer = await open_screen(pilot, until, "ctrl+n", NotificationDrawer)
        listed = drawer.query_one(OptionList)
        await until(pilot, lambda: listed.option_count == 1)
        assert f"run {run_id}" in options_of(listed)[0]
        # While the drawer is open, another one is added at the top.
        fail_a_run(app.host, "Weekly report")
        await until(pilot, lambda: listed.option_count == 2)
        assert options_of(listed)[0].startswith("✖ Scheduled run failed: Weekly report  new")
        await until(pilot, lambda: text_of(drawer.query_one("#drawer-summary")) == "2 unread of 2")


async def test_an_empty_drawer_says_what_it_is_for(make_app, until) -> None:
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        drawer = await open_screen(pilot, until, "ctrl+n", NotificationDrawer)
        await until(pilot, lambda: "Nothing yet" in text_of(drawer.query_one("#drawer-summary")))
        await until(pilot, lambda: "a" not in footer_keys(drawer))
        assert footer_keys(drawer) == {"esc": "Close"}


async def test_events_before_the_first_screen_and_after_the_last_are_followed_quietly(
        make_app, until) -> None:
    """The scheduler and the bus publish on their own time: an event may reach the app
    while it has no screen yet or none any more (it is closing); it is counted, never an
    error, and the keys that open screens are off until there is one."""
    from workbench.events import NotificationPosted
    from workbench.events import ProcessStateChanged
    from workbench.tui.app import ShellEvent

    app = make_app([])
    started = ProcessStateChanged(name="scheduler", old="starting", new="running", pid=1,
                                  reason="holding the scheduler lock")
    assert app.screen_stack == []
    app.on_shell_event(ShellEvent(started))
    assert app.check_action("open", ("tools",)) is False
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.screen is app.chat)
        assert app.check_action("open", ("tools",)) is True
    assert app.screen_stack == []
    app.on_shell_event(ShellEvent(started))
    app.on_shell_event(ShellEvent(NotificationPosted(id=1, level="info", title="Done", body="",
                                                     source="scheduler")))
    assert app.check_action("open", ("tools",)) is False
