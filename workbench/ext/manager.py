"""The ``ExtensionManager``: install, update, remove, trust, list and verify extensions.

Every change is staged in a private folder under ``<home>/staging`` (see
:mod:`workbench.ext.fetch`) and committed by one ``rename`` into
``<home>/extensions/<name>``; the store records the extension, its files and the
person's consent in one transaction right after (:mod:`workbench.ext.commit`). A
journal written before the rename lets the next start finish or undo a change a
kill interrupted (:mod:`workbench.ext.recovery`), so no half-installed extension is
ever listed. Nothing here runs an extension's code.

An extension's dependencies are resolved while it is staged, after it was
validated and before the person is asked (the plan lists them), into the staging
folder; they move into ``<home>/cache`` with the commit, and leave with a removal
(:mod:`workbench.ext.dependencies`). A failure refuses the install and leaves
nothing behind.

This module imports the config, manifest and store packages and ``workbench.ext``;
never the core, the tool registry or a front-end.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from workbench import __version__
from workbench.config.home import Home
from workbench.ext.commit import CRASH_ENV, Committer
from workbench.ext.consent import diff_consent
from workbench.ext.dependencies import (
    DEFAULT_TIMEOUT_S,
    STAGED,
    Dependency,
    check_unchanged,
    installed_dependencies,
    resolve_dependencies,
    restore_interrupted,
    sweep_orphans,
)
from workbench.ext.discovery import (PROJECT_EXTENSIONS, DiscoveredExtension, discover,
                                     extension_folders)
from workbench.ext import addons
from workbench.ext.errors import ExtensionError, InstallDeclined
from workbench.ext.fingerprint import Fingerprint, FingerprintCheck, compare, fingerprint
from workbench.ext.manifest_checks import ManifestChecks
from workbench.ext.installed import (
    BUILTIN_NAME,
    InstalledExtension,
    check_name,
    inspect_installed,
    invalid_message,
    manifest_json,
    record_installed,
)
from workbench.ext.plan import DEFAULT_VERSION, InstallPlan, PlanAction, build_plan, read_version
from workbench.ext.project import (carry_over, is_project_identity, kept_under_name,
                                   project_consent, project_identity, trust_command)
from workbench.ext.recovery import Repair, recover
from workbench.ext.registry import DEFAULT_REGISTRY, RegistryClient, SearchResult
from workbench.ext.semver import parse_version
from workbench.ext.sources import Source, parse_source
from workbench.ext.staging import StagingArea, copy_folder
from workbench.manifest.models import Manifest
from workbench.manifest.validate import validate_extension
from workbench.store import Store

if TYPE_CHECKING:
    from workbench.ext.archive import ArchiveLimits

__all__ = ["BUILTIN_DIR", "CRASH_ENV", "Approve", "ExtensionManager"]

BUILTIN_DIR = Path(__file__).resolve().parents[2] / "extensions" / "builtin"
"""The built-in extension shipped beside the package (as ``workbench.tools.loader`` has it)."""

Approve = Callable[[InstallPlan], bool]


def check_addon_name(name: str, src: Source) -> None:
    """Refuse ``name``, the id of a shipped add-on, from any source but that add-on's own
    folder, and an add-on's folder whose manifest names another extension: a
    first-party add-on's tools take the reserved namespace, so its id is never another's.

    Raises:
        ExtensionError: Either case; nothing is installed.
    """
    shipped = addons.find(name)
    if src.kind == "addon":
        if src.package != name:
            raise ExtensionError(f"the shipped add-on {src.package!r} names itself {name!r} in "
                                 "its loca.json; an add-on's name is its id", where=str(src))
        return
    if shipped is not None:
        raise ExtensionError(f"{name!r} is the id of an add-on shipped with workbench; install "
                             f"it with `workbench ext install {name}` (another extension cannot "
                             "take its name)", where=str(src))


def unchanged_since(folder: Path, plan: InstallPlan, command: str) -> Fingerprint:
    """The folder's fingerprints now, when they are still the ones ``plan`` showed the
    person; otherwise what they decided on is gone, and they are asked to run
    ``command`` again."""
    again = fingerprint(folder)
    if again.digest != plan.digest:
        raise ExtensionError(f"its files changed again while you decided; run `{command}` again",
                             where=str(folder))
    return again


class ExtensionManager:
    """Installs and keeps track of the extensions in a home.

    Creating one repairs what an interrupted run left behind (the repairs made are
    in :attr:`repairs`).

    Args:
        home: The workbench home.
        store: The open store of that home.
        registry_url: The npm registry (the ``extensions.registry`` setting).
        registry: A registry client to use instead of one for ``registry_url``.
        builtin_dir: The packaged built-in extension.
        public_key_path: The key the built-in's signature is checked with (None: the
            packaged one, ``workbench.ext.signature.PUBLIC_KEY_PATH``).
        limits: The caps on an extension's files.
        on_removed: Called with an extension's name once it is removed (also when a
            start finishes an interrupted removal or forgets an extension whose folder
            is gone), to drop what other parts keep for it outside its folder, such
            as a private database the host keeps elsewhere.
        dependency_timeout_s: How long resolving an extension's dependencies (Deno
            or pip, each) may take before the install is refused.
    """

    def __init__(self, home: Home, store: Store, *, registry_url: str = DEFAULT_REGISTRY,
                 registry: RegistryClient | None = None, builtin_dir: Path = BUILTIN_DIR,
                 public_key_path: Path | None = None,
                 limits: ArchiveLimits | None = None,
                 on_removed: Callable[[str], None] | None = None,
                 dependency_timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.home = home.ensure()
        self.store = store
        self.registry = registry or RegistryClient(registry_url)
        self.builtin_dir = builtin_dir
        self.public_key_path = public_key_path
        # What only an install, an update or a repair of the built-in needs (archives,
        # fetching, signatures) is imported when one happens, not at every start.
        self._limits = limits
        self.staging = StagingArea(home.root / "staging")
        self._commits = Committer(self.home, store, self.staging)
        self.checks = ManifestChecks(store, home.root)
        """The manifest texts checked already, so a start need not check them again."""
        self._on_removed = on_removed
        self.dependency_timeout_s = dependency_timeout_s
        self.repairs: list[Repair] = self.recover()
        """What the start repaired: interrupted changes finished or undone, records fixed."""

    @property
    def limits(self) -> ArchiveLimits:
        """The caps on what an archive may unpack to (``workbench.ext.archive``)."""
        if self._limits is None:
            from workbench.ext.archive import ArchiveLimits

            self._limits = ArchiveLimits()
        return self._limits

    # -- places and repairs -------------------------------------------------------

    def folder_of(self, name: str) -> Path:
        """Where an extension called ``name`` is installed."""
        return self.home.extensions_dir / name

    def recover(self) -> list[Repair]:
        """Finish or undo interrupted changes and reconcile folders with records.

        Returns:
            One entry per repair made.
        """
        with self._commits.lock():
            restore_interrupted(self.home.cache_dir, self.home.extensions_dir,
                                self.staging.leftovers())
            repairs = recover(self.home, self.store, self.staging)
            for name in sweep_orphans(self.home.cache_dir, self._is_installed):
                repairs.append(Repair(name, "cleaned", f"deleted the dependencies kept for "
                                                       f"{name}, which is not installed"))
        for repair in list(repairs):
            if repair.action in ("removed", "forgot"):
                try:
                    self._removed(repair.name)
                except ExtensionError as exc:
                    repairs.append(Repair(repair.name, "failed", exc.message))
        return repairs

    def _is_installed(self, name: str) -> bool:
        return self.store.get_extension(name) is not None or self.folder_of(name).is_dir()

    def _removed(self, name: str) -> None:
        if self._on_removed is None:
            return
        try:
            self._on_removed(name)
        except Exception as exc:
            raise ExtensionError(f"{name} was removed, but what was kept for it elsewhere "
                                 f"could not be dropped: {exc}") from exc

    # -- staging and plans --------------------------------------------------------

    def _resolve(self, stage: Path, manifest: Manifest, digest: str,
                 source: str) -> tuple[Dependency, ...]:
        """Resolve the staged extension's dependencies into the staging folder."""
        pkg = stage / "pkg"
        records = resolve_dependencies(pkg, manifest.name, stage / STAGED,
                                       entry=manifest.entry, where=source,
                                       timeout_s=self.dependency_timeout_s)
        if records:
            check_unchanged(digest, fingerprint(pkg).digest, source)
        return tuple(package for record in records for package in record.packages)

    def _plan_staged(self, action: PlanAction, stage: Path, source: str,
                     fallback: str, check: Callable[[str], None] | None = None) -> InstallPlan:
        pkg = stage / "pkg"
        # Checked in full, as every install is; its text recorded for the starts after.
        report = validate_extension(pkg, checked=self.checks.recording())
        if report.manifest is None:
            raise ExtensionError(invalid_message(report), where=source)
        manifest = report.manifest
        check_name(manifest.name, source)
        if check is not None:
            check(manifest.name)
        prints = fingerprint(pkg)
        dependencies = self._resolve(stage, manifest, prints.digest, source)
        row = self.store.get_extension(manifest.name)
        plan = build_plan(
            action, manifest=manifest, folder=pkg, source=source,
            version=read_version(pkg, fallback), digest=prints.digest,
            files=len(prints.files), size=prints.total_bytes,
            previous_version=row["version"] if row and action != "install" else None,
            warnings=tuple(problem.describe() for problem in report.warnings),
            dependencies=dependencies,
            previous_dependencies=(installed_dependencies(self.home.cache_dir, manifest.name)
                                   if action == "update" else None))
        consent = self.store.get_consent(manifest.name)
        if consent is not None and action != "install":
            plan = dataclasses.replace(plan, diff=diff_consent(consent["approved"], plan.consent))
        return plan

    def plan(self, source: str | Source) -> InstallPlan:
        """Fetch and unpack a source and describe what installing it would approve.

        The files stay in a staging folder (``plan.folder``) until the plan is given
        to :meth:`install` or to :meth:`discard`; a leftover is removed at the next
        start.

        Raises:
            SourceError: The source names nothing usable.
            RegistryError: The package cannot be fetched or fails its checksum.
            ArchiveError: The archive is unsafe or too large.
            ExtensionError: The extension is invalid (every error with its pointer),
                its name is unusable, or it is already installed.
            DependencyError: Its dependencies cannot be resolved (with Deno's or
                pip's message); nothing was kept.
        """
        src = parse_source(source) if isinstance(source, str) else source
        from workbench.ext.fetch import fetch

        stage, fallback = fetch(src, self.staging, self.registry, self.limits)

        def installable(name: str) -> None:
            if name == BUILTIN_NAME:
                raise ExtensionError(f"{BUILTIN_NAME!r} is the name of the built-in extension; "
                                     "it cannot be installed from elsewhere", where=str(src))
            check_addon_name(name, src)
            self._commits.refuse_existing(name)

        try:
            plan = self._plan_staged("install", stage, str(src), fallback, installable)
        except BaseException:
            self.staging.discard(stage)
            raise
        return plan

    def _stage_of(self, plan: InstallPlan) -> Path:
        stage = plan.folder.parent
        if stage.parent != self.staging.root or plan.folder.name != "pkg":
            raise ExtensionError("this plan's files are not in this home's staging area",
                                 where=str(plan.folder))
        if not plan.folder.is_dir():
            raise ExtensionError("this plan's files are gone; make a new plan",
                                 where=str(plan.folder))
        return stage

    def discard(self, plan: InstallPlan) -> None:
        """Delete a plan's staged files without installing them."""
        self.staging.discard(self._stage_of(plan))

    # -- the public operations ----------------------------------------------------

    def install(self, source: str | Source | InstallPlan, *, approve: Approve) -> InstalledExtension:
        """Install an extension the person approves.

        Args:
            source: A source string or :class:`Source`, or a plan from :meth:`plan`.
            approve: Shown the plan; returns True to install.

        Returns:
            The installed extension.

        Raises:
            InstallDeclined: ``approve`` said no; nothing was installed.
            ExtensionError: See :meth:`plan`; also when the name got installed
                meanwhile. Nothing is left behind.
        """
        plan = source if isinstance(source, InstallPlan) else self.plan(source)
        if plan.action != "install":
            raise ExtensionError(f"this is a plan to {plan.action} {plan.name}, not to install it")
        stage = self._stage_of(plan)
        try:
            if not approve(plan):
                raise InstallDeclined(f"{plan.name} was not installed")
            self._commits.install(plan, stage, "extension.install")
        finally:
            self.staging.discard(stage)
        return self.get(plan.name)

    def _update_source(self, name: str, source: str | Source | None) -> Source:
        if source is not None:
            return parse_source(source) if isinstance(source, str) else source
        row = self.store.get_extension(name)
        recorded = row.get("source") if row else None
        if not recorded:
            raise ExtensionError(f"{name} has no recorded source; pass one with --source")
        try:
            src = parse_source(str(recorded))
        except ExtensionError as exc:
            raise ExtensionError(f"{name}'s recorded source cannot be used ({exc}); pass one "
                                 "with --source") from None
        if src.kind == "npm" and src.spec and parse_version(src.spec) is not None:
            return src.unpinned()
        return src

    def plan_update(self, name: str, *, source: str | Source | None = None) -> InstallPlan:
        """Fetch a new version of an installed extension and describe the update.

        The plan's ``diff`` compares its consent with the recorded one. Give it to
        :meth:`update` or :meth:`discard`.

        Raises:
            ExtensionError: Not installed, the built-in, no usable source, or the
                source holds another extension.
        """
        if name == BUILTIN_NAME:
            raise ExtensionError("the built-in extension is updated with workbench itself")
        if self.store.get_extension(name) is None and not self.folder_of(name).is_dir():
            raise ExtensionError(f"{name} is not installed")
        src = self._update_source(name, source)
        from workbench.ext.fetch import fetch

        stage, fallback = fetch(src, self.staging, self.registry, self.limits)

        def same_extension(found: str) -> None:
            check_addon_name(found, src)
            if found != name:
                raise ExtensionError(f"the source holds the extension {found!r}, not "
                                     f"{name!r}", where=str(src))

        try:
            plan = self._plan_staged("update", stage, str(src), fallback, same_extension)
            if plan.diff is None:
                plan = dataclasses.replace(plan, diff=diff_consent({}, plan.consent))
        except BaseException:
            self.staging.discard(stage)
            raise
        return plan

    def update(self, name: str, *, approve: Approve,
               source: str | Source | InstallPlan | None = None) -> InstalledExtension:
        """Install a new version of an extension, in place of the old one, if approved.

        The old folder is moved aside, the new one renamed in, and the old one
        deleted only once the new one is recorded; on any failure the old one is
        put back. Its private database is kept.

        Args:
            name: The installed extension.
            approve: Shown the plan with its consent diff; returns True to update.
            source: Where to fetch it from, or a plan from :meth:`plan_update`; the
                recorded source when omitted (an npm package pinned to an exact
                version is updated to the latest).

        Raises:
            InstallDeclined: ``approve`` said no; the old version is untouched.
            ExtensionError: See :meth:`plan_update`.
        """
        plan = (source if isinstance(source, InstallPlan)
                else self.plan_update(name, source=source))
        if plan.action != "update" or plan.name != name:
            raise ExtensionError(f"this is a plan to {plan.action} {plan.name}, not to update "
                                 f"{name}")
        stage = self._stage_of(plan)
        try:
            if not approve(plan):
                raise InstallDeclined(f"{name} was not updated; {plan.previous_version or 'it'} "
                                      "stays installed as it was")
            self._commits.swap(plan, stage, "extension.update", plan.previous_version)
        finally:
            self.staging.discard(stage)
        return self.get(name)

    def remove(self, name: str) -> None:
        """Uninstall an extension: its folder (with the private database kept in it and
        the memories it shipped), its dependency folders, its record, files and
        consent; then ``on_removed``.

        Raises:
            ExtensionError: Not installed, or the built-in.
        """
        if name == BUILTIN_NAME:
            raise ExtensionError("the built-in extension cannot be removed; switch its tools "
                                 "off instead")
        self._commits.remove(name)
        self._removed(name)

    def _inspect(self, name: str) -> InstalledExtension:
        return inspect_installed(name, self.folder_of(name), self.store.get_extension(name),
                                 self.store.get_consent(name), self.store.extension_files(name),
                                 self.checks)

    def list(self) -> list[InstalledExtension]:
        """Every installed extension (and every folder found in the extensions folder),
        by name, with its state: ``ok``, ``held`` or ``broken`` and why."""
        names = {row["name"] for row in self.store.list_extensions()}
        names |= {folder.name for folder in extension_folders(self.home.extensions_dir)}
        return [self._inspect(name) for name in sorted(names)]

    def get(self, name: str) -> InstalledExtension:
        """One installed extension with its state.

        Raises:
            ExtensionError: It is not installed.
        """
        if self.store.get_extension(name) is None and not self.folder_of(name).is_dir():
            raise ExtensionError(f"{name} is not installed")
        return self._inspect(name)

    def verify(self, name: str) -> FingerprintCheck:
        """Compare an extension's files with the ones approved.

        Raises:
            ExtensionError: It is not installed or its folder is missing.
        """
        folder = self.folder_of(name)
        if not folder.is_dir():
            raise ExtensionError(f"{name} is not installed" if self.store.get_extension(name)
                                 is None else f"{name}'s folder is missing", where=str(folder))
        return compare(self.store.extension_files(name), fingerprint(folder))

    def trust(self, name: str, *, approve: Approve | None = None) -> InstallPlan:
        """Approve an extension's current files, releasing it from ``held``.

        Args:
            name: The installed extension.
            approve: Shown the plan (with the files that changed and the consent
                diff); returns True to trust. None trusts without asking.

        Returns:
            What is now approved.

        Raises:
            InstallDeclined: ``approve`` said no; it stays held.
            ExtensionError: Not installed, invalid, the built-in, or its files
                changed again while the person decided.
        """
        if name == BUILTIN_NAME:
            raise ExtensionError("the built-in extension is checked by its signature, not "
                                 "trusted by hand; workbench restores it from its signed copy "
                                 "at the next start")
        folder = self.folder_of(name)
        if not folder.is_dir():
            raise ExtensionError(f"{name} is not installed")
        report = validate_extension(folder)
        if report.manifest is None:
            raise ExtensionError(invalid_message(report), where=str(folder))
        manifest = report.manifest
        if manifest.name != name:
            raise ExtensionError(f"its manifest names it {manifest.name!r}, but it is "
                                 f"installed as {name!r}", where=str(folder))
        prints = fingerprint(folder)
        recorded = self.store.extension_files(name)
        row = self.store.get_extension(name)
        consent = self.store.get_consent(name)
        plan = build_plan(
            "trust", manifest=manifest, folder=folder,
            source=str(row["source"]) if row and row.get("source") else str(folder),
            version=read_version(folder, str(row["version"]) if row and row.get("version")
                                 else DEFAULT_VERSION),
            digest=prints.digest, files=len(prints.files), size=prints.total_bytes,
            changed_files=tuple(compare(recorded, prints).paths()) if recorded else (),
            warnings=tuple(problem.describe() for problem in report.warnings),
            dependencies=installed_dependencies(self.home.cache_dir, name))
        if consent is not None:
            plan = dataclasses.replace(plan, diff=diff_consent(consent["approved"], plan.consent))
        if approve is not None and not approve(plan):
            raise InstallDeclined(f"{name} was not trusted; it stays held")
        with self._commits.lock():
            again = unchanged_since(folder, plan, f"workbench ext trust {name}")
            record_installed(self.store, name=name, version=plan.version, source=plan.source,
                             folder=folder, prints=again, consent=plan.consent,
                             manifest=manifest_json(manifest), action="extension.trust")
        return plan

    def ensure_builtin(self) -> InstallPlan | None:
        """Install the packaged built-in extension, or re-install it when the packaged
        copy differs from the installed one (a newer workbench, or tampering).

        The packaged copy is staged and its ed25519 signature checked before anything
        is installed; no network is used.

        Returns:
            The plan installed, or None when the installed copy is already the
            packaged one.

        Raises:
            SignatureError: The packaged copy does not match its signature; nothing
                was installed (an earlier installed copy stays).
            ExtensionError: The packaged copy is missing or invalid.
        """
        packaged = self.builtin_dir
        if not packaged.is_dir():
            raise ExtensionError("the built-in extension is missing from the installation",
                                 where=str(packaged))
        target = self.folder_of(BUILTIN_NAME)
        row = self.store.get_extension(BUILTIN_NAME)
        consent = self.store.get_consent(BUILTIN_NAME)
        digest = fingerprint(packaged).digest
        if (row is not None and consent is not None and target.is_dir()
                and row["digest"] == digest == consent["digest"]
                and fingerprint(target).digest == digest):
            return None
        stage = self.staging.new()
        try:
            from workbench.ext.signature import PUBLIC_KEY_PATH, load_public_key, verify_folder

            copy_folder(packaged, stage / "pkg", self.limits)
            verify_folder(stage / "pkg", load_public_key(self.public_key_path or PUBLIC_KEY_PATH))
            plan = self._plan_staged("builtin", stage, "builtin", __version__)
            if plan.name != BUILTIN_NAME:
                raise ExtensionError(f"the built-in extension must be named {BUILTIN_NAME!r}, "
                                     f"not {plan.name!r}", where=str(packaged))
            if row is None and not target.exists():
                self._commits.install(plan, stage, "extension.builtin")
            else:
                self._commits.swap(plan, stage, "extension.builtin",
                                  str(row["version"]) if row else None)
        finally:
            self.staging.discard(stage)
        return plan

    def discover(self, project_dir: Path | None, *,
                 include_global: bool = True) -> list[DiscoveredExtension]:
        """The global and project-local extension folders, checked without running any
        code: scope, validity, and whether each may run here."""
        def state(name: str, _folder: Path) -> tuple[bool, str]:
            found = self._inspect(name)
            return found.ok, found.reason

        def consented(folder: Path) -> tuple[bool, str]:
            found = project_consent(self.store, folder, project_dir and project_dir.resolve())
            return found.consented, found.reason

        return discover(self.home, project_dir, state, include_global=include_global,
                        project_state=consented, installed=self._is_installed_name,
                        checked=self.checks)

    def _is_installed_name(self, name: str) -> bool:
        """Whether ``name`` is taken in the home: installed, or the built-in's."""
        return name in (BUILTIN_NAME, "workbench") or self._is_installed(name)

    def project_extensions(self, project_dir: Path | None) -> list[InstalledExtension]:
        """A project's own extensions as ``ext list`` shows them, with their origin (the
        project folder) and state: ``ok``, ``held`` (not consented to, changed since,
        or the project is not trusted), ``broken`` (invalid) or ``conflict`` (it takes an
        installed extension's name)."""
        listed = []
        for found in self.discover(project_dir, include_global=False):
            if found.runnable:
                state = "ok"
            elif found.conflict:
                state = "conflict"
            else:
                state = "held" if found.valid else "broken"
            manifest = found.manifest
            check = project_consent(self.store, found.folder).check if found.valid else None
            listed.append(InstalledExtension(
                name=found.name, display_name=manifest.display_name if manifest else found.name,
                version=read_version(found.folder, ""), source=str(found.folder),
                path=found.folder, digest=check.digest if check else "", state=state,
                reason=found.reason, enabled=True, builtin=False,
                tools=tuple(tool.name for tool in manifest.tools) if manifest else (),
                manifest=manifest, check=check, origin=f"project {found.folder.parents[2]}",
                identity=found.identity))
        return listed

    def approved(self, identity: str) -> tuple[str | None, dict[str, str]]:
        """What a person approved for an extension, by its identity (``Tool.identity``):
        the digest and the files (sha256 by path) of an installed one's consent, or of
        a project one's (``project:FOLDER``); ``(None, {})`` when never approved. For a
        check of the files when a worker starts."""
        if is_project_identity(identity):
            row = self.store.get_project_consent(identity)
            return (row["digest"], dict(row["files"])) if row else (None, {})
        consent = self.store.get_consent(identity)
        if consent is None:
            return None, {}
        return consent["digest"], self.store.extension_files(identity)

    def trust_project(self, folder: Path, *, approve: Approve | None = None) -> InstallPlan:
        """Consent to a project extension's current files (its tools, their permissions
        with reasons, its hooks), so it runs in its project; again after they change.

        Args:
            folder: The extension's folder, ``PROJECT/.workbench/extensions/NAME``.
            approve: Shown the plan (files changed and the consent diff since the last
                consent); returns True to consent. None consents without asking.

        Raises:
            InstallDeclined: ``approve`` said no; it stays held.
            ExtensionError: Not a project extension folder, invalid, its name is an
                installed extension's, or its files changed while the person decided.
        """
        folder = Path(folder).absolute()
        if folder.is_symlink() or not folder.is_dir():
            raise ExtensionError("not an extension folder (a project extension is a folder, "
                                 "not a link)", where=str(folder))
        if folder.parent.name != "extensions" or folder.parent.parent.name != ".workbench":
            raise ExtensionError("a project extension lives in PROJECT/.workbench/extensions/; "
                                 "install others with `workbench ext install`",
                                 where=str(folder))
        # Named as discovery names it (the project folder resolved), so that the consent
        # is found under the same identity whichever way the folder was given.
        folder = folder.parents[2].resolve() / PROJECT_EXTENSIONS / folder.name
        report = validate_extension(folder)
        if report.manifest is None:
            raise ExtensionError(invalid_message(report), where=str(folder))
        manifest = report.manifest
        check_name(manifest.name, str(folder))
        if self._is_installed_name(manifest.name):
            raise ExtensionError(f"its name {manifest.name!r} is an installed extension's; a "
                                 "project extension cannot take it (rename it in its "
                                 "loca.json)", where=str(folder))
        identity = project_identity(folder)
        prints = fingerprint(folder)
        recorded = self.store.get_project_consent(identity)
        plan = build_plan(
            "trust", manifest=manifest, folder=folder, source=str(folder),
            version=read_version(folder), digest=prints.digest, files=len(prints.files),
            size=prints.total_bytes,
            changed_files=tuple(compare(recorded["files"], prints).paths()) if recorded else (),
            warnings=tuple(problem.describe() for problem in report.warnings))
        if recorded is not None:
            plan = dataclasses.replace(plan, diff=diff_consent(recorded["consent"], plan.consent))
        kept = kept_under_name(self.home, self.store, identity, manifest)
        if not kept.empty:
            plan = dataclasses.replace(plan, carried_over=tuple(kept.describe(manifest.name)))
        if approve is not None and not approve(plan):
            raise InstallDeclined(f"{manifest.name} was not consented to; it stays held")
        with self._commits.lock():
            again = unchanged_since(folder, plan, trust_command(folder))
            if kept != kept_under_name(self.home, self.store, identity, manifest):
                raise ExtensionError("what the home keeps under its name changed while you "
                                     f"decided; run `{trust_command(folder)}` again",
                                     where=str(folder))
            carry_over(self.store, kept)
            with self.store.transaction():
                self.store.record_project_consent(
                    identity, folder=str(folder), name=manifest.name, digest=again.digest,
                    files=again.by_path(), consent=plan.consent)
                self.store.audit("user", "extension.project_trust", identity,
                                 {"name": manifest.name, "digest": again.digest,
                                  "carried_over": list(plan.carried_over)})
        return plan

    def search(self, words: list[str] | tuple[str, ...] = (), *,
               limit: int = 20) -> list[SearchResult]:
        """Find extension packages on the registry (see :meth:`RegistryClient.search`)."""
        return self.registry.search(words, limit=limit)
