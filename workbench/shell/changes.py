"""The change sets of the shell: applying a command's upper layer as one change, listing
them, showing one, undoing one — the one core the CLI (``workbench changes``) and the
TUI (``u`` on a shell call's card) both call.

The same list holds the changes an extension's tool made outside the project's files
(kind ``outside``: a calendar event, a contact, rows of a table), recorded by the host
from the tool's result (``record_outside``); undoing one runs the person-only tool of
that extension the change named, through ``run_undo`` (the host's, which calls it as
the person), newest first within an extension. The TUI awaits ``aundo``; the CLI calls
``undo``.

Undo of a shell change set puts back, in reverse order, every path of the change set
that is still what the change left; a path the person changed since keeps the person's version, and the
answer says which were kept and why. Earlier contents are kept within
``shell.undo_mb`` per change set and ``shell.undo_total_mb`` in all (the oldest change
sets lose theirs first, and say so).
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from workbench.errors import ToolError, WorkbenchError
from workbench.sandbox.paths import Pin, PathChanged, open_at_beneath, open_nofollow, open_pinned
from workbench.shell.layers import Applier, identity

if TYPE_CHECKING:
    from workbench.config.settings import ShellSettings
    from workbench.store import Store

MIB = 1 << 20
LISTED_FILES = 200
"""Changed paths an answer lists one by one; the rest are counted."""


def coarse_now_ns() -> int:
    """The clock file times are taken from (coarse): a change made after this moment
    has a change time at or after it."""
    return time.clock_gettime_ns(getattr(time, "CLOCK_REALTIME_COARSE", 5))


UndoRun = Callable[[str, str, Any], Awaitable[Any]]
"""``(extension, undo_tool, arguments) -> result``: run an outside change's undo tool
(``EXTENSION.TOOL``) as the person; raises ``WorkbenchError`` saying why it did not."""


class Changes:
    """Change sets in the store, applied to and undone in project folders.

    Args:
        store: Where change sets and earlier contents are kept.
        settings: The shell's settings as they are now (``undo_mb``, ``undo_total_mb``).
    """

    def __init__(self, *, store: Store, settings: Callable[[], ShellSettings]) -> None:
        self.store = store
        self.settings = settings
        self.run_undo: UndoRun | None = None
        """How an outside change's undo tool is run (the host sets it)."""
        self._ours: dict[str, dict[str, str]] = {}
        """By project folder: what each path was after our own last change of it."""
        self._lock = threading.Lock()

    # --- applying ----------------------------------------------------------------

    def apply(self, upper_fd: int, *, project: Pin, session_id: str | None, command: str,
              since_ns: int) -> dict[str, Any]:
        """Apply the upper layer held by ``upper_fd`` (the ``tmpfs`` with ``upper/``) to
        ``project`` as one change set.

        Returns:
            ``{"change_set": ID or None, "files": [{"path", "action"}...], "more": N,
            "skipped": [...], "conflicts": [...]}``.

        Raises:
            ToolError: The project folder is not the one the command ran on (nothing
                is applied).
        """
        upper = os.open("upper", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                        dir_fd=upper_fd)
        try:
            if not os.listdir(upper):
                return {"change_set": None, "files": [], "more": 0, "skipped": [], "conflicts": []}
            try:
                project_fd = open_pinned(project)
            except PathChanged as exc:
                raise ToolError("permission", f"the project folder changed while the command ran "
                                f"({exc}); nothing it did was applied") from None
            if project_fd is None:
                raise ToolError("permission", f"the project folder {project.path} is gone; nothing "
                                "the command did was applied")
            with self._lock:
                try:
                    return self._apply(upper, project_fd, project.path, session_id, command, since_ns)
                finally:
                    os.close(project_fd)
        finally:
            os.close(upper)

    def _apply(self, upper: int, project_fd: int, folder: str, session_id: str | None,
               command: str, since_ns: int) -> dict[str, Any]:
        change_set = self.store.begin_change_set(session_id=session_id, folder=folder, command=command)
        ours = self._ours.setdefault(folder, {})
        applier = Applier(project_fd, since_ns=since_ns, ours=ours,
                          copy_suffix=f".shell-{change_set}", budget=self.settings().undo_mb * MIB)
        try:
            applied = applier.apply(upper)
        finally:
            out = applier.out
            note = "; ".join(out.skipped[:20])
            self.store.finish_change_set(change_set, files=out.files, blobs=out.blobs, note=note)
            ours.update(out.identities)
        self._prune()
        files = [{"path": row["path"], "action": row["action"]} | ({"copy": row["copy"]} if row["copy"] else {})
                 for row in applied.files]
        return {"change_set": change_set if applied.files else None, "files": files[:LISTED_FILES],
                "more": max(0, len(files) - LISTED_FILES), "skipped": applied.skipped,
                "conflicts": [row["note"] for row in applied.files if row["action"] == "conflict"]}

    def _prune(self) -> None:
        """Keep all change sets' earlier contents within ``shell.undo_total_mb``."""
        limit = self.settings().undo_total_mb * MIB
        total = self.store.kept_change_bytes()
        for oldest in self.store.oldest_kept_change_sets():
            if total <= limit:
                return
            found = self.store.change_set(oldest)
            kept = int(found["kept_bytes"]) if found else 0
            self.store.drop_change_contents(oldest, "its earlier contents were let go to keep "
                                            "shell.undo_total_mb: undo cannot bring files back")
            total -= kept

    # --- reading -------------------------------------------------------------------

    def list(self, session_id: str | None = None, limit: int | None = 50) -> list[dict[str, Any]]:
        """The change sets, newest first: ``id``, ``session_id``, ``folder``, ``command``,
        ``created_at``, ``state`` (``applied``, ``undone``, ``partly undone``), ``files``,
        ``kept_bytes``, ``note``."""
        return [_row(found) for found in self.store.change_sets(session_id=session_id, limit=limit)]

    def show(self, change_set: int) -> dict[str, Any]:
        """One change set with its ``files``: ``path``, ``action`` (``added``, ``modified``,
        ``deleted``, ``mode``, ``conflict``), ``kind``, ``undoable``, ``copy``, ``note``.

        Raises:
            WorkbenchError: No such change set.
        """
        found = self.store.change_set(change_set)
        if found is None or found["state"] == "applying":
            raise WorkbenchError(f"no change set {change_set}; `workbench changes list` shows them")
        out = _row({**found, "files": len(found["files"])})
        out["files"] = [{"path": f["path"], "action": f["action"], "kind": f["kind"],
                         "undoable": bool(f["before_kept"]), "copy": f["copy"], "note": f["note"]}
                        for f in found["files"]]
        return out

    # --- changes outside the project's files -----------------------------------------

    def record_outside(self, *, session_id: str | None, extension: str, call_id: str,
                       summary: str, undo_tool: str, undo_arguments: Any) -> int:
        """Put a change an extension's tool made in the change list; its id.

        Args:
            session_id: The chat the call was made in, if any.
            extension: The extension's identity.
            call_id: The call that made it (the change is bound to that call).
            summary: What the person sees, already made safe for a terminal.
            undo_tool: The person-only tool that undoes it, as ``EXTENSION.TOOL``.
            undo_arguments: Its arguments (JSON data).
        """
        change_set = self.store.record_outside_change(
            session_id=session_id, extension=extension, call_id=call_id, summary=summary,
            undo_tool=undo_tool, undo_arguments=json.dumps(undo_arguments, ensure_ascii=False))
        self.store.audit("tool", "changes.record", extension,
                         {"change_set": change_set, "call_id": call_id, "undo": undo_tool})
        return change_set

    async def _undo_outside(self, found: dict[str, Any]) -> dict[str, Any]:
        change_set = int(found["id"])
        extension = str(found["extension"] or "")
        newer = self.store.newer_outside_changes(extension, change_set)
        if newer:
            raise WorkbenchError(
                f"change {change_set} of {extension} is not its newest: undo "
                f"{', '.join(str(n) for n in newer)} first (an extension's changes are undone "
                "newest first)")
        if self.run_undo is None:
            raise WorkbenchError("this host cannot run undo tools")
        try:
            arguments = json.loads(found["undo_arguments"] or "null")
        except ValueError:
            raise WorkbenchError(f"change {change_set}'s undo is damaged in the store") from None
        result = await self.run_undo(extension, str(found["undo_tool"] or ""), arguments)
        self.store.mark_change_set(change_set, "undone", "")
        self.store.audit("person", "changes.undo", str(change_set),
                         {"extension": extension, "undo": found["undo_tool"]})
        return {"change_set": change_set, "state": "undone", "restored": [found["command"]],
                "kept": [], "result": result}

    # --- undoing ------------------------------------------------------------------

    def _applied(self, change_set: int) -> dict[str, Any]:
        found = self.store.change_set(change_set)
        if found is None or found["state"] == "applying":
            raise WorkbenchError(f"no change set {change_set}; `workbench changes list` shows them")
        if found["state"] != "applied":
            raise WorkbenchError(f"change set {change_set} was undone already ({found['state']})")
        return found

    async def aundo(self, change_set: int) -> dict[str, Any]:
        """``undo`` for a caller on an event loop (the TUI): a shell change set is put
        back in a thread, an outside change's undo tool awaited on this loop."""
        found = self._applied(change_set)
        if found.get("kind") == "outside":
            return await self._undo_outside(found)
        return await asyncio.to_thread(self.undo, change_set)

    def undo(self, change_set: int) -> dict[str, Any]:
        """Undo a change of the list: put back what a shell change set changed, where
        the person has not changed it since, or run an outside change's undo tool.

        Returns:
            ``{"change_set", "state", "restored": [PATH or SUMMARY...], "kept": [{"path",
            "why"}...]}`` (an outside change's also its undo tool's ``result``).

        Raises:
            WorkbenchError: No such change set, it was undone already, its folder
                cannot be reached with no link in it; for an outside change, a newer
                one of its extension is not undone, or its undo tool failed (it then
                stays applied).
        """
        found = self._applied(change_set)
        if found.get("kind") == "outside":
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return asyncio.run(self._undo_outside(found))
            raise WorkbenchError("an outside change is undone with `aundo` on an event loop")
        folder = found["folder"]
        try:
            project = open_nofollow(folder, os.O_PATH | os.O_DIRECTORY)
        except OSError as exc:
            raise WorkbenchError(f"cannot reach the folder of change set {change_set}: "
                                 f"{exc.strerror or exc}", where=folder) from None
        restored: list[str] = []
        kept: list[dict[str, str]] = []
        with self._lock:
            ours = self._ours.setdefault(folder, {})
            try:
                for row in reversed(found["files"]):
                    why = self._undo_one(project, row, ours)
                    if why:
                        kept.append({"path": row["path"], "why": why})
                    else:
                        restored.append(row["path"])
            finally:
                os.close(project)
        state = "undone" if not kept else "partly undone"
        note = "; ".join(f"{k['path']}: {k['why']}" for k in kept[:20])
        self.store.mark_change_set(change_set, state, note)
        self.store.audit("person", "changes.undo", str(change_set),
                         {"restored": len(restored), "kept": len(kept)})
        return {"change_set": change_set, "state": state, "restored": list(reversed(restored)),
                "kept": kept}

    def _undo_one(self, project: int, row: dict[str, Any], ours: dict[str, str]) -> str:
        """Put one path back; why it was kept as it is, or "" when it was put back."""
        rel = row["copy"] or row["path"]
        head, _, name = rel.rpartition("/")
        try:
            parent = open_at_beneath(project, head, os.O_PATH | os.O_DIRECTORY) if head else os.dup(project)
        except OSError as exc:
            return f"its folder cannot be reached ({exc.strerror or exc})"
        try:
            try:
                now = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            expected = row["after_identity"]
            if (identity(now) if now is not None else None) != expected:
                return ("changed since this change set (your version stays)" if now is not None
                        else "deleted since this change set")
            if row["copy"]:
                os.unlink(name, dir_fd=parent)  # the command's copy beside your version
                return ""
            return self._restore(parent, name, row, ours)
        except OSError as exc:
            return f"could not be put back ({exc.strerror or exc})"
        finally:
            os.close(parent)

    def _restore(self, parent: int, name: str, row: dict[str, Any], ours: dict[str, str]) -> str:
        before, mode = row["before_kind"], row["before_mode"]
        current = _lstat(parent, name)
        if before is None:
            if current is not None and stat.S_ISDIR(current.st_mode):
                if _nonempty(parent, name):
                    return "a folder that holds files now (it stays)"
                os.rmdir(name, dir_fd=parent)
            elif current is not None:
                os.unlink(name, dir_fd=parent)
            ours.pop(row["path"], None)
            return ""
        if before == "dir":
            if current is None:
                os.mkdir(name, 0o700, dir_fd=parent)
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
            try:
                os.fchmod(fd, mode if mode is not None else 0o755)
            finally:
                os.close(fd)
        elif before == "link":
            temporary = f".{name}.workbench-undo"
            os.symlink(row["before_target"] or "", temporary, dir_fd=parent)
            os.rename(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
        elif before == "file":
            if not row["before_kept"] or row["before_blob"] is None:
                return "its earlier contents were not kept (see the change set's note)"
            data = self.store.change_blob(row["before_blob"])
            if data is None:
                return "its earlier contents were not kept (see the change set's note)"
            if current is not None and stat.S_ISDIR(current.st_mode):
                return "a folder is there now (it stays)"
            temporary = f".{name}.workbench-undo"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600, dir_fd=parent)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fchmod(fd, mode if mode is not None else 0o644)
            finally:
                os.close(fd)
            os.rename(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
        else:
            return f"it was a {before}, which is never made again"
        now = _lstat(parent, name)
        if now is not None:
            ours[row["path"]] = identity(now)
        return ""


def _lstat(parent: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _nonempty(parent: int, name: str) -> bool:
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    try:
        return bool(os.listdir(fd))
    finally:
        os.close(fd)


def _row(found: dict[str, Any]) -> dict[str, Any]:
    return {"id": found["id"], "session_id": found["session_id"], "folder": found["folder"],
            "command": found["command"], "created_at": found["created_at"], "state": found["state"],
            "files": found["files"], "kept_bytes": found["kept_bytes"],
            "undone_at": found["undone_at"], "note": found["note"],
            "kind": found.get("kind") or "files", "extension": found.get("extension"),
            "call_id": found.get("call_id"), "undo_tool": found.get("undo_tool")}
