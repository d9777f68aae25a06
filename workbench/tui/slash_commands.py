"""The chat's slash commands: the built-in ones and the MCP servers' prompts.

Typing ``/`` in the prompt offers them; ``matching`` orders them for what was typed.
An MCP prompt's command is ``/mcp__SERVER__PROMPT`` (``host.mcp.prompts`` names it).
After ``/model `` the menu offers the models the chat can switch to
(``host.chat_models.model_choices``), each as a command that names its spec (``model_commands``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SlashCommand:
    """One command the prompt offers after ``/``."""

    name: str
    """What is typed, with its slash: ``/new``, ``/mcp__everything__args-prompt``."""
    description: str
    server: str | None = None
    """The MCP server whose prompt this is; None for a built-in command."""
    prompt: str | None = None
    """The MCP prompt's name."""
    arguments: tuple[Mapping[str, Any], ...] = ()
    """The prompt's arguments: ``name``, ``description``, ``required``."""
    model_spec: str | None = None
    """For a model offered after ``/model ``: the spec it switches the chat to."""
    takes_argument: bool = False
    """Whether Tab completes it with a space, for what follows (``/model SPEC``)."""

    @property
    def is_prompt(self) -> bool:
        return self.server is not None


BUILTIN_COMMANDS = (
    SlashCommand("/new", "Start a new chat"),
    SlashCommand("/sessions", "Switch to an earlier chat and continue it"),
    SlashCommand("/model", "Switch this chat's model: /model NAME (Tab completes the names)",
                 takes_argument=True),
    SlashCommand("/copy", "Copy the latest reply to the clipboard"),
    SlashCommand("/help", "The slash commands and the chat's keys"),
)


def prompt_commands(rows: Iterable[Mapping[str, Any]]) -> list[SlashCommand]:
    """Commands for the rows of ``host.mcp.prompts``."""
    return [SlashCommand(row["command"], str(row.get("description") or ""), server=row["server"],
                         prompt=row["name"], arguments=tuple(row.get("arguments") or ()))
            for row in rows]


MODEL = "/model"


def model_commands(rows: Iterable[Mapping[str, Any]]) -> list[SlashCommand]:
    """Menu entries for the rows of ``host.chat_models.model_choices``."""
    return [SlashCommand(f"{MODEL} {row['spec']}", str(row.get("description") or ""),
                         model_spec=str(row["spec"])) for row in rows]


def matching(commands: Iterable[SlashCommand], typed: str) -> list[SlashCommand]:
    """The commands for ``typed`` (``/``, ``/se``…): those starting with it first, then
    those containing it, each group in the given order."""
    typed = typed.lower()
    word = typed.lstrip("/")
    starting, containing = [], []
    for command in commands:
        name = command.name.lower()
        if name.startswith(typed):
            starting.append(command)
        elif word and word in name:
            containing.append(command)
    return starting + containing


def find(commands: Iterable[SlashCommand], name: str) -> SlashCommand | None:
    """The command named exactly ``name`` (case-insensitive), if any."""
    name = name.lower()
    return next((c for c in commands if c.name.lower() == name), None)
