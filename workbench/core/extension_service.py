"""Installing, updating, removing and trusting extensions, as the host offers it.

``ExtensionService`` is a service the ``Host`` builds and reaches as ``host.extensions``.
Both faces change extensions through its methods: ``workbench ext …`` and the
TUI's Extensions screen. They hand the work to the home's ``ExtensionManager`` (made
on first use, the same one the host loads extensions with) and, after a change,
rebuild the tool registry when it was already built, so the next turn offers what
is installed now. A change is refused while a turn is streaming: the tools offered
to that turn would change under it.

Everything here blocks (files, the network); a front-end calls it from a thread.
This module imports the ext package and leaves; never a front-end.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import WorkbenchError
from workbench.ext.errors import ExtensionError, InstallDeclined

if TYPE_CHECKING:
    from workbench.core.chats import RunningTurn
    from workbench.core.loading import Loading
    from workbench.core.workspace import Workspace
    from workbench.capabilities.database import ExtensionDatabases
    from workbench.config.home import Home
    from workbench.ext.addons import AddonRow
    from workbench.ext.installed import InstalledExtension
    from workbench.ext.manager import Approve, ExtensionManager
    from workbench.ext.plan import InstallPlan
    from workbench.ext.registry import SearchResult
    from workbench.ext.sources import Source
    from workbench.store import Store

CHANGE_WHILE_STREAMING = (
    "extensions cannot be changed while a turn is streaming: the tools offered to it "
    "would change under it. Wait for the turn to end (or cancel it), then try again.")


class ExtensionService:
    """The extension operations of one host; see the module docstring.

    Args:
        home: The home (its extensions folder).
        store: Where the extensions' state, grants and audit entries are kept.
        databases: The extensions' private databases (dropped with an extension).
        workspace: The host's folder now (relative sources and project folders) and the
            config the registry address is read from.
        loading: The manager is made and a change reloads under its lock; a change
            reloads once the extensions were loaded.
        turn: The turn running (a change is refused then).
    """

    def __init__(self, *, home: Home, store: Store, databases: ExtensionDatabases,
                 workspace: Workspace, loading: Loading, turn: RunningTurn) -> None:
        self.home = home
        self.store = store
        self.databases = databases
        self.workspace = workspace
        self.loading = loading
        self.turn = turn
        self.made: ExtensionManager | None = None
        """The manager, once ``manager`` made it."""

    # --- the manager ---------------------------------------------------------

    def manager(self) -> ExtensionManager:
        """The home's extension manager, made on first use.

        Making it finishes or undoes a change an earlier run was interrupted in; what
        it repaired is in its ``repairs``.
        """
        from workbench.ext.manager import ExtensionManager

        with self.loading.lock:
            if self.made is None:
                self.made = ExtensionManager(
                    self.home, self.store,
                    registry_url=self.workspace.config.settings.extensions.registry,
                    on_removed=self.databases.drop)
            return self.made

    def held_reason(self, name: str) -> str:
        """Why the installed extension ``name`` is held, in the words ``ext list`` uses
        (empty when it is not)."""
        from workbench.ext.manager import ExtensionManager

        manager = self.made or ExtensionManager(self.home, self.store)
        try:
            found = manager.get(name)
        except WorkbenchError:
            return ""
        return found.reason if found.state == "held" else ""

    def prepare(self, *, builtin: bool = True) -> list[str]:
        """Make the manager and (with ``builtin``) install or restore the built-in
        extension, as a command that changes extensions does first.

        Returns:
            What a person should know: the repairs made, and why the built-in could
            not be installed (which does not stop the command).
        """
        manager = self.manager()
        notices = [repair.message for repair in manager.repairs]
        if builtin:
            try:
                manager.ensure_builtin()
            except WorkbenchError as exc:
                notices.append(f"the built-in extension was not installed: {exc}")
        return notices

    def _refuse_while_streaming(self) -> None:
        if self.turn.busy:
            raise ExtensionError(CHANGE_WHILE_STREAMING)

    def _extensions_changed(self) -> None:
        """Rebuild the registry if it was built; a load still running is waited for
        (it may have listed the extensions before the change)."""
        with self.loading.lock:
            if self.loading.loaded:
                self.loading.reload()

    def _source(self, source: str | Source | InstallPlan) -> Source | InstallPlan:
        """A source string parsed against the host's working folder."""
        from workbench.ext.sources import parse_source

        return parse_source(source, cwd=self.workspace.folder) if isinstance(source, str) else source

    def _parsed(self, source: str | Source) -> Source:
        """``_source`` of what can only be a source, not a plan."""
        from workbench.ext.sources import parse_source

        return parse_source(source, cwd=self.workspace.folder) if isinstance(source, str) else source

    # --- installing ----------------------------------------------------------

    def plan_install(self, source: str | Source) -> InstallPlan:
        """Fetch and unpack ``source`` and describe what installing it would approve.

        The files wait in a staging folder until the plan is given to
        :meth:`install` or :meth:`discard_plan`.

        Args:
            source: A folder, a ``.tgz``/``.zip`` archive (relative to the host's
                working folder), or ``npm:NAME[@VERSION]``.

        Raises:
            ExtensionError: The source is unusable, the package cannot be fetched or
                fails its checksum, the archive is unsafe, the extension is invalid or
                already installed (see ``ExtensionManager.plan``). Nothing is kept.
        """
        return self.manager().plan(self._parsed(source))

    def install(self, source: str | Source | InstallPlan,
                approve: Approve) -> InstalledExtension:
        """Install an extension if ``approve`` says yes, then rebuild the registry.

        Args:
            source: A source (see :meth:`plan_install`) or a plan from it.
            approve: Shown the plan; returns True to install.

        Raises:
            InstallDeclined: ``approve`` said no; nothing was installed.
            ExtensionError: See :meth:`plan_install`; also while a turn is streaming.
        """
        try:
            self._refuse_while_streaming()
        except ExtensionError:
            if not isinstance(source, str):
                self._discard_if_plan(source)
            raise
        installed = self.manager().install(self._source(source), approve=approve)
        # A new install starts without it, whatever an earlier one of the name had.
        self.set_hook_rewrite(installed.name, False)
        self._extensions_changed()
        return installed

    def discard_plan(self, plan: InstallPlan) -> None:
        """Delete a plan's staged files without installing them (a person said no)."""
        self.manager().discard(plan)

    def _discard_if_plan(self, source: object) -> None:
        from workbench.ext.plan import InstallPlan

        if isinstance(source, InstallPlan) and source.folder.is_dir():
            self.discard_plan(source)

    # --- updating ------------------------------------------------------------

    def plan_update(self, name: str, *, source: str | Source | None = None) -> InstallPlan:
        """Fetch a new version of ``name`` and describe the update, with the difference
        from what was approved before (``plan.diff``).

        Args:
            name: The installed extension.
            source: Where to fetch it from; its recorded source when None.

        Raises:
            ExtensionError: Not installed, the built-in, no usable source, the source
                holds another extension, or it cannot be fetched.
        """
        found = self._parsed(source) if source is not None else None
        return self.manager().plan_update(name, source=found)

    def update(self, name: str, approve: Approve, *,
               source: str | Source | InstallPlan | None = None) -> InstalledExtension:
        """Install a new version of ``name`` if ``approve`` says yes, then rebuild the registry.

        Args:
            name: The installed extension.
            approve: Shown the plan with its consent diff; returns True to update.
            source: Where to fetch it from, or a plan from :meth:`plan_update`; the
                recorded source when None.

        Raises:
            InstallDeclined: ``approve`` said no; the old version stays as it was.
            ExtensionError: See :meth:`plan_update`; also while a turn is streaming.
        """
        try:
            self._refuse_while_streaming()
        except ExtensionError:
            self._discard_if_plan(source)
            raise
        found = self._source(source) if source is not None else None
        updated = self.manager().update(name, approve=approve, source=found)
        self._extensions_changed()
        return updated

    # --- removing, trusting, switching ----------------------------------------

    def remove(self, name: str) -> None:
        """Uninstall ``name`` with its private database and the memories it shipped,
        then rebuild the registry.

        Raises:
            ExtensionError: Not installed, the built-in, or a turn is streaming.
        """
        self._refuse_while_streaming()
        self.manager().remove(name)
        self._extensions_changed()

    def plan_trust(self, name: str) -> InstallPlan:
        """What trusting ``name`` as it is now would approve: its files that changed
        since the last approval and how its tools and permissions differ. Nothing is
        recorded.

        Raises:
            ExtensionError: Not installed, invalid, or the built-in.
        """
        shown: list[InstallPlan] = []

        def look(plan: InstallPlan) -> bool:
            shown.append(plan)
            return False

        try:
            self.manager().trust(name, approve=look)
        except InstallDeclined:
            pass
        return shown[0]

    def trust(self, name: str, approve: Approve | None = None, *,
              digest: str | None = None) -> InstallPlan:
        """Approve ``name``'s current files so a held extension runs again, then rebuild
        the registry.

        Args:
            name: The installed extension.
            approve: Shown the plan (files changed, consent diff); returns True to
                trust. None trusts without asking.
            digest: The digest of the files the person reviewed (``plan_trust``); the
                trust is refused when the files are no longer those.

        Returns:
            What is now approved.

        Raises:
            InstallDeclined: ``approve`` said no; it stays held.
            ExtensionError: Not installed, invalid, the built-in, its files changed
                since they were reviewed, or a turn is streaming.
        """
        self._refuse_while_streaming()

        def check(plan: InstallPlan) -> bool:
            if digest is not None and plan.digest != digest:
                raise ExtensionError(f"{name}'s files changed since you reviewed them; "
                                     "review them again", where=str(plan.folder))
            return approve(plan) if approve is not None else True

        trusted = self.manager().trust(name, approve=check)
        self._extensions_changed()
        return trusted

    def _project_folder(self, path: str | Path) -> Path:
        """A project extension's folder, relative to the host's working folder."""
        from pathlib import Path

        folder = Path(path).expanduser()
        return folder if folder.is_absolute() else self.workspace.folder / folder

    def plan_project_trust(self, path: str | Path) -> InstallPlan:
        """What consenting to the project extension in ``path`` as it is now would
        approve: its tools with their permissions and reasons, its hooks and what each
        can do, the files that changed and how the consent differs since the last one.
        Nothing is recorded.

        Raises:
            ExtensionError: Not a project extension folder, invalid, or its name is an
                installed extension's.
        """
        shown: list[InstallPlan] = []

        def look(plan: InstallPlan) -> bool:
            shown.append(plan)
            return False

        try:
            self.manager().trust_project(self._project_folder(path), approve=look)
        except InstallDeclined:
            pass
        return shown[0]

    def trust_project(self, path: str | Path, approve: Approve | None = None, *,
                      digest: str | None = None) -> InstallPlan:
        """Consent to a project extension's current files (``workbench ext trust PATH``,
        the Extensions screen), so it runs in its trusted project, then rebuild the
        registry. The consent is per extension and per content: when its files change
        it is held again.

        Args:
            path: Its folder, ``.workbench/extensions/NAME`` (relative to the host's
                working folder) or absolute.
            approve: Shown the plan; returns True to consent. None consents without asking.
            digest: The digest of the files the person reviewed; refused when they are
                no longer those.

        Raises:
            InstallDeclined: ``approve`` said no; it stays held.
            ExtensionError: See :meth:`plan_project_trust`; also when its files changed
                since they were reviewed, or while a turn is streaming.
        """
        self._refuse_while_streaming()

        def check(plan: InstallPlan) -> bool:
            if digest is not None and plan.digest != digest:
                raise ExtensionError(f"{plan.name}'s files changed since you reviewed them; "
                                     "review them again", where=str(plan.folder))
            return approve(plan) if approve is not None else True

        trusted = self.manager().trust_project(self._project_folder(path),
                                                         approve=check)
        self._extensions_changed()
        return trusted

    def set_hook_rewrite(self, extension: str, allowed: bool) -> None:
        """Allow (or take back) the ``hooks.rewrite`` grant of an extension: whether its
        ``on_tool_call`` hook may rewrite the arguments of other extensions' tools.

        Off unless a person allows it, at install or trust (``--allow-hook-rewrite``,
        the TUI's question after the review); ``grants explain hook:NAME`` shows it.

        Args:
            extension: The extension's identity: an installed one's name, a project
                one's ``project:FOLDER``.
            allowed: True to grant it for good, False to take it back.
        """
        from workbench.core.gateway import REWRITE_GRANT
        from workbench.hooks.registry import rewrite_key

        key = rewrite_key(extension)
        if allowed:
            self.store.add_grant(key, REWRITE_GRANT.kind, REWRITE_GRANT.value, "always")
            self.store.audit("person", "grant.always", key,
                             {"permissions": [REWRITE_GRANT.to_json()]})
        elif self.store.revoke_grants(key, REWRITE_GRANT.kind, REWRITE_GRANT.value):
            self.store.audit("person", "grant.revoke", key,
                             {"kind": REWRITE_GRANT.kind, "value": REWRITE_GRANT.value})

    def switch(self, name: str, enabled: bool) -> None:
        """Switch an installed extension on or off in every chat (``ext enable|disable``),
        then rebuild the registry.

        Raises:
            ExtensionError: Not installed, or a turn is streaming.
        """
        self._refuse_while_streaming()
        self.get(name)
        self.store.set_extension_enabled(name, enabled)
        self.store.audit("person", f"extension.{'enable' if enabled else 'disable'}", name)
        self._extensions_changed()

    # --- reading ---------------------------------------------------------------

    def installed(self) -> list[InstalledExtension]:
        """Every installed extension by name, with its state (``ok``, ``held``,
        ``broken``) and the reason it is not ``ok``."""
        return self.manager().list()

    def here(self) -> list[InstalledExtension]:
        """The installed extensions, then the host's project's own ones, each with its
        origin (``installed``, ``project PATH``) and state (a project one is also
        ``conflict`` when it takes an installed extension's name)."""
        manager = self.manager()
        return manager.list() + manager.project_extensions(self.workspace.folder)

    def get(self, name: str) -> InstalledExtension:
        """One installed extension with its state.

        Raises:
            ExtensionError: It is not installed.
        """
        return self.manager().get(name)

    def addons(self) -> list[AddonRow]:
        """The add-ons shipped with workbench, each with whether it is installed here
        (from its shipped folder), by id."""
        from workbench.ext.addons import AddonRow, addon_of, catalog

        installed = {found.name: found for found in self.manager().list()}
        rows = []
        for shipped in catalog():
            found = installed.get(shipped.id)
            mine = found is not None and addon_of(found.source, found.name)
            rows.append(AddonRow(id=shipped.id, display_name=shipped.display_name,
                                 description=shipped.description, installed=mine,
                                 version=found.version if mine and found else ""))
        return rows

    def search(self, words: Sequence[str] = (), limit: int = 20) -> list[SearchResult]:
        """Find extension packages on the registry (the ``extensions.registry`` setting).

        Raises:
            RegistryError: The registry cannot be reached or answers nonsense.
        """
        return self.manager().search(list(words), limit=limit)
