"""The numbered schema migrations of the store, and the code that applies them.

Each migration runs in its own transaction, together with its row in
``_migrations`` and the new ``PRAGMA user_version``, so a crash leaves the file at
one version or the next. Migrations are never edited once released: a change to
the schema is a new function ``mNNN_<what>`` appended to ``MIGRATIONS``.

This module must not import anything of ours but ``workbench.errors``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workbench.store.connection import Database

from workbench.errors import StoreTooNewError

M001_STATEMENTS = (
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        title TEXT,
        model TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    )
    """,
    "CREATE INDEX sessions_by_updated_at ON sessions (updated_at)",
    """
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
        content TEXT,
        tool_calls TEXT,
        tool_call_id TEXT,
        name TEXT,
        created_at INTEGER NOT NULL,
        UNIQUE (session_id, seq)
    )
    """,
    """
    CREATE TABLE tool_calls (
        id TEXT PRIMARY KEY,
        session_id TEXT REFERENCES sessions (id) ON DELETE CASCADE,
        tool TEXT NOT NULL,
        arguments TEXT,
        caller TEXT,
        status TEXT NOT NULL
            CHECK (status IN ('running', 'ok', 'error', 'cancelled', 'denied')),
        result TEXT,
        error TEXT,
        started_at INTEGER NOT NULL,
        ended_at INTEGER
    )
    """,
    "CREATE INDEX tool_calls_by_session ON tool_calls (session_id, started_at)",
    "CREATE INDEX tool_calls_by_started_at ON tool_calls (started_at)",
    """
    CREATE TABLE grants (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        tool TEXT NOT NULL,
        kind TEXT NOT NULL,
        value TEXT NOT NULL,
        scope TEXT NOT NULL CHECK (scope IN ('once', 'session', 'always', 'deny')),
        session_id TEXT REFERENCES sessions (id) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        CHECK (scope <> 'session' OR session_id IS NOT NULL)
    )
    """,
    # One lasting decision (always or deny) per tool, kind and value; the
    # latest decision replaces the earlier one.
    """
    CREATE UNIQUE INDEX grants_lasting ON grants (tool, kind, value)
        WHERE scope IN ('always', 'deny')
    """,
    """
    CREATE UNIQUE INDEX grants_per_session ON grants (tool, kind, value, session_id)
        WHERE scope = 'session'
    """,
    "CREATE INDEX grants_by_tool ON grants (tool)",
    """
    CREATE TABLE extensions (
        name TEXT PRIMARY KEY,
        version TEXT,
        source TEXT,
        path TEXT,
        digest TEXT,
        enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
        installed_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        manifest TEXT
    )
    """,
    """
    CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        subject TEXT,
        detail TEXT
    )
    """,
    "CREATE INDEX audit_log_by_at ON audit_log (at)",
)


def m001_initial(db: Database) -> None:
    """Sessions, messages, tool calls, grants, extensions and the audit log."""
    for statement in M001_STATEMENTS:
        db.execute(statement)


M002_STATEMENTS = (
    # The files of each installed extension as last approved: what a later
    # fingerprint is compared with to name the files that changed.
    """
    CREATE TABLE extension_files (
        extension TEXT NOT NULL REFERENCES extensions (name) ON DELETE CASCADE,
        path TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        size INTEGER NOT NULL,
        PRIMARY KEY (extension, path)
    ) WITHOUT ROWID
    """,
    # What the person approved for an extension (its tools' permissions, hooks,
    # database), bound to the digest of the files it was approved for.
    """
    CREATE TABLE extension_consents (
        extension TEXT PRIMARY KEY REFERENCES extensions (name) ON DELETE CASCADE,
        digest TEXT NOT NULL,
        approved TEXT NOT NULL,
        approved_at INTEGER NOT NULL
    )
    """,
)


def m002_extension_consent(db: Database) -> None:
    """Installed extensions' files and the consent bound to their digest."""
    for statement in M002_STATEMENTS:
        db.execute(statement)


M003_STATEMENTS = (
    # The user's own memories; the ones extensions ship stay in their folders.
    """
    CREATE TABLE memories (
        title TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('knowledge', 'skill')),
        summary TEXT,
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    )
    """,
    # Prompts a person accepted to run on a schedule (schedule is JSON).
    """
    CREATE TABLE scheduled_prompts (
        id INTEGER PRIMARY KEY,
        title TEXT NOT NULL,
        instruction TEXT NOT NULL,
        schedule TEXT NOT NULL,
        run_missed INTEGER NOT NULL DEFAULT 0,
        source TEXT,
        enabled INTEGER NOT NULL DEFAULT 1,
        created_at INTEGER NOT NULL
    )
    """,
)


