"""What tests ask about real processes (importable from every test folder, beside the
root conftest)."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether the process ``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def processes_with(marker: str) -> list[int]:
    """PIDs on the host whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def described(pids: list[int]) -> str:
    """Each process as a person would ask about it when a test finds it left running:
    its state, its parent, how long it has run, and its command line."""
    lines = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
            ticks = os.sysconf("SC_CLK_TCK")
            with open("/proc/uptime") as handle:
                ran = float(handle.read().split()[0]) - int(fields[19]) / ticks
            lines.append(f"pid {pid} ({fields[0]}) parent {fields[1]}, {ran:.1f} s old: {command}")
        except (OSError, IndexError, ValueError):
            lines.append(f"pid {pid} (ended)")
    return "; ".join(lines)
