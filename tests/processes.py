"""What tests ask about real processes (importable from every test folder, beside the
root conftest)."""

from __future__ import annotations


def alive(pid: int) -> bool:
    """Whether the process ``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False
