"""What a plugin shows in the terminal: its panes, the cards it posts, its composer
switches — card documents (``workbench.cards``, the Adaptive Cards subset) the faces
draw with their own widgets, and the rows they list.

- **Panes** (``ui.panels``, needs ``ui.panel``): the pane's document is what the plugin
  answers on ``GET /x/panes/{panel}``: ``{"card": <AdaptiveCard>}``, checked as any card
  (a Workbench addition: a browser panel is a web bundle, a terminal one a card). An
  ``Action.Execute`` on it names a tool or an action of the same plugin (``verb``),
  called as the person with the card's data; any other verb is refused.
- **Cards** (``POST /cards`` of the Plugin API, needs ``ui.notification.card``):
  ``{"title": TEXT, "card": <AdaptiveCard>}``; checked, then kept as a notification of
  the drawer (its plain text as the body, unread until the person reads it) with its
  document, and published (``NotificationPosted``) so the unread count follows; at most
  ``CARDS_PER_HOUR`` per plugin (429 past it).
- **Composer switches** (``ui.composer_switches``, needs ``ui.composer_switch``): up to
  four on/off pills per chat of a project that enables the plugin (hidden chats have
  none). Turning one calls ``POST /switches/{id}`` with ``{"on", "thread_id"}``; the
  pill shows the answer (``{"on", "title"}``), or turns back with the error as its
  tooltip. The plugin changes a pill later with ``PUT /composer/switches/{id}``
  (``{"thread_id", "on", "title", "state": "idle|busy|error"}``) and resets it with
  ``DELETE``. Each chat's state is kept in the store, so it is there at the next start.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.cards import Card, CardError, parse_card, plain_text
from workbench.errors import ToolError, WorkbenchError
from workbench.events import NotificationPosted
from workbench.plugins.http import BadAnswer
from workbench.plugins.runtime import PluginUnavailable
from workbench.text import strip

if TYPE_CHECKING:
    from workbench.core.plugin_service import PluginService
    from workbench.plugins.api import Caller
    from workbench.store import Store

MAX_TITLE = 200
MAX_BODY = 4000
CARDS_PER_HOUR = 60
"""A plugin that floods the drawer is answered 429 past this."""
SWITCH_TIMEOUT_S = 10.0
STATES = ("idle", "busy", "error")


@dataclass(frozen=True)
class SwitchRow:
    """One composer switch as a chat's composer shows it."""

    plugin: str
    id: str
    label: str
    title: str
    on: bool
    state: str


@dataclass(frozen=True)
class PaneRow:
    """A pane a plugin offers here."""

    plugin: str
    id: str
    label: str


