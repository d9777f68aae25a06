"""The ``Store``: every table's queries on one connection to ``workbench.db``.

Each table group's queries live in their own module as a mixin over ``StoreBase``;
this module only puts them together. Nothing outside the store package writes SQL.
"""

from __future__ import annotations

from workbench.store.audit import AuditMixin
from workbench.store.changes import ChangesMixin
from workbench.store.consents import ConsentsMixin
from workbench.store.extensions import ExtensionsMixin
from workbench.store.grants import GrantsMixin
from workbench.store.leases import LeasesMixin
from workbench.store.manifest_checks import ManifestChecksMixin
from workbench.store.memories import MemoriesMixin
from workbench.store.plugin_runs import PluginRunsMixin
from workbench.store.projects import ProjectExtensionsMixin
from workbench.store.runs import RunsMixin
from workbench.store.schedules import SchedulesMixin
from workbench.store.sessions import SessionsMixin
from workbench.store.switches import SwitchesMixin
from workbench.store.toolcalls import ToolCallsMixin
from workbench.store.turns import TurnsMixin


class Store(LeasesMixin, SessionsMixin, ToolCallsMixin, GrantsMixin, ExtensionsMixin, ConsentsMixin,
            MemoriesMixin, SchedulesMixin, RunsMixin, SwitchesMixin, ProjectExtensionsMixin,
            AuditMixin, TurnsMixin, ChangesMixin, ManifestChecksMixin, PluginRunsMixin):
    """The workbench database: sessions (with their extension switches and the lease of
    the turn running in each), messages, tool calls, grants, extensions (with their files and consents), memories, schedules (with
    their run cards, runs and notifications), audit.

    Open it with ``Store.open(home.db_path)`` and close it when done (or use it as
    a context manager). Group writes that belong together in ``transaction()``.
    """

    @classmethod
    def open(cls, path):
        """``StoreBase.open``, then the room kept for a turn the disk cuts short
        (``reserve.py``), made when there is room for it."""
        store = super().open(path)
        store.reserve.ensure()
        return store
