"""The broker: which of a tool's requirements are granted, what to ask, and recording answers.

Grants are per tool (keyed by the tool's qualified name ``EXTENSION.TOOL``), never
shared with a sibling tool of the same extension. Scopes: ``once`` (this call only,
kept nowhere but the audit log), ``session`` (this chat session), ``always``, and
``deny`` (refused from now on without asking).

Optional entries (``"optional": true`` in the manifest) are asked for with the
required ones, the first time they are undecided: no grant of any scope, no denial,
not declined in this session. The person may leave them out; what was left out is
kept with the answer's lifetime (``once``: asked again at the next call; ``session``:
not again this session; ``always``: a lasting denial, taken back with
``grants revoke``). A tool runs without an optional entry it was not granted; a
denial of one never refuses the call.

A path (``read``, ``write``) is pinned when it is asked for: the path it resolves to
and the device and inode there (``sandbox/paths.py``); so is a ``run`` binary, by the
file it resolves to (checked by path alone, so that an upgrade keeps it granted). The request shows the
resolved path when it differs from the declared one; the answer keeps the pin with
the grant (a ``once`` grant's in memory, for its call), and ``granted`` hands it on,
so that a worker starts only on the very object the person granted. A lasting grant
recorded before paths were pinned is pinned at its next use.

One exception to "per tool": an entry naming the chat's folder (``$project``, a
Workbench addition) is asked for once for the extension's tools that declare it alike.
The request names them (``covers``), and an answer for the chat or always records the
same grant, pinned alike, for each of them, each under its own key (so each shows in
``grants explain`` and is revoked on its own). ``once`` and ``deny`` stay with the tool
that asked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from workbench.events import PermissionRequest, RequestDenied
from workbench.permissions.requirements import PATH_KINDS, Requirement, on_this_system, project_words
from workbench.sandbox.paths import PathChanged, Pin, pin_path
from workbench.sandbox.policy import resolve_binary

SCOPES = ("once", "session", "always", "deny")


class GrantStore(Protocol):
    def add_grant(self, tool: str, kind: str, value: str, scope: str,
                  session_id: str | None = None,
                  pin: tuple[str, int, int] | None = None) -> int: ...

    def pin_grant(self, grant_id: int, resolved: str, device: int, inode: int) -> None: ...

    def list_grants(self, tool: str | None = None) -> list[dict[str, Any]]: ...

    def add_declines(self, tool: str, entries: list[tuple[str, str]], session_id: str) -> None: ...

    def list_declines(self, tool: str) -> set[tuple[str, str, str]]: ...

    def remove_declines(self, tool: str, kind: str | None = None,
                        value: str | None = None) -> int: ...

    def audit(self, actor: str, action: str, subject: str | None = None,
              detail: Any = None) -> int: ...


class Refusal(Exception):
    """A call may not run: required ``requirements`` are ``state`` (``refused earlier``,
    ``not granted``, ``denied``…). The caller turns it into its own error."""

    def __init__(self, state: str, requirements: list[Requirement]) -> None:
        super().__init__(state)
        self.state = state
        self.requirements = requirements


@dataclass(frozen=True)
class Pending:
    """What one call has to ask the person for."""

    required: list[Requirement]
    """Required entries with no standing grant: the call cannot run without them."""
    optional: list[Requirement]
    """Optional entries the person never decided."""
    pins: dict[str, Pin] = field(default_factory=dict)
    """What each path entry (by key) was when it was asked for."""

    def __bool__(self) -> bool:
        return bool(self.required or self.optional)

    @property
    def entries(self) -> list[Requirement]:
        return self.required + self.optional

    def shown(self) -> list[dict[str, Any]]:
        """The request's ``permissions``: each entry's JSON with its ``key`` (and, for a
        path that leads elsewhere through links, the ``resolved`` path that is granted;
        for the chat's folder, ``project`` and the words ``shown``)."""
        shown = []
        for r in self.entries:
            entry = {**r.to_json(), "key": r.key}
            if r.project:
                entry["project"] = True
                entry["shown"] = project_words(r.value)
            pin = self.pins.get(r.key)
            if pin is not None and pin.path != r.value:
                entry["resolved"] = pin.path
            shown.append(entry)
        return shown


def pin_of(grant: dict[str, Any]) -> Pin | None:
    """The pin a stored grant row carries, if any."""
    if grant.get("resolved") is None:
        return None
    return Pin(str(grant["resolved"]), int(grant.get("device") or 0), int(grant.get("inode") or 0))


Ask = Callable[[PermissionRequest], Awaitable[Any]]


def _pin_now(req: Requirement) -> Pin | None:
    """What ``req`` names now, pinned: a path as it is, a ``run`` binary by the file
    it is found as; None for other kinds (and a binary not found).

    Raises:
        PathChanged: A link appeared while it was being pinned.
    """
    if req.kind in PATH_KINDS:
        return pin_path(req.value)
    if req.kind == "run":
        binary = resolve_binary(req.value)
        return pin_path(binary) if binary is not None else None
    return None


class Broker:
    """Answers "is this granted?" from the store, and records decisions.

    Optional entries declined for a session are kept in the store with that session
    (and go with it), so a chat resumed in another process is not asked again.
    """

    def __init__(self, store: GrantStore) -> None:
        self.store = store
        self._once_pins: dict[tuple[str, str, str], Pin] = {}
        """Pins of the paths granted ``once``, by ``(tool, kind, value)``: taken by
        the ``granted`` of the call the answer was given for."""

    def _declined(self, tool: str, req: Requirement, session_id: str | None) -> bool:
        """Whether the optional ``req`` was left out in the chat ``session_id``."""
        return session_id is not None and (req.kind, req.value, session_id) in (
            self.store.list_declines(tool))

    def _matching(self, tool: str, req: Requirement, session_id: str | None) -> list[dict[str, Any]]:
        return [g for g in self.store.list_grants(tool)
                if g["kind"] == req.kind and g["value"] == req.value
                and (g["scope"] != "session" or g["session_id"] == session_id)]

    @staticmethod
    def _extra(req: Requirement, extra: set[tuple[str, str]]) -> bool:
        return (req.kind, req.value) in extra or (req.kind, "*") in extra

    def denied(self, tool: str, reqs: Iterable[Requirement], session_id: str | None) -> list[Requirement]:
        """The required entries the person refused for good (a refused optional one
        only leaves the tool without it)."""
        return [r for r in reqs if not r.optional
                and any(g["scope"] == "deny" for g in self._matching(tool, r, session_id))]

    def missing(self, tool: str, reqs: Iterable[Requirement], session_id: str | None,
                extra: Iterable[tuple[str, str]] = ()) -> list[Requirement]:
        """The non-optional requirements with no standing grant.

        Args:
            tool: The tool's qualified name.
            reqs: Its requirements.
            session_id: The chat session, for session-scoped grants.
            extra: ``(kind, value)`` pairs granted for this call alone (``value`` may
                be ``"*"`` for every value of that kind).
        """
        extra = set(extra)
        return [r for r in reqs if not r.optional and not self._extra(r, extra)
                and not any(g["scope"] in ("session", "always")
                            for g in self._matching(tool, r, session_id))]

    def undecided(self, tool: str, reqs: Iterable[Requirement], session_id: str | None,
                  extra: Iterable[tuple[str, str]] = ()) -> list[Requirement]:
        """The optional requirements the person never decided: no grant of any scope
        (nor one for this call), no denial, not declined in this session."""
        extra = set(extra)
        return [r for r in reqs if r.optional and not self._extra(r, extra)
                and not self._matching(tool, r, session_id)
                and not self._declined(tool, r, session_id)]

    def pending(self, tool: str, reqs: Iterable[Requirement], session_id: str | None,
                extra: Iterable[tuple[str, str]] = ()) -> Pending:
        """What a call of ``tool`` has to ask for: the missing required entries and
        the undecided optional ones."""
        reqs = list(reqs)
        return Pending(self.missing(tool, reqs, session_id, extra),
                       self.undecided(tool, reqs, session_id, extra))

    def granted(self, tool: str, reqs: Iterable[Requirement], session_id: str | None,
                extra: Iterable[tuple[str, str]] = ()) -> list[Requirement]:
        """The requirements with a standing grant or a grant for this call alone, each
        with its ``standing`` and, for a path, its ``pin`` (a standing grant's own;
        a ``once`` answer's; none for a grant the caller passed in, which
        ``build_policy`` pins as the worker starts)."""
        extra = set(extra)
        found = []
        for req in reqs:
            standing = [g for g in self._matching(tool, req, session_id)
                        if g["scope"] in ("session", "always")]
            if standing:
                pin = self._standing_pin(req, standing[-1])
                found.append(replace(req, pin=pin, standing=True))
            elif self._extra(req, extra):
                found.append(replace(req, pin=self._once_pins.pop((tool, req.kind, req.value), None)))
        return found

    def _standing_pin(self, req: Requirement, grant: dict[str, Any]) -> Pin | None:
        pin = pin_of(grant)
        if pin is None:
            # Granted before paths were pinned: pinned now, at its first use since.
            pin = _pin_now(req)
            if pin is not None:
                self.store.pin_grant(int(grant["id"]), pin.path, pin.device, pin.inode)
        return pin

    def _pin(self, pending: Pending) -> Pending:
        """``pending`` with its path entries pinned as they are now.

        Raises:
            Refusal: A path changed while it was being pinned.
        """
        pins = {}
        for req in pending.entries:
            try:
                pin = _pin_now(req)
            except PathChanged as exc:
                raise Refusal(f"not granted: {exc}", [req]) from None
            if pin is not None:
                pins[req.key] = pin
        return replace(pending, pins=pins)

    def record(self, tool: str, reqs: Iterable[Requirement], scope: str,
               session_id: str | None, pins: dict[str, Pin] | None = None) -> None:
        """Keep a decision, with each path's pin (by key) when given; ``once`` keeps
        nothing beyond the call (its pins, in memory, for the call)."""
        if scope not in SCOPES:
            raise ValueError(f"unknown grant scope {scope!r}")
        pins = pins or {}
        if scope == "once":
            for req in reqs:
                if req.key in pins:
                    self._once_pins[(tool, req.kind, req.value)] = pins[req.key]
            return
        for req in reqs:
            pin = pins.get(req.key) if scope != "deny" else None
            self.store.add_grant(tool, req.kind, req.value, scope,
                                 session_id if scope == "session" else None,
                                 pin=(pin.path, pin.device, pin.inode) if pin else None)

    def decline(self, tool: str, reqs: Iterable[Requirement], scope: str,
                session_id: str | None) -> None:
        """Keep optional entries the person left out, for ``scope``'s lifetime:
        ``once`` keeps nothing, ``session`` keeps them with the chat (nothing
        without one), ``always`` and ``deny`` record a lasting denial."""
        if scope not in SCOPES:
            raise ValueError(f"unknown grant scope {scope!r}")
        reqs = list(reqs)
        if scope in ("always", "deny"):
            self.record(tool, reqs, "deny", None)
        elif scope == "session" and session_id is not None:
            self.store.add_declines(tool, [(r.kind, r.value) for r in reqs], session_id)

    def forget(self, tool: str, kind: str | None = None, value: str | None = None) -> None:
        """Drop the session declines of ``tool`` (of one kind, of one value), as
        ``grants revoke`` drops its grants and denials."""
        self.store.remove_declines(tool, kind, value)

    async def settle(self, tool: str, reqs: list[Requirement], session_id: str | None, *,
                     ask: Ask, extra: Iterable[tuple[str, str]] = (),
                     prompt: bool = True,
                     covers: dict[str, list[Requirement]] | None = None) -> set[tuple[str, str]]:
        """Settle ``reqs`` before a call, asking the person when allowed.

        One ``PermissionRequest`` holds the missing required entries and the undecided
        optional ones. An answer's ``declined`` keys leave optional entries out; the
        scope applies to the rest. Denying (or no answer) refuses the call when a
        required entry is missing, and otherwise runs it without the optional ones.

        Args:
            tool: The grants' key (a tool's qualified name, a provider's key).
            reqs: The requirements to settle.
            session_id: The chat session.
            ask: Sends the request to the person; returns a ``PermissionAnswer`` (or
                a decision) or raises ``RequestDenied``.
            extra: ``(kind, value)`` pairs granted for this call alone.
            prompt: Whether the person may be asked; when false, a missing required
                entry refuses the call and undecided optional ones are left out.
            covers: Other grant keys with the ``$project`` entries they declare alike
                (see the module docstring); those still missing are named in the
                request and granted with a ``session`` or ``always`` answer.

        Returns:
            The ``(kind, value)`` pairs granted for this call alone by the answer.

        Raises:
            Refusal: A required entry is refused, not granted or denied.
        """
        refused = self.denied(tool, reqs, session_id)
        if refused:
            raise Refusal("refused earlier", refused)
        pending = self.pending(tool, reqs, session_id, extra)
        if not pending:
            return set()
        if not prompt:
            if pending.required:
                raise Refusal("not granted", pending.required)
            return set()
        pending = self._pin(pending)
        asked = {(r.kind, r.value) for r in pending.entries if r.project}
        covered = {other: missing for other, theirs in (covers or {}).items()
                   if (missing := [r for r in self.missing(other, theirs, session_id)
                                   if (r.kind, r.value) in asked])}
        try:
            answer = await ask(PermissionRequest(tool=tool, permissions=pending.shown(),
                                                 session_id=session_id, covers=sorted(covered)))
        except RequestDenied as exc:
            if pending.required:
                raise Refusal(f"denied ({exc.reason})", pending.required) from exc
            self.decline(tool, pending.optional, "session", session_id)
            self.store.audit("person", "grant.declined", tool,
                             {"permissions": [r.to_json() for r in pending.optional],
                              "scope": "session", "reason": exc.reason})
            return set()
        decision = getattr(answer, "decision", answer)
        keys = set(getattr(answer, "declined", ()) or ())
        if decision == "deny":
            self.record(tool, pending.entries, "deny", session_id)
            self.store.audit("person", "grant.deny", tool,
                             {"permissions": [r.to_json() for r in pending.entries]})
            if pending.required:
                raise Refusal("denied", pending.required)
            return set()
        if decision not in SCOPES:
            raise ValueError(f"unknown grant scope {decision!r}")
        kept_out = [r for r in pending.required if r.key in keys]
        if kept_out:
            raise Refusal("declined", kept_out)
        declined = [r for r in pending.optional if r.key in keys]
        accepted = [r for r in pending.entries if r.key not in keys]
        self.record(tool, accepted, decision, session_id, pending.pins)
        self.decline(tool, declined, decision, session_id)
        self.store.audit("person", f"grant.{decision}", tool,
                         {"permissions": [r.to_json() for r in accepted],
                          "declined": [r.to_json() for r in declined]})
        if decision in ("session", "always"):
            given = {(r.kind, r.value): r.key for r in accepted if r.project}
            for other, missing in covered.items():
                shared = [r for r in missing if (r.kind, r.value) in given]
                if not shared:
                    continue
                self.record(other, shared, decision, session_id,
                            {r.key: pending.pins[given[(r.kind, r.value)]] for r in shared
                             if given[(r.kind, r.value)] in pending.pins})
                self.store.audit("person", f"grant.{decision}", other,
                                 {"permissions": [r.to_json() for r in shared],
                                  "with": tool})
        return {(r.kind, r.value) for r in accepted}

    def explain(self, tool: str, reqs: Iterable[Requirement],
                session_id: str | None = None) -> list[dict[str, Any]]:
        """Each requirement's state for ``grants explain``: ``not applicable`` (a ``run``
        entry whose binary is not on this system), ``granted``, ``denied``,
        ``not granted`` (required, never granted), ``undecided`` (optional, never
        asked or asked only once) or ``declined`` (optional, left out in the chat, or in any chat without one),
        with the grant behind it; an entry naming the chat's folder also has ``project``."""
        grants = self.store.list_grants(tool)
        declines = self.store.list_declines(tool)
        rows = []
        for req in reqs:
            if not on_this_system(req):
                rows.append({**req.to_json(), "key": req.key, "state": "not applicable",
                             "grant": None})
                continue
            matches = [g for g in grants if g["kind"] == req.kind and g["value"] == req.value]
            lasting = [g for g in matches if g["scope"] in ("always", "deny")]
            sessions = [g for g in matches if g["scope"] == "session"
                        and (session_id is None or g["session_id"] == session_id)]
            grant = (lasting or sessions or [None])[-1]
            if grant is not None:
                state = "denied" if grant["scope"] == "deny" else "granted"
            elif req.optional:
                declined = any((kind, value) == (req.kind, req.value)
                               and session_id in (None, chat) for kind, value, chat in declines)
                state = "declined" if declined else "undecided"
            else:
                state = "not granted"
            rows.append({**req.to_json(), "key": req.key, "state": state, "grant": grant,
                         **({"project": True} if req.project else {})})
        return rows