def m003_memories_and_schedules(db: Database) -> None:
    """The user's memories and accepted scheduled prompts."""
    for statement in M003_STATEMENTS:
        db.execute(statement)


M004_STATEMENTS = (
    # Extensions a chat switched on or off (its Tools menu); an extension with no
    # row follows its global setting.
    """
    CREATE TABLE session_extensions (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        extension TEXT NOT NULL,
        enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, extension)
    ) WITHOUT ROWID
    """,
)


def m004_session_extension_switches(db: Database) -> None:
    """Per-chat extension switches."""
    for statement in M004_STATEMENTS:
        db.execute(statement)


M005_STATEMENTS = (
    # When each schedule's windows were settled up to, its next window (NULL until
    # first planned) and where an interval counts from.
    "ALTER TABLE scheduled_prompts ADD COLUMN updated_at INTEGER",
    "ALTER TABLE scheduled_prompts ADD COLUMN anchor_at INTEGER",
    "ALTER TABLE scheduled_prompts ADD COLUMN last_due_at INTEGER",
    "ALTER TABLE scheduled_prompts ADD COLUMN next_due_at INTEGER",
    "CREATE INDEX scheduled_prompts_by_next_due ON scheduled_prompts (enabled, next_due_at)",
    # The run card each schedule's runs use (JSON: model, extensions, grants, on_need, cwd).
    """
    CREATE TABLE schedule_cards (
        schedule_id INTEGER PRIMARY KEY REFERENCES scheduled_prompts (id) ON DELETE CASCADE,
        card TEXT NOT NULL,
        frozen_at INTEGER NOT NULL
    )
    """,
    # Every run of a schedule, kept after the schedule is removed.
    """
    CREATE TABLE schedule_runs (
        id INTEGER PRIMARY KEY,
        schedule_id INTEGER REFERENCES scheduled_prompts (id) ON DELETE SET NULL,
        title TEXT NOT NULL,
        fired_by TEXT NOT NULL CHECK (fired_by IN ('schedule', 'missed', 'manual', 'resume')),
        due_at INTEGER,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        ended_at INTEGER,
        status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'ok', 'failed', 'timed_out',
                                               'refused', 'skipped', 'paused')),
        session_id TEXT REFERENCES sessions (id) ON DELETE SET NULL,
        error TEXT,
        result TEXT,
        needs TEXT,
        owner TEXT,
        pid INTEGER,
        resumes INTEGER REFERENCES schedule_runs (id) ON DELETE SET NULL
    )
    """,
    "CREATE INDEX schedule_runs_by_schedule ON schedule_runs (schedule_id, id)",
    "CREATE INDEX schedule_runs_by_status ON schedule_runs (status)",
    "CREATE INDEX schedule_runs_by_started ON schedule_runs (started_at)",
    # What the person should see: a run that failed, paused, timed out or was refused.
    """
    CREATE TABLE notifications (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        level TEXT NOT NULL CHECK (level IN ('info', 'warning', 'error')),
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        source TEXT,
        run_id INTEGER REFERENCES schedule_runs (id) ON DELETE SET NULL,
        read_at INTEGER
    )
    """,
)


def m005_schedule_runs(db: Database) -> None:
    """Schedules' timing and run cards, their runs, and notifications."""
    for statement in M005_STATEMENTS:
        db.execute(statement)


M006_STATEMENTS = (
    # The folder a chat works in (its project); the model spec is the existing
    # ``model`` column. NULL for sessions made before: they follow the host's folder.
    "ALTER TABLE sessions ADD COLUMN folder TEXT",
)


def m006_session_folder(db: Database) -> None:
    """Each session's project folder."""
    for statement in M006_STATEMENTS:
        db.execute(statement)


M007_STATEMENTS = (
    # Single tools a chat switched on or off; a tool with no row follows its
    # extension's switch in that chat. ``tool`` is the tool's own name.
    """
    CREATE TABLE session_tools (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        extension TEXT NOT NULL,
        tool TEXT NOT NULL,
        enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, extension, tool)
    ) WITHOUT ROWID
    """,
)


def m007_session_tool_switches(db: Database) -> None:
    """Per-chat switches of single tools."""
    for statement in M007_STATEMENTS:
        db.execute(statement)


