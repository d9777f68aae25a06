"""A turn the disk cut short reads as failed in the TUI's history, not as a whole one."""

from __future__ import annotations

from workbench.tui.widgets.message_list import history_entries


def test_the_mark_of_a_failed_turn_is_shown_as_an_error_and_other_system_messages_are_not():
    rows = [
        {"role": "system", "name": "hook_context", "content": "[hook context]\nhidden"},
        {"role": "user", "content": "count these"},
        {"role": "assistant", "content": "Counting.", "tool_calls": None},
        {"role": "system", "name": "turn_failed",
         "content": "[turn failed] the disk holding the store was full"},
    ]
    shown = [(e.kind, e.role, e.text) for e in history_entries(rows)]
    assert shown == [("message", "user", "count these"), ("message", "assistant", "Counting."),
                     ("notice", "error", "[turn failed] the disk holding the store was full")]
