"""The arguments of an MCP prompt, asked before the prompt is fetched and sent."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from workbench.tui.slash_commands import SlashCommand


class PromptArgumentsScreen(ModalScreen[dict[str, str] | None]):
    """One field per argument of ``command``; dismisses with the values typed (empty
    optional ones left out), or None when cancelled.

    | Key | Does |
    | --- | --- |
    | enter | Next field; on the last one, send. |
    | ctrl+s | Send. |
    | escape | Cancel. |
    """

    CSS_PATH = "prompt_arguments.tcss"
    BINDINGS = [
        Binding("ctrl+s", "send", "Send"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, command: SlashCommand) -> None:
        super().__init__()
        self.command = command

    def compose(self) -> ComposeResult:
        with Vertical(id="arguments-dialog") as dialog:
            dialog.border_title = self.command.name
            if self.command.description:
                yield Static(Content(self.command.description), id="arguments-description")
            with VerticalScroll(id="arguments-fields"):
                for index, argument in enumerate(self.command.arguments):
                    name = str(argument.get("name", ""))
                    label = Content.styled(name, "bold")
                    if argument.get("required"):
                        label = Content.assemble(label, (" *", "$text-error"))
                    if argument.get("description"):
                        label = Content.assemble(label, "  ",
                                                 (str(argument["description"]), "$text-muted"))
                    yield Label(label, classes="argument-label")
                    yield Input(placeholder=name, id=f"argument-{index}")
            yield Static(Content.from_markup(
                "[b]Enter[/b] next field, then send · [b]Esc[/b] cancel · [$text-error]*[/] required"),
                id="arguments-help")

    def on_mount(self) -> None:
        inputs = self.query(Input)
        if inputs:
            inputs.first().focus()

    @on(Input.Submitted)
    def next_field(self, message: Input.Submitted) -> None:
        message.stop()
        inputs = list(self.query(Input))
        index = inputs.index(message.input)
        if index + 1 < len(inputs):
            inputs[index + 1].focus()
        else:
            self.action_send()

    def action_send(self) -> None:
        """Send the values, unless a required one is empty."""
        values: dict[str, str] = {}
        missing = []
        for index, argument in enumerate(self.command.arguments):
            field = self.query_one(f"#argument-{index}", Input)
            value = field.value.strip()
            name = str(argument.get("name", ""))
            field.set_class(bool(argument.get("required")) and not value, "-missing")
            if value:
                values[name] = value
            elif argument.get("required"):
                missing.append(name)
        if missing:
            self.notify(f"Fill in {', '.join(missing)} (required).", severity="warning")
            self.query_one(f"#argument-{self._index_of(missing[0])}", Input).focus()
            return
        self.dismiss(values)

    def _index_of(self, name: str) -> int:
        return next(i for i, a in enumerate(self.command.arguments) if a.get("name") == name)

    def action_cancel(self) -> None:
        """Close without sending."""
        self.dismiss(None)
