"""Where a tool's ``ctx.log`` lines go besides the event stream: the host's log file
(``logs/tools.log``, rotated) and the call's record in the store, which ``sessions show``
and ``host.chats.call_log`` read back after the call.

A call keeps at most ``MAX_LINES`` lines of at most ``MAX_LINE_CHARS`` characters in its
record (a note says how many more it wrote); the log file gets every line, cut to the
same length, and rotates at ``MAX_FILE_BYTES`` keeping ``BACKUPS`` old files.
"""

from __future__ import annotations

import logging
from logging.handlers import RotatingFileHandler
from pathlib import Path

from workbench.store import Store

LOG_FILE = "tools.log"
MAX_FILE_BYTES = 1_048_576
BACKUPS = 3
MAX_LINES = 200
MAX_LINE_CHARS = 4000

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
          "error": logging.ERROR}
"""``ctx.log``'s levels, as the logging module numbers them."""


class CallLog:
    """One host's tool log: a file handler of its own (not the process's root logger,
    so two hosts in one process never write each other's files) and the store."""

    def __init__(self, store: Store, logs_dir: Path) -> None:
        self.store = store
        self.path = logs_dir / LOG_FILE
        self.logger = logging.Logger("workbench.tools")  # unregistered: this host's alone
        self.logger.propagate = False
        self.handler: RotatingFileHandler | None = None
        self._counts: dict[str, int] = {}

    def _file(self) -> logging.Logger:
        if self.handler is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.handler = RotatingFileHandler(self.path, maxBytes=MAX_FILE_BYTES,
                                               backupCount=BACKUPS, encoding="utf-8")
            self.handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
            self.logger.addHandler(self.handler)
        return self.logger

    def write(self, call_id: str, tool: str, level: str, message: str) -> None:
        """Keep one line a call's tool logged (``level`` one of ``LEVELS``)."""
        text = message if len(message) <= MAX_LINE_CHARS else message[:MAX_LINE_CHARS] + "…"
        self._file().log(LEVELS[level], "%s [%s] %s", tool, call_id, text.replace("\n", "\\n"))
        count = self._counts.get(call_id, 0) + 1
        self._counts[call_id] = count
        if count <= MAX_LINES:
            self.store.log_tool_call(call_id, tool, level, text, defer=True)

    def finish(self, call_id: str, tool: str) -> None:
        """The call ended: note in its record how many lines were left out of it."""
        count = self._counts.pop(call_id, 0)
        if count > MAX_LINES:
            self.store.log_tool_call(call_id, tool, "warn",
                                     f"{count - MAX_LINES} more log lines are in {self.path}",
                                     defer=True)

    def close(self) -> None:
        if self.handler is not None:
            self.logger.removeHandler(self.handler)
            self.handler.close()
            self.handler = None