class PluginUI:
    """Args:
        plugins: The host's plugins.
        store: Cards and switch states.
        publish: The host's bus (``NotificationPosted``).
    """

    def __init__(self, *, plugins: PluginService, store: Store, publish: Any) -> None:
        self.plugins = plugins
        self.store = store
        self.publish = publish
        from workbench.plugins.web import WebPanels

        self.web = WebPanels(folder_of=self._code_of, panels=self._web_panels, bridge=self._bridge)
        """The panels' web bundles on loopback, for a browser (``plugins/web.py``)."""
        plugins.api.handlers[("POST", "/cards")] = self._post_card
        plugins.api.handlers[("PUT", "/composer/switches/{id}")] = self._put_switch
        plugins.api.handlers[("DELETE", "/composer/switches/{id}")] = self._delete_switch

    # --- panes ---------------------------------------------------------------------

    def panes(self) -> list[PaneRow]:
        """The panes of the plugins this project enables, approved for ``ui.panel``."""
        rows = []
        for installed in self.plugins.enabled_here():
            if "ui.panel" not in installed.approved:
                continue
            for panel in (installed.manifest.raw.get("ui") or {}).get("panels") or []:
                rows.append(PaneRow(installed.manifest.id, str(panel["id"]), strip(str(panel.get("label", "")))))
        return rows

    async def pane(self, plugin: str, panel: str) -> Card:
        """The pane's card document, from the plugin.

        Raises:
            WorkbenchError: Not a pane of the plugin here, the plugin gave no answer, or
                its answer is not a card of the subset (named with its JSON pointer).
        """
        if not any(row.plugin == plugin and row.id == panel for row in self.panes()):
            raise WorkbenchError(f"plugin {plugin[:40]} has no pane {panel[:40]!r} in this project")
        status, body = await self.plugins.x(plugin, "GET", f"/panes/{panel}")
        if status != 200 or not isinstance(body, dict) or "card" not in body:
            error = body.get("error") if isinstance(body, dict) else None
            raise WorkbenchError(f"plugin {plugin} did not give its pane {panel}: status {status}"
                                 + (f" ({strip(str(error))[:200]})" if error else ""))
        try:
            return parse_card(body["card"], where=f"plugin {plugin} pane {panel}")
        except CardError as exc:
            raise WorkbenchError(str(exc)) from None

    async def pane_action(self, plugin: str, verb: str, data: dict[str, Any]) -> str:
        """Run an ``Action.Execute`` of the plugin's pane or card, as the person: a tool
        (``data`` its input) or an action of the same plugin. What it answered, as text.

        Raises:
            WorkbenchError: The verb names nothing of the plugin, or the call failed.
        """
        installed = self.plugins.store.get(plugin)
        if installed is None:
            raise WorkbenchError(f"plugin {plugin[:40]} is not installed")
        if installed.manifest.tool(verb) is not None:
            try:
                result = await self.plugins.call_tool(plugin, verb, data)
            except ToolError as exc:
                raise WorkbenchError(exc.message) from None
            texts = [str(c.get("text", "")) for c in result.get("content", []) if c.get("type") == "text"]
            return strip("\n".join(texts))
        if verb in installed.manifest.actions:
            status, body = await self.plugins.run_action(plugin, verb, trigger="manual")
            if not 200 <= status < 300:
                error = body.get("error") if isinstance(body, dict) else body
                raise WorkbenchError(f"plugin {plugin} answered {status}: {strip(str(error))[:300]}")
            return f"{verb}: accepted"
        raise WorkbenchError(f"{verb[:60]!r} is neither a tool nor an action of plugin {plugin}")

    # --- the web bundles ----------------------------------------------------------------

    def _code_of(self, plugin: str) -> Path | None:
        installed = self.plugins.store.get(plugin)
        return installed.code if installed is not None else None

    def _web_panels(self, plugin: str) -> dict[str, str]:
        installed = next((p for p in self.plugins.enabled_here() if p.manifest.id == plugin), None)
        if installed is None or "ui.panel" not in installed.approved:
            return {}
        return {str(p["id"]): str(p["entry"]) for p in (installed.manifest.raw.get("ui") or {}).get("panels") or []}

    async def web_url(self, plugin: str, panel: str) -> str:
        """The link a browser opens a panel's web bundle at (loopback, this host's token).

        Raises:
            WorkbenchError: No such panel of a plugin this project enables.
        """
        try:
            return await self.web.url(plugin, panel)
        except ValueError as exc:
            raise WorkbenchError(str(exc)) from None

    async def _bridge(self, plugin: str, panel: str, method: str, params: Any) -> Any:
        params = params if isinstance(params, dict) else {}
        if method == "api.request":
            path = params.get("path")
            if not isinstance(path, str) or not path.startswith("/"):
                raise ValueError("api.request needs a path under /x, starting with /")
            status, body = await self.plugins.x(plugin, str(params.get("method", "GET")).upper()[:8], path,
                                                params.get("body"))
            return {"status": status, "body": body}
        if method == "settings.get":
            return self.plugins.applies(plugin).settings
        if method == "context.get":
            return {"plugin": plugin, "panel": panel, "project": self.plugins.project()}
        raise ValueError(f"the bridge has no method {method[:40]!r}")

    # --- cards ---------------------------------------------------------------------

    async def _post_card(self, caller: Caller, payload: Any, _param: str) -> tuple[int, Any]:
        if not isinstance(payload, dict) or not isinstance(payload.get("title"), str):
            return 400, {"error": 'a card is {"title": TEXT, "card": <AdaptiveCard>}'}
        title = " ".join(strip(payload["title"]).split())[:MAX_TITLE]
        try:
            card = parse_card(payload.get("card"), where=f"plugin {caller.plugin} card")
        except CardError as exc:
            return 400, {"error": str(exc)}
        recent = await asyncio.to_thread(self.store.plugin_cards_since, caller.plugin,
                                         self.store.clock() - 3600 * 1000)
        if recent >= CARDS_PER_HOUR:
            return 429, {"error": f"plugin {caller.plugin} posted {CARDS_PER_HOUR} cards in the last hour; "
                                  "try again later"}
        installed = self.plugins.store.get(caller.plugin)
        name = installed.manifest.name if installed is not None else caller.plugin
        body = plain_text(card)[:MAX_BODY]
        notification = await asyncio.to_thread(self.store.add_plugin_card, plugin=caller.plugin,
                                               project=caller.project, title=f"{name}: {title}", body=body,
                                               card=payload["card"])
        self.publish(NotificationPosted(id=notification, level="info", title=f"{name}: {title}", body=body,
                                        source=f"plugin:{caller.plugin}"))
        return 201, {"id": notification}

    def card(self, notification_id: int) -> tuple[str, Card] | None:
        """The plugin and card document of a notification a plugin posted (None for
        another notification, or a card whose plugin is gone or no longer approved)."""
        row = self.store.plugin_card(notification_id)
        if row is None:
            return None
        installed = self.plugins.store.get(row["plugin"])
        if installed is None or "ui.notification.card" not in installed.approved:
            return None
        try:
            return row["plugin"], parse_card(row["card"], where=f"plugin {row['plugin']} card")
        except CardError:
            return None

    # --- composer switches ------------------------------------------------------------

    def switches(self, session_id: str) -> list[SwitchRow]:
        """The switches a chat's composer shows, with the chat's state of each."""
        if self.store.is_plugin_run_session(session_id):
            return []
        state = self.store.plugin_switches(session_id)
        rows = []
        for installed in self.plugins.enabled_here():
            if "ui.composer_switch" not in installed.approved:
                continue
            for switch in ((installed.manifest.raw.get("ui") or {}).get("composer_switches") or [])[:4]:
                kept = state.get((installed.manifest.id, switch["id"]), {})
                rows.append(SwitchRow(installed.manifest.id, str(switch["id"]), strip(str(switch["label"]))[:24],
                                      strip(str(kept.get("title") or switch.get("title") or ""))[:200],
                                      bool(kept.get("on", False)), str(kept.get("state", "idle"))))
        return rows

    async def turn_switch(self, session_id: str, plugin: str, switch: str, on: bool) -> SwitchRow:
        """Turn a switch in a chat: the plugin is asked, the chat keeps its answer (or
        the pill turns back, the error as its tooltip).

        Raises:
            WorkbenchError: No such switch in this chat.
        """
        row = next((r for r in self.switches(session_id) if r.plugin == plugin and r.id == switch), None)
        if row is None:
            raise WorkbenchError(f"no switch {switch[:40]!r} of plugin {plugin[:40]} in this chat")
        title, now_on, state = row.title, on, "idle"
        try:
            instance = await self.plugins.instance(plugin)
            answer = await instance.call("POST", f"/switches/{switch}", {"on": on, "thread_id": session_id},
                                         timeout=SWITCH_TIMEOUT_S, max_bytes=64 * 1024)
            body = json.loads(answer.body) if answer.body else {}
            if not 200 <= answer.status < 300:
                raise ValueError(f"answered {answer.status}")
            if isinstance(body, dict):
                now_on = bool(body.get("on", on))
                if isinstance(body.get("title"), str):
                    title = body["title"]
        except (PluginUnavailable, BadAnswer, ValueError) as exc:
            now_on, state, title = row.on, "error", f"{plugin} could not turn {switch}: {exc}"
        title = strip(title)[:200]
        await asyncio.to_thread(self.store.set_plugin_switch, session_id, plugin, switch, on=now_on,
                                title=title, state=state)
        return SwitchRow(plugin, switch, row.label, title, now_on, state)

    async def _put_switch(self, caller: Caller, payload: Any, switch: str) -> tuple[int, Any]:
        installed = self.plugins.store.get(caller.plugin)
        declared = [s["id"] for s in ((installed.manifest.raw.get("ui") or {}).get("composer_switches") or [])] \
            if installed is not None else []
        if switch not in declared:
            return 404, {"error": f"plugin {caller.plugin} declares no composer switch {switch[:40]!r}"}
        if not isinstance(payload, dict) or not isinstance(payload.get("thread_id"), str):
            return 400, {"error": 'a switch update is {"thread_id", "on", "title", "state"}'}
        session = self.store.get_session(payload["thread_id"])
        if session is None:
            return 404, {"error": "no chat of this project has that thread_id"}
        folder = Path(str(session.get("folder") or "")).resolve()
        if not (folder == Path(caller.project) or Path(caller.project) in folder.parents):
            return 404, {"error": "no chat of this project has that thread_id"}
        kept = self.store.plugin_switches(session["id"]).get((caller.plugin, switch), {})
        on = payload.get("on", kept.get("on", False))
        state = payload.get("state", "idle")
        title = payload.get("title", kept.get("title"))
        if not isinstance(on, bool) or state not in STATES or not (title is None or isinstance(title, str)):
            return 400, {"error": 'on must be true or false, state one of "idle", "busy", "error", title text'}
        await asyncio.to_thread(self.store.set_plugin_switch, session["id"], caller.plugin, switch, on=on,
                                title=strip(title)[:200] if title else None, state=state)
        return 200, {"on": on, "state": state}

    async def _delete_switch(self, caller: Caller, payload: Any, switch: str) -> tuple[int, Any]:
        thread = payload.get("thread_id") if isinstance(payload, dict) else None
        count = await asyncio.to_thread(self.store.reset_plugin_switch, caller.plugin, switch,
                                        thread if isinstance(thread, str) else None)
        return 200, {"reset": count}