M008_STATEMENTS = (
    # Optional permission entries a person left out for one chat: not asked again in
    # that chat (``grants revoke`` drops them with the tool's grants).
    """
    CREATE TABLE session_declines (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        tool TEXT NOT NULL,
        kind TEXT NOT NULL,
        value TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, tool, kind, value)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX session_declines_tool ON session_declines (tool)",
)


def m008_session_declines(db: Database) -> None:
    """Optional permission entries left out for a chat."""
    for statement in M008_STATEMENTS:
        db.execute(statement)


M009_STATEMENTS = (
    # Tool calls keyed by our own id: the model's id is data, unique only within the
    # assistant message that made the call (``message_id``); each running call names
    # its owner (pid and process start, see ``owners.py``), so a call whose process
    # died can be told from one still running, and settled ``interrupted``.
    """
    CREATE TABLE tool_calls_m009 (
        id TEXT PRIMARY KEY,
        session_id TEXT REFERENCES sessions (id) ON DELETE CASCADE,
        message_id INTEGER REFERENCES messages (id) ON DELETE SET NULL,
        model_call_id TEXT,
        tool TEXT NOT NULL,
        arguments TEXT,
        caller TEXT,
        status TEXT NOT NULL
            CHECK (status IN ('running', 'ok', 'error', 'cancelled', 'denied', 'interrupted')),
        result TEXT,
        error TEXT,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        owner_pid INTEGER,
        owner_start TEXT
    )
    """,
    # A call recorded before keeps its id (it was unique in the store) as both ours and
    # the model's, and is tied to the earliest assistant message of its session that
    # asked for it.
    """
    INSERT INTO tool_calls_m009 (id, session_id, message_id, model_call_id, tool, arguments,
                                 caller, status, result, error, started_at, ended_at)
    SELECT t.id, t.session_id,
           (SELECT m.id FROM messages m,
                   json_each(CASE WHEN json_valid(m.tool_calls) THEN m.tool_calls ELSE '[]' END) c
             WHERE m.session_id = t.session_id AND m.role = 'assistant'
               AND json_type(c.value) = 'object' AND json_extract(c.value, '$.id') = t.id
             ORDER BY m.seq LIMIT 1),
           t.id, t.tool, t.arguments, t.caller, t.status, t.result, t.error, t.started_at,
           t.ended_at
      FROM tool_calls t
    """,
    "DROP TABLE tool_calls",
    "ALTER TABLE tool_calls_m009 RENAME TO tool_calls",
    "CREATE INDEX tool_calls_by_session ON tool_calls (session_id, started_at)",
    "CREATE INDEX tool_calls_by_started_at ON tool_calls (started_at)",
    """
    CREATE UNIQUE INDEX tool_calls_per_message ON tool_calls (message_id, model_call_id)
        WHERE message_id IS NOT NULL AND model_call_id IS NOT NULL
    """,
    "CREATE INDEX tool_calls_running ON tool_calls (status) WHERE status = 'running'",
    # A tool result names our id of the call it answers (``tool_call_id`` stays the
    # model's, which the model matches it by).
    "ALTER TABLE messages ADD COLUMN call_id TEXT",
    """
    UPDATE messages SET call_id = tool_call_id
     WHERE role = 'tool' AND tool_call_id IS NOT NULL AND EXISTS (
           SELECT 1 FROM tool_calls t WHERE t.id = messages.tool_call_id
              AND t.session_id IS messages.session_id)
    """,
    # One turn at a time per session: the lease its turn holds, with its owner. A lease
    # whose owner is gone is expired, whoever looks.
    """
    CREATE TABLE session_leases (
        session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        token TEXT NOT NULL,
        owner_pid INTEGER NOT NULL,
        owner_start TEXT NOT NULL,
        holder TEXT NOT NULL,
        taken_at INTEGER NOT NULL
    )
    """,
    # Runs may end ``interrupted`` (their owner died), and name the owner's start too.
    """
    CREATE TABLE schedule_runs_m009 (
        id INTEGER PRIMARY KEY,
        schedule_id INTEGER REFERENCES scheduled_prompts (id) ON DELETE SET NULL,
        title TEXT NOT NULL,
        fired_by TEXT NOT NULL CHECK (fired_by IN ('schedule', 'missed', 'manual', 'resume')),
        due_at INTEGER,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        ended_at INTEGER,
        status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'ok', 'failed', 'timed_out',
                                               'refused', 'skipped', 'paused', 'interrupted')),
        session_id TEXT REFERENCES sessions (id) ON DELETE SET NULL,
        error TEXT,
        result TEXT,
        needs TEXT,
        owner TEXT,
        pid INTEGER,
        resumes INTEGER REFERENCES schedule_runs (id) ON DELETE SET NULL,
        owner_start TEXT
    )
    """,
    """
    INSERT INTO schedule_runs_m009 (id, schedule_id, title, fired_by, due_at, created_at,
                                    started_at, ended_at, status, session_id, error, result,
                                    needs, owner, pid, resumes)
    SELECT id, schedule_id, title, fired_by, due_at, created_at, started_at, ended_at, status,
           session_id, error, result, needs, owner, pid, resumes FROM schedule_runs
    """,
    "DROP TABLE schedule_runs",
    "ALTER TABLE schedule_runs_m009 RENAME TO schedule_runs",
    "CREATE INDEX schedule_runs_by_schedule ON schedule_runs (schedule_id, id)",
    "CREATE INDEX schedule_runs_by_status ON schedule_runs (status)",
    "CREATE INDEX schedule_runs_by_started ON schedule_runs (started_at)",
)


def m009_call_owners_and_leases(db: Database) -> None:
    """Tool calls keyed by our id with their owner, tool results naming it, session
    leases, and runs that end ``interrupted``. Rebuilds ``tool_calls`` and
    ``schedule_runs`` (foreign keys off, checked before the commit)."""
    for statement in M009_STATEMENTS:
        db.execute(statement)


M010_STATEMENTS = (
    # What a person approved for one of a project's own extensions
    # (``.workbench/extensions/NAME``), kept under its identity ``project:FOLDER``
    # (never its manifest name, which the project's author chooses): the files as
    # approved (``{path: sha256}``), their digest and the consent JSON.
    """
    CREATE TABLE project_extensions (
        identity TEXT PRIMARY KEY,
        folder TEXT NOT NULL,
        name TEXT NOT NULL,
        digest TEXT NOT NULL,
        files TEXT NOT NULL,
        consent TEXT NOT NULL,
        approved_at INTEGER NOT NULL
    )
    """,
)


def m010_project_extension_consents(db: Database) -> None:
    """Consent for project extensions, per extension and per content."""
    for statement in M010_STATEMENTS:
        db.execute(statement)


M011_STATEMENTS = (
    # What a granted path was when it was granted: the path it resolved to, and the
    # device and inode there (both 0 when nothing was). A worker starts only when
    # the path is still that object, reached with no symbolic link.
    "ALTER TABLE grants ADD COLUMN resolved TEXT",
    "ALTER TABLE grants ADD COLUMN device INTEGER",
    "ALTER TABLE grants ADD COLUMN inode INTEGER",
)


def m011_grant_pins(db: Database) -> None:
    """Granted paths pinned to what they were when granted."""
    for statement in M011_STATEMENTS:
        db.execute(statement)


M012_STATEMENTS = (
    # One change a shell command made to a project folder, applied as a whole: its
    # files' earlier contents are kept (``change_blobs``, bounded) for undo.
    """CREATE TABLE change_sets (
        id INTEGER PRIMARY KEY,
        session_id TEXT,
        folder TEXT NOT NULL,
        command TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'applied',
        undone_at INTEGER,
        kept_bytes INTEGER NOT NULL DEFAULT 0,
        note TEXT NOT NULL DEFAULT ''
    )""",
    "CREATE INDEX change_sets_session ON change_sets (session_id, id)",
    # One path of a change set: what was there before (kind, mode, link target, the
    # blob of its contents) and what the change left (its identity, to see later
    # whether the person changed it since).
    """CREATE TABLE change_files (
        change_set INTEGER NOT NULL REFERENCES change_sets (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        path TEXT NOT NULL,
        action TEXT NOT NULL,
        kind TEXT NOT NULL,
        before_kind TEXT,
        before_mode INTEGER,
        before_target TEXT,
        before_blob TEXT,
        before_kept INTEGER NOT NULL DEFAULT 1,
        after_mode INTEGER,
        after_identity TEXT,
        copy TEXT,
        note TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (change_set, seq)
    )""",
    """CREATE TABLE change_blobs (
        sha256 TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        data BLOB NOT NULL
    )""",
    # A chat's own choice of the shell's network (its Tools menu), within the ceiling.
    """CREATE TABLE session_shell (
        session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        network TEXT NOT NULL
    )""",
)


def m012_change_sets(db: Database) -> None:
    """Change sets of the shell's commands, with their files' earlier contents."""
    for statement in M012_STATEMENTS:
        db.execute(statement)


def m013_session_shell_hosts(db: Database) -> None:
    """The hosts a chat allowed the shell to reach from a network card (``Allow for
    this chat``), kept with the chat so a resumed one still allows them."""
    db.execute("""CREATE TABLE session_shell_hosts (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        host TEXT NOT NULL,
        allowed_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, host)
    )""")


def m014_settled_through(db: Database) -> None:
    """How far each session is known to have every call answered: settling it reads
    only the messages after (``Store.unanswered_calls``)."""
    db.execute("ALTER TABLE sessions ADD COLUMN settled_seq INTEGER NOT NULL DEFAULT 0")


def m015_manifest_checks(db: Database) -> None:
    """The manifest texts whose tools' parameters passed their JSON Schema check, by
    the text's sha256, each sealed with the home's key (``ext/manifest_checks.py``): a
    start that finds its manifests here does not check them again."""
    db.execute("""CREATE TABLE manifest_checks (
        text_sha256 TEXT PRIMARY KEY,
        seal TEXT NOT NULL,
        checked_at INTEGER NOT NULL
    )""")


def m016_plugin_runs(db: Database) -> None:
    """A plugin's agent runs, kept until they end and the plugin is told
    (``store/plugin_runs.py``), their sessions hidden from the list of chats; and the
    scheduled tasks of plugins' actions, each a scheduled prompt the supervisor fires;
    the card documents plugins post (each a notification), and each chat's state of
    plugins' composer switches."""
    db.execute("""CREATE TABLE plugin_runs (
        id TEXT PRIMARY KEY,
        plugin TEXT NOT NULL,
        project TEXT NOT NULL,
        agent TEXT NOT NULL,
        prompt TEXT NOT NULL,
        session_id TEXT REFERENCES sessions (id) ON DELETE SET NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
        result TEXT,
        owner_pid INTEGER,
        owner_start TEXT,
        created_at INTEGER NOT NULL,
        ended_at INTEGER,
        done_sent INTEGER NOT NULL DEFAULT 0
    )""")
    db.execute("CREATE INDEX plugin_runs_by_plugin ON plugin_runs (plugin, created_at)")
    db.execute("CREATE INDEX plugin_runs_by_session ON plugin_runs (session_id)")
    db.execute("""CREATE TABLE plugin_tasks (
        schedule_id INTEGER PRIMARY KEY REFERENCES scheduled_prompts (id) ON DELETE CASCADE,
        plugin TEXT NOT NULL,
        action TEXT NOT NULL,
        project TEXT NOT NULL,
        entry TEXT NOT NULL,
        UNIQUE (plugin, action, project)
    )""")
    db.execute("""CREATE TABLE plugin_cards (
        notification_id INTEGER PRIMARY KEY REFERENCES notifications (id) ON DELETE CASCADE,
        plugin TEXT NOT NULL,
        project TEXT NOT NULL,
        card TEXT NOT NULL
    )""")
    db.execute("""CREATE TABLE plugin_switches (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        plugin TEXT NOT NULL,
        switch TEXT NOT NULL,
        is_on INTEGER NOT NULL DEFAULT 0,
        title TEXT,
        state TEXT NOT NULL DEFAULT 'idle' CHECK (state IN ('idle', 'busy', 'error')),
        PRIMARY KEY (session_id, plugin, switch)
    )""")


