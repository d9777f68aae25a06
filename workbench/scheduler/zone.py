"""The host's local time zone, as a zone with its daylight-saving rules.

``datetime.now().astimezone()`` only gives today's fixed offset, which would put
every schedule an hour off for half the year; schedules need the named zone (its
rules), found from ``TZ`` or ``/etc/localtime``.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
from collections.abc import Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

LOCALTIME = "/etc/localtime"


def local_zone(env: Mapping[str, str] | None = None) -> dt.tzinfo:
    """The host's zone: ``TZ`` when it names one, else ``/etc/localtime``, else UTC."""
    env = os.environ if env is None else env
    return _zone(env.get("TZ", "").lstrip(":"))


@functools.lru_cache(maxsize=8)
def _zone(tz: str) -> dt.tzinfo:
    if tz:
        try:
            return ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        target = os.readlink(LOCALTIME)
    except OSError:
        target = ""
    if "zoneinfo/" in target:
        try:
            return ZoneInfo(target.split("zoneinfo/", 1)[1])
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        with open(LOCALTIME, "rb") as handle:
            return ZoneInfo.from_file(handle, key="localtime")
    except (OSError, ValueError):
        return dt.timezone.utc


def zone_name(zone: dt.tzinfo) -> str:
    """A zone's name for people (``Europe/Paris``, ``UTC``)."""
    return str(getattr(zone, "key", None) or zone)
