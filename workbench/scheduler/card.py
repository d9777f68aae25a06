"""The run card: what a schedule's runs may use, frozen when the schedule is made.

A card holds the model, the extensions switched on, the grants the person approved
for the schedule (``(tool, kind, value)``), the folder runs start in, and what a run
does when it needs something outside the card: ``fail`` or ``pause``. A run uses
exactly its card. Its grants become standing grants of the run's own session, so
any request that still reaches the run's responder asks for something outside the
card; ``CardResponder`` refuses it at once, records what was needed and lets the
run end — nothing ever waits for a person who is not there.

Imports only leaves (the events and their requests).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.config.settings import DEFAULTS
from workbench.events import AskUserRequest, Event, PermissionRequest, Request, RequestDenied, ToolCallEnded

ON_NEED = ("fail", "pause")


@dataclass(frozen=True)
class CardGrant:
    """One permission approved for a schedule's runs: ``tool`` may use ``kind value``."""

    tool: str
    kind: str
    value: str


@dataclass(frozen=True)
class RunCard:
    """See the module docstring.

    Attributes:
        model: The model spec runs use (``echo``, ``openai:gpt-4o-mini``…).
        extensions: The extensions switched on; every other one is off in a run.
        grants: The approved permissions.
        on_need: ``fail`` or ``pause`` when a run needs something outside the card.
        cwd: The folder runs start in (where the schedule was made).
        frozen_at: When the card was frozen, unix milliseconds.
        frozen_by: ``person`` (made or edited by someone) or ``supervisor`` (a
            proposal saved without one, frozen when first seen).
    """

    model: str
    extensions: tuple[str, ...] = ()
    grants: tuple[CardGrant, ...] = ()
    on_need: str = DEFAULTS.schedule.on_need
    cwd: str = ""
    frozen_at: int = 0
    frozen_by: str = "person"

    def __post_init__(self) -> None:
        if self.on_need not in ON_NEED:
            raise ValueError(f"on_need must be one of {', '.join(ON_NEED)}, not {self.on_need!r}")

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["extensions"] = list(self.extensions)
        data["grants"] = [asdict(g) for g in self.grants]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunCard:
        return cls(model=str(data["model"]), extensions=tuple(data.get("extensions") or ()),
                   grants=tuple(CardGrant(str(g["tool"]), str(g["kind"]), str(g.get("value", "")))
                                for g in data.get("grants") or ()),
                   on_need=str(data.get("on_need") or "fail"), cwd=str(data.get("cwd") or ""),
                   frozen_at=int(data.get("frozen_at") or 0),
                   frozen_by=str(data.get("frozen_by") or "person"))

    def with_grants(self, grants: list[CardGrant] | tuple[CardGrant, ...]) -> RunCard:
        """A copy with ``grants`` added (each once)."""
        merged = list(self.grants)
        merged += [g for g in grants if g not in merged]
        return RunCard(**{**self.__dict__, "grants": tuple(merged)})


def grants_needed(needs: list[dict[str, Any]] | None) -> list[CardGrant]:
    """The permissions a run's needs asked for, as card grants (what approving adds)."""
    return [CardGrant(need["tool"], p["kind"], str(p.get("value", "")))
            for need in needs or () if need.get("kind") == "permission"
            for p in need.get("permissions") or ()]


def apply_card(store, session_id: str, card: RunCard, *, known: set[str], always_on: str,
               default_off: frozenset[str] = frozenset()) -> None:
    """Make a run's session use exactly ``card``: every ``known`` extension it does not
    name is switched off (``always_on``, the host's own tools, stays), every one it names
    of ``default_off`` (the first-party add-ons, off in a chat until switched on) on, and
    its grants become standing grants of that session."""
    for name in sorted(known - set(card.extensions) - {always_on}):
        store.set_session_extension(session_id, name, False)
    for name in sorted(known & set(card.extensions) & default_off):
        store.set_session_extension(session_id, name, True)
    for grant in card.grants:
        store.add_grant(grant.tool, grant.kind, grant.value, "session", session_id)


def need_of(request: Request) -> dict[str, Any]:
    """What a request outside the card asked for, for the run's record and notification."""
    if isinstance(request, PermissionRequest):
        listed = ", ".join(f"{p['kind']} {p.get('value', '')}".strip() for p in request.permissions)
        return {"kind": "permission", "tool": request.tool, "permissions": list(request.permissions),
                "summary": f"{request.tool} asked for a permission outside the card: {listed}"}
    if isinstance(request, AskUserRequest):
        return {"kind": "ask_user", "tool": request.tool,
                "summary": f"{request.tool} asked a question, and no one is there to answer"}
    tool = getattr(request, "tool", "")
    return {"kind": request.kind, "tool": tool,
            "summary": f"{tool or 'the run'} made a {request.kind} request, which a run cannot answer"}


def need_of_refusal(tool: str, error: dict[str, Any]) -> dict[str, Any]:
    """What a call refused for a missing permission needed (one refused for good, say)."""
    return {"kind": "permission", "tool": tool, "permissions": list(error.get("missing") or []),
            "summary": f"{tool} was refused: {error.get('message', 'permission')}"}


@dataclass
class CardResponder:
    """The responder of a scheduled run: every request is outside the card, so each one
    is refused at once, recorded in ``needs``, and reported to ``on_need`` (which ends
    the run)."""

    consumer = "schedule"
    """Whom a model's calls serve here (``ToolGateway.consumer``)."""

    on_need: Callable[[dict[str, Any]], None] = lambda need: None
    needs: list[dict[str, Any]] = field(default_factory=list)

    async def answer(self, request: Request) -> Any:
        need = need_of(request)
        self.needs.append(need)
        self.on_need(need)
        raise RequestDenied(f"outside this schedule's run card — {need['summary']}")

    def observe(self, event: Event) -> None:
        """See every event of the run: a call refused for a permission without asking
        (one the person denied for good) is a need too."""
        if (isinstance(event, ToolCallEnded) and not event.ok and event.error
                and event.error.get("kind") == "permission" and not self.needs):
            self.needs.append(need_of_refusal(event.tool, event.error))
            self.on_need(self.needs[-1])

    def outcome(self, *, on_need: str, run_id: int, turn_status: str,
                turn_error: str | None) -> tuple[str, str | None]:
        """The run's status and error, from what it needed and how its turn ended."""
        if self.needs:
            listed = "; ".join(need["summary"] for need in self.needs)
            if on_need == "pause":
                return "paused", (f"paused: {listed}. Approve and continue: "
                                  f"`workbench runs resume {run_id} --approve`")
            return "failed", f"needs approval: {listed}"
        if turn_status == "done":
            return "ok", None
        return "failed", turn_error or f"the turn ended {turn_status}"