M017_STATEMENTS = (
    # The one change list holds changes made outside the project's files too: an
    # extension's tool that reported a change it made (a calendar event, a contact, a
    # table's rows). ``kind`` is ``files`` (a shell command's change set) or ``outside``;
    # an outside change keeps what the person sees in ``command`` (``folder`` empty), the
    # extension it belongs to, the call that made it, and the person-only tool of that
    # extension, with its arguments, that undoes it.
    "ALTER TABLE change_sets ADD COLUMN kind TEXT NOT NULL DEFAULT 'files'",
    "ALTER TABLE change_sets ADD COLUMN extension TEXT",
    "ALTER TABLE change_sets ADD COLUMN call_id TEXT",
    "ALTER TABLE change_sets ADD COLUMN undo_tool TEXT",
    "ALTER TABLE change_sets ADD COLUMN undo_arguments TEXT",
    "CREATE INDEX change_sets_extension ON change_sets (extension, id)",
)


def m017_outside_changes(db: Database) -> None:
    """Changes extensions make outside the project's files, in the one change list."""
    for statement in M017_STATEMENTS:
        db.execute(statement)


@dataclass(frozen=True)
class Migration:
    """One schema step.

    Attributes:
        number: The schema version the file has after it (1, 2, ...).
        name: The function's name, recorded in ``_migrations``.
        apply: Runs the statements; called inside the migration's transaction.
        rebuilds: Whether it rebuilds tables others refer to: it then runs with
            foreign keys off (their actions would fire on the old table's drop), and
            ``PRAGMA foreign_key_check`` must find nothing before it commits.
    """

    number: int
    name: str
    apply: Callable[[Database], None]
    rebuilds: bool = False


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "m001_initial", m001_initial),
    Migration(2, "m002_extension_consent", m002_extension_consent),
    Migration(3, "m003_memories_and_schedules", m003_memories_and_schedules),
    Migration(4, "m004_session_extension_switches", m004_session_extension_switches),
    Migration(5, "m005_schedule_runs", m005_schedule_runs),
    Migration(6, "m006_session_folder", m006_session_folder),
    Migration(7, "m007_session_tool_switches", m007_session_tool_switches),
    Migration(8, "m008_session_declines", m008_session_declines),
    Migration(9, "m009_call_owners_and_leases", m009_call_owners_and_leases, rebuilds=True),
    Migration(10, "m010_project_extension_consents", m010_project_extension_consents),
    Migration(11, "m011_grant_pins", m011_grant_pins),
    Migration(12, "m012_change_sets", m012_change_sets),
    Migration(13, "m013_session_shell_hosts", m013_session_shell_hosts),
    Migration(14, "m014_settled_through", m014_settled_through),
    Migration(15, "m015_manifest_checks", m015_manifest_checks),
    Migration(16, "m016_plugin_runs", m016_plugin_runs),
    Migration(17, "m017_outside_changes", m017_outside_changes),
)
"""Every migration, in order; numbers start at 1 and rise."""

