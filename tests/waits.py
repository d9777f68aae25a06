"""Waiting, in tests outside the TUI, for what the test needs to have happened
(importable from every test folder, beside the root conftest).

A test waits for a condition it can name, never a fixed time: on a loaded machine
(the suite runs in parallel) anything may take seconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


async def until(condition: Callable[[], Any], what: str, bound_s: float = 30.0) -> Any:
    """Poll ``condition`` until it holds, and return what it returned. The bound only
    decides how long a failing test takes (``what`` says what did not happen)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + bound_s
    while not (held := condition()):
        if loop.time() > end:
            raise AssertionError(f"{what} did not happen within {bound_s:g} s")
        await asyncio.sleep(0.02)
    return held
