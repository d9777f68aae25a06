"""Pilot: a shell call in a chat (a real sandboxed command), its card offering to undo
the change set it applied, and ``u`` on the focused card undoing it through
``Host.changes`` — the same core ``workbench changes undo`` calls."""

from __future__ import annotations

from textual.widgets import Static
from visible import screen_text, until_screen, until_shown

from workbench.tui.screens.permission import PermissionScreen
from workbench.tui.widgets.tool_call_card import ToolCallCard

SIZE = (90, 28)


def shell_turn(command: str) -> list[dict]:
    return [{"text": "Running it.", "tool_calls": [{"name": "shell", "arguments": {"command": command}}]},
            {"text": "Done."}]


async def test_u_on_a_shell_calls_card_undoes_its_change_set(make_app, until, workdir) -> None:
    (workdir / "notes.txt").write_text("before\n")
    app = make_app(shell_turn("echo after > notes.txt; echo made > new.txt"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"change the notes", "enter")
        await until_screen(pilot, PermissionScreen, timeout=30)
        await pilot.press("o")  # run bash, for this call
        await until(pilot, lambda: not app.chat.busy and not app.host.chats.busy, timeout=60)
        card = await until_shown(pilot, lambda: app.chat.query_one(ToolCallCard).ok is not None
                                 and app.chat.query_one(ToolCallCard))
        assert card.ok is True, card.outcome
        assert (workdir / "notes.txt").read_text() == "after\n"
        change_set = card.state.change_set
        assert isinstance(change_set, int)
        assert f"undo change set {change_set} (u)" in screen_text(app)

        await pilot.press("ctrl+up")
        if app.focused is not card:
            await pilot.press("up")
        assert app.focused is card
        # A word typed on the focused card is typing: "u" asks, the next letter says no,
        # and both reach the prompt; nothing is undone.
        await pilot.press("u")
        await until_shown(pilot, lambda: f"Undo change set {change_set}? u again undoes it"
                          in screen_text(app))
        await pilot.press(*"se it")
        await until_shown(pilot, lambda: app.chat.prompt_input.text == "use it")
        assert "u again undoes it" not in screen_text(app)
        assert (workdir / "notes.txt").read_text() == "after\n"
        assert app.host.changes.show(change_set)["state"] != "undone"
        # Esc says no too and comes back to the prompt.
        card.focus()
        await pilot.press("u", "escape")
        await until_shown(pilot, lambda: app.focused is app.chat.prompt_input)
        assert app.chat.prompt_input.text == "use it"
        assert (workdir / "notes.txt").read_text() == "after\n"
        # An arrow says no and moves on, as it would have.
        card.focus()
        await pilot.press("u")
        await until_shown(pilot, lambda: "u again undoes it" in screen_text(app))
        await pilot.press("down")
        await until_shown(pilot, lambda: "u again undoes it" not in screen_text(app))
        assert app.chat.prompt_input.text == "use it"
        assert app.host.changes.show(change_set)["state"] != "undone"
        # u, then u again, undoes.
        card.focus()
        await pilot.press("u", "u")
        await until(pilot, lambda: card.state.undone, timeout=30)
        assert (workdir / "notes.txt").read_text() == "before\n"
        assert not (workdir / "new.txt").exists()
        assert app.host.changes.show(change_set)["state"] == "undone"
        line = str(card.query_one(".tool-call-card--change", Static).render())
        assert f"change set {change_set}: undone" in line
        await pilot.press("u")  # once undone, there is nothing more to undo
        await until_shown(pilot, lambda: app.host.changes.show(change_set)["state"] == "undone")


async def test_the_network_card_answers_once_for_this_chat_or_deny(make_app, until) -> None:
    import asyncio

    from workbench.events import NetworkRequest, RequestDenied
    from workbench.tui.screens.network import NetworkScreen

    app = make_app([{"text": "hi"}])
    request = NetworkRequest(tool="shell", host="pypi.org", port=443, session_id=None,
                             command="pip install requests")
    async with app.run_test(size=SIZE) as pilot:
        for key, expected in (("o", "once"), ("c", "chat"), ("d", "deny"), ("escape", "deny")):
            asking = asyncio.ensure_future(app.host.responder.answer(request))
            await until(pilot, lambda: isinstance(app.screen, NetworkScreen)
                        and "pypi.org" in screen_text(app), timeout=30)
            text = screen_text(app)
            assert "pypi.org" in text and "port 443" in text and "pip install requests" in text
            assert "Allow once" in text and "Allow for this chat" in text and "Deny" in text
            await pilot.press(key)
            try:
                answer = await asyncio.wait_for(asking, 30)
            except RequestDenied:
                answer = "refused"
            assert answer == expected
