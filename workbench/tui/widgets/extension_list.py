"""The installed extensions as a list: each with its version and a state badge."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import on
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from workbench.core.extension_views import InstalledExtension

BADGE_STYLES = {"ok": "$text-success", "held": "bold $text-warning", "broken": "bold $text-error"}
"""How each state's badge is drawn."""


def state_badge(extension: InstalledExtension) -> Content:
    """``ok``, ``held`` or ``broken`` in its colour, or ``off`` for a switched-off one."""
    if extension.ok and not extension.enabled:
        return Content.styled("off", "dim")
    return Content.styled(extension.state, BADGE_STYLES.get(extension.state, ""))


def _prompt(extension: InstalledExtension) -> Content:
    return Content.assemble(
        (extension.name, "bold"), " ", (extension.version or "-", "dim"), "\n",
        state_badge(extension), " ", (extension.display_name, "dim"))


class ExtensionList(OptionList):
    """The installed extensions, two lines each: name and version, then the state
    badge and display name. Posts ``Highlighted`` as the cursor moves.

    | Key | Action |
    | --- | --- |
    | up, down | Move between extensions |
    | enter | Post ``Chosen`` (the screen shows the details) |
    """

    @dataclass
    class Highlighted(Message):
        """The cursor moved to ``extension`` (None when the list is empty)."""

        extension_list: ExtensionList
        extension: InstalledExtension | None

        @property
        def control(self) -> ExtensionList:
            return self.extension_list

    @dataclass
    class Chosen(Message):
        """Enter was pressed on ``extension``."""

        extension_list: ExtensionList
        extension: InstalledExtension

        @property
        def control(self) -> ExtensionList:
            return self.extension_list

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.extensions: list[InstalledExtension] = []
        """What the list shows, in order."""

    @property
    def selected(self) -> InstalledExtension | None:
        """The extension under the cursor."""
        index = self.highlighted
        if index is None or not 0 <= index < len(self.extensions):
            return None
        return self.extensions[index]

    def show(self, extensions: Sequence[InstalledExtension], *, select: str | None = None) -> None:
        """Show ``extensions``, keeping the cursor on ``select`` (else on the extension
        it was on, else on the first)."""
        keep = select or (self.selected.name if self.selected else None)
        self.extensions = list(extensions)
        self.set_options(Option(_prompt(extension), id=extension.name)
                         for extension in self.extensions)
        names = [extension.name for extension in self.extensions]
        self.highlighted = names.index(keep) if keep in names else (0 if names else None)
        # The cursor may land on the index it had; say so anyway, as what is there changed.
        self.post_message(self.Highlighted(self, self.selected))

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(self.Highlighted(self, self.selected))

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.selected is not None:
            self.post_message(self.Chosen(self, self.selected))
