"""The list of slash commands shown above the prompt while a ``/command`` is typed."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from workbench.tui.slash_commands import SlashCommand


class SlashMenu(OptionList, can_focus=False):
    """The commands matching what is typed; the prompt keeps the focus and forwards
    Up, Down, Tab, Enter and Escape (``PromptInput.MenuKey``). A click chooses one
    (``OptionList.OptionSelected``, with the command's name as the option id).
    """

    DEFAULT_CSS = """
    SlashMenu {
        height: auto;
        max-height: 8;
        margin: 0 1;
        border: round $primary 60%;
        border-title-color: $text-primary;
        background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.commands: list[SlashCommand] = []
        """The commands listed, in order."""
        self.border_title = "commands"

    def show(self, commands: Sequence[SlashCommand]) -> None:
        """List ``commands`` with the first highlighted."""
        self.commands = list(commands)
        self.set_options(Option(self._prompt(command), id=command.name)
                         for command in self.commands)
        self.highlighted = 0 if self.commands else None

    @staticmethod
    def _prompt(command: SlashCommand) -> Content:
        name = Content.styled(command.name, "bold $text-primary")
        if command.arguments:
            names = " ".join(f"<{a.get('name', '')}>" for a in command.arguments)
            name = Content.assemble(name, " ", (names, "$text-secondary"))
        if not command.description:
            return name
        return Content.assemble(name, "  ", (command.description, "$text-muted"))

    @property
    def chosen(self) -> SlashCommand | None:
        """The highlighted command."""
        if self.highlighted is None or not 0 <= self.highlighted < len(self.commands):
            return None
        return self.commands[self.highlighted]
