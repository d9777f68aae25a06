"""Markdown for chat messages: one Rich renderable per message, in the theme's colors.

Textual's ``Markdown`` widget mounts a widget per block (a reply with a list is a
dozen widgets, about 25 ms to mount), which a long conversation cannot afford while
the person scrolls through it. A message is drawn instead by one widget that renders
Rich's Markdown, in the colors of the app's theme (its variables) and with headings
kept to the left, as a chat reads.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown
from rich.style import Style
from rich.syntax import Syntax
from rich.theme import Theme
from textual.color import Color, ColorParseError

MARKDOWN_STYLES: dict[str, str] = {
    "markdown.h1": "bold $text-primary",
    "markdown.h2": "bold $text-primary",
    "markdown.h3": "bold $text-secondary",
    "markdown.h4": "bold $text-secondary",
    "markdown.h5": "bold $text-secondary",
    "markdown.h6": "bold $text-secondary",
    "markdown.code": "$text-accent on $surface",
    "markdown.code_block": "on $surface",
    "markdown.block_quote": "italic $text-secondary",
    "markdown.link": "underline $text-primary",
    "markdown.link_url": "underline $text-primary",
    "markdown.item.bullet": "bold $text-secondary",
    "markdown.item.number": "bold $text-secondary",
    "markdown.list": "$text-secondary",
    "markdown.hr": "$secondary",
    "markdown.table.border": "$secondary",
    "markdown.table.header": "bold $text-secondary",
}
"""Rich's markdown style names, in words and the theme's variables (``$name``)."""

CODE_THEMES = {True: "github-dark", False: "default"}
"""The Pygments theme of code blocks, for dark and light themes."""


def markdown_theme(variables: Mapping[str, str]) -> Theme:
    """A Rich theme for ``ChatMarkdown`` from a Textual theme's variables.

    A variable that is not a plain color (``auto 60%``) is left out of its style.
    """
    def color(name: str) -> str:
        try:
            return Color.parse(variables.get(name, "")).hex
        except ColorParseError:
            return ""

    styles = {}
    for name, spec in MARKDOWN_STYLES.items():
        words = [color(word[1:]) if word.startswith("$") else word for word in spec.split()]
        kept = [w for i, w in enumerate(words)
                if w and not (w == "on" and (i + 1 == len(words) or not words[i + 1]))]
        styles[name] = Style.parse(" ".join(kept) or "none")
    return Theme(styles, inherit=True)


class _Heading(Heading):
    """A heading on the left (Rich centres the first level)."""

    LEVEL_ALIGN = dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left")


class _CodeBlock(CodeBlock):
    """A code block on the theme's code background, with a one-column margin."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        block = console.get_style("markdown.code_block", default="none")
        background = block.bgcolor.name if block.bgcolor is not None else None
        yield Syntax(str(self.text).rstrip(), self.lexer_name, theme=self.theme, word_wrap=True,
                     padding=(0, 1), background_color=background)


class ChatMarkdown(Markdown):
    """A message's Markdown, rendered with ``theme`` in force.

    Args:
        markup: The Markdown text.
        theme: The styles for Rich's ``markdown.*`` names (``markdown_theme``).
        dark: Whether the background is dark (picks the code blocks' colors).
    """

    elements = {**Markdown.elements, "heading_open": _Heading, "fence": _CodeBlock,
                "code_block": _CodeBlock}

    def __init__(self, markup: str, theme: Theme, *, dark: bool = True) -> None:
        super().__init__(markup, code_theme=CODE_THEMES[dark], hyperlinks=True)
        self.theme = theme

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # The console renders what this yields while the generator is suspended
        # inside the ``with``, so the theme holds for every nested element.
        with console.use_theme(self.theme):
            yield from super().__rich_console__(console, options)

