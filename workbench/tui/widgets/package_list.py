"""Packages found on the registry: name and version, then the description."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import on
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from workbench.core.extension_views import SearchResult


def _prompt(result: SearchResult) -> Content:
    head = Content.assemble((result.name, "bold"), " ", (result.version or "-", "dim"))
    if not result.description:
        return head
    return Content.assemble(head, "\n", (result.description, "dim"))


class PackageList(OptionList):
    """Search results; Enter posts ``Chosen`` for the package under the cursor.

    | Key | Action |
    | --- | --- |
    | up, down | Move between packages |
    | enter | Post ``Chosen`` (the screen offers to install it) |
    """

    @dataclass
    class Chosen(Message):
        """Enter was pressed on ``result``."""

        package_list: PackageList
        result: SearchResult

        @property
        def control(self) -> PackageList:
            return self.package_list

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.results: list[SearchResult] = []
        """What the list shows, in order."""

    def show(self, results: Sequence[SearchResult]) -> None:
        """Show ``results`` with the cursor on the first."""
        self.results = list(results)
        self.set_options(Option(_prompt(result), id=result.name) for result in self.results)
        self.highlighted = 0 if self.results else None

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = event.option_index
        if 0 <= index < len(self.results):
            self.post_message(self.Chosen(self, self.results[index]))
