"""Workbench events sent to the plugins that subscribe to them (``"events": [...]``,
with ``events.subscribe``): ``POST /events`` with ``{"type", "thread_id", "data"}`` on
the instance of the project the event happened in, when the project enables the plugin.

The events, by the name a manifest subscribes to:

=====================  ====================================================================
``message.created``    a message of a chat ended (``role``, ``text``, ``message_id``)
``agent.status``       a turn of a chat ended (``status``: done, cancelled or error)
``tool.ended``         a tool call ended (``tool``, ``ok``, ``caller``...)
``schedule.ended``     a scheduled run ended (``status``, ``title``, ``error``)
``settings.changed``   ``{"settings"}`` as ``GET /channel`` has them, after a config write
                       or a trust change; only to running instances, without a thread id
=====================  ====================================================================

A project has one instance of a plugin, which its chats share: an event of a chat
carries the chat's session id as ``thread_id`` (``"thread_events": "thread"``, the
default, or ``"both"``); ``"channel"`` sends it without one. Events of hidden chats (the
plugins' own agent runs) are not sent. An event starts an instance that is not running
unless the manifest's ``events_start`` says otherwise (``{}``: never; ``{"settings":
[...], "switches": [...]}``: only while one of those boolean settings is on in the
project, or one of those composer switches is on in the chat); a running
instance gets every event. Delivery is best effort: once, in no set order, 10 s at most,
dropped when the plugin does not take it (an unanswered one counts against its breaker).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from workbench.events import MessageEnded, ScheduleRunEnded, ToolCallEnded, TurnEnded

if TYPE_CHECKING:
    from workbench.core.plugin_service import PluginService
    from workbench.plugins.manifest import PluginManifest
    from workbench.store import Store

log = logging.getLogger(__name__)

NAMES: dict[type, str] = {MessageEnded: "message.created", TurnEnded: "agent.status",
                          ToolCallEnded: "tool.ended", ScheduleRunEnded: "schedule.ended"}
"""The bus's events a plugin may subscribe to, by their names."""


def starts(manifest: PluginManifest, settings: dict[str, Any], switches_on: set[str] | None = None) -> bool:
    """Whether an event may start an instance that is not running (``events_start``)."""
    rule = manifest.raw.get("events_start")
    if not isinstance(rule, dict):
        return True
    named = [s for s in rule.get("settings") or [] if isinstance(s, str)]
    return any(settings.get(s) is True for s in named) or bool(set(rule.get("switches") or []) & (switches_on or set()))


class PluginEvents:
    """Args:
        plugins: The host's plugins (their instances in its project).
        store: To tell the hidden chats of plugin runs.
    """

    def __init__(self, *, plugins: PluginService, store: Store) -> None:
        self.plugins = plugins
        self.store = store
        self.tasks: set[asyncio.Task[Any]] = set()
        self.loop: asyncio.AbstractEventLoop | None = None

    def observe(self, event: Any) -> None:
        """A listener of the host's bus: schedule the delivery of a subscribed event."""
        name = NAMES.get(type(event))
        if name is None:
            return
        try:
            subscribed = [p for p in self.plugins.enabled_here() if name in (p.manifest.raw.get("events") or [])]
        except Exception:  # noqa: BLE001 — the bus never fails for a plugin
            log.exception("plugins' events")
            return
        if not subscribed:
            return
        data = event.to_json()
        data.pop("type", None)
        session = getattr(event, "session_id", None) or ""
        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:  # published from a thread: hand it to the loop that runs the host
            if self.loop is None or self.loop.is_closed():
                return
            self.loop.call_soon_threadsafe(self._spawn, name, data, session, [p.manifest.id for p in subscribed])
            return
        self._spawn(name, data, session, [p.manifest.id for p in subscribed])

    def _spawn(self, name: str, data: dict[str, Any], session: str, plugins: list[str]) -> None:
        task = asyncio.get_running_loop().create_task(self._deliver(name, data, session, plugins))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _deliver(self, name: str, data: dict[str, Any], session: str, plugins: list[str]) -> None:
        if session:
            hidden: bool = await asyncio.to_thread(self.store.is_plugin_run_session, session)
            if hidden:
                return
        switched = await asyncio.to_thread(self.store.plugin_switches, session) if session else {}
        for plugin in plugins:
            try:
                installed = self.plugins.store.get(plugin)
                if installed is None:
                    continue
                mode = installed.manifest.raw.get("thread_events", "thread")
                on = {switch for (owner, switch), state in switched.items() if owner == plugin and state["on"]}
                await self.plugins.send_event(plugin, name, data, thread_id="" if mode == "channel" else session,
                                              start=starts(installed.manifest, self.plugins.applies(plugin).settings,
                                                           on))
            except Exception:  # noqa: BLE001 — best effort: dropped
                log.info("event %s not delivered to plugin %s", name, plugin, exc_info=True)

    async def settled(self) -> None:
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)