LATEST_VERSION = MIGRATIONS[-1].number
"""The highest schema version this code knows."""

_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS _migrations (
    number INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at INTEGER NOT NULL
)
"""


def migrate(db: Database, source: str,
            migrations: Sequence[Migration] = MIGRATIONS) -> list[str]:
    """Apply every migration the file does not have yet.

    Each step takes the write lock first (``BEGIN IMMEDIATE``) and reads the
    version again, so two processes opening a new store at once apply each
    migration only once.

    Args:
        db: The open database, not inside a transaction.
        source: The file, for error messages.
        migrations: The steps to apply; the released ones unless a test passes others.

    Returns:
        The names of the migrations applied now (empty when already up to date).

    Raises:
        StoreTooNewError: When the file's version is newer than the last step's number.
        sqlite3.DatabaseError: When a statement fails; that migration is rolled back.
    """
    conn = db.conn
    latest = migrations[-1].number
    applied: list[str] = []
    for migration in migrations:
        if migration.rebuilds:
            # A no-op inside a transaction: switched before it begins, back after it ends.
            conn.execute("PRAGMA foreign_keys = OFF")
        try:
            if _apply(conn, db, migration, latest, source):
                applied.append(migration.name)
        finally:
            if migration.rebuilds:
                conn.execute("PRAGMA foreign_keys = ON")
    return applied


def _apply(conn: sqlite3.Connection, db: Database, migration: Migration, latest: int, source: str) -> bool:
    """Apply one migration in its own transaction; False when the file already has it."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > latest:
            raise StoreTooNewError(
                f"the store has schema version {version}, newer than {latest}, "
                "the highest this version of workbench knows; upgrade workbench to open it",
                where=source)
        if version >= migration.number:
            conn.execute("ROLLBACK")
            return False
        conn.execute(_MIGRATIONS_TABLE)
        migration.apply(db)
        if migration.rebuilds:
            broken = conn.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise sqlite3.IntegrityError(
                    f"{migration.name} would leave {len(broken)} row(s) referring to "
                    f"nothing (first: {broken[0]})")
        conn.execute("INSERT INTO _migrations (number, name, applied_at) VALUES (?, ?, ?)",
                     (migration.number, migration.name, time.time_ns() // 1_000_000))
        conn.execute(f"PRAGMA user_version = {int(migration.number)}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return True
