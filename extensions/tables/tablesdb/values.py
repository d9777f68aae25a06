"""Labels, names and typed values: what a request may say, checked before any SQL.

Labels (of tables and columns) and database names are only ever data in the
catalog; identifiers in SQL are the internal ids made here (``t_…``, ``c_…``).
"""

from __future__ import annotations

import math
import re
import secrets
import unicodedata
from datetime import datetime, timedelta, timezone
from typing import Any

from tablesdb.errors import invalid

TYPES = ("text", "integer", "real", "boolean", "datetime")
SQL_TYPE = {"text": "TEXT", "integer": "INTEGER", "real": "REAL", "boolean": "INTEGER",
            "datetime": "TEXT"}
ROW_ID = "_id"
INT_MIN, INT_MAX = -(2 ** 63), 2 ** 63 - 1
SAFE = 2 ** 53
MAX_TEXT_BYTES = 1024 * 1024
"""A cell of text holds at most 1 MiB (a default at most 1024 bytes)."""
MAX_DEFAULT_BYTES = 1024
_ID = re.compile(r"^[tc]_[0-9a-f]{16}$")


def new_id(prefix: str) -> str:
    """A random internal identifier: ``t_`` or ``c_`` and 16 hex digits."""
    return f"{prefix}_{secrets.token_hex(8)}"


def ident(internal: str) -> str:
    """``internal`` quoted as an SQL identifier, after checking it is one of ours."""
    if not _ID.match(internal):
        raise ValueError(f"not an internal identifier: {internal!r}")
    return f'"{internal}"'


def _bad_char(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp") or unicodedata.bidirectional(ch) in (
        "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI")


def label(value: Any, what: str) -> str:
    """A table's or column's label: 1 to 64 characters, no control, format or
    bidirectional characters, no leading or trailing space."""
    if not isinstance(value, str) or not 1 <= len(value) <= 64:
        raise invalid(f"{what} must be a label of 1 to 64 characters")
    if value != value.strip():
        raise invalid(f"{what} {value!r} starts or ends with a space")
    if any(_bad_char(ch) for ch in value):
        raise invalid(f"{what} {value!r} holds a control, format or bidirectional character")
    return value


def database_name(value: Any) -> str:
    """A database's name: 1 to 80 characters, no control characters, no leading or
    trailing space."""
    if not isinstance(value, str) or not 1 <= len(value) <= 80:
        raise invalid("a database name must be 1 to 80 characters")
    if value != value.strip():
        raise invalid(f"the database name {value!r} starts or ends with a space")
    if any(_bad_char(ch) for ch in value):
        raise invalid(f"the database name {value!r} holds a control character")
    return value


def fold(text: str) -> str:
    """How labels are compared for uniqueness: ignoring case."""
    return text.casefold()


# --- datetimes ----------------------------------------------------------------

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$")


def datetime_value(value: Any, what: str) -> str:
    """An RFC 3339 time as stored: UTC with nine fractional digits, ``…Z``."""
    if not isinstance(value, str) or len(value) > 64:
        raise invalid(f"{what} must be an RFC 3339 time such as 2026-01-31T09:30:00Z")
    match = _RFC3339.match(value)
    if not match:
        raise invalid(f"{what} {value!r} is not an RFC 3339 time (like 2026-01-31T09:30:00Z)")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    nanos = int((match.group(7) or "").ljust(9, "0"))
    zone = match.group(8)
    try:
        moment = datetime(year, month, day, hour, minute, min(second, 59), tzinfo=timezone.utc)
    except ValueError:
        raise invalid(f"{what} {value!r} is not a real date and time") from None
    if second > 59:
        raise invalid(f"{what} {value!r} has a leap second, which is not kept")
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            raise invalid(f"{what} {value!r} has an impossible UTC offset")
        try:
            moment -= sign * timedelta(hours=hours, minutes=minutes)
        except OverflowError:
            raise invalid(f"{what} {value!r} is out of range") from None
    if not 1 <= moment.year <= 9999:
        raise invalid(f"{what} {value!r} is out of range")
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos:09d}Z"


# --- typed values ---------------------------------------------------------------


def integer_value(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise invalid(f"{what} must be a whole number, not {json_word(value)}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer() and abs(value) <= SAFE:
        number = int(value)
    elif isinstance(value, str) and re.fullmatch(r"[+-]?\d{1,20}", value.strip() or "x"):
        number = int(value.strip())
    else:
        raise invalid(f"{what} must be a whole number (a JSON integer or a decimal string)")
    if not INT_MIN <= number <= INT_MAX:
        raise invalid(f"{what} does not fit in 64 bits")
    return number


def json_word(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    return type(value).__name__


def cell(kind: str, value: Any, what: str, *, limit: int = MAX_TEXT_BYTES) -> Any:
    """``value`` (from JSON) as stored in a column of logical type ``kind``; ``None``
    stays ``None``. Refuses a value of the wrong type, naming ``what``."""
    if value is None:
        return None
    if kind == "text":
        if not isinstance(value, str):
            raise invalid(f"{what} must be text, not {json_word(value)}")
        if len(value.encode("utf-8", "surrogatepass")) > limit:
            raise invalid(f"{what} is longer than {limit} bytes")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise invalid(f"{what} is not valid Unicode text") from None
        return value
    if kind == "integer":
        return integer_value(value, what)
    if kind == "real":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise invalid(f"{what} must be a number, not {json_word(value)}")
        try:
            number = float(value)
        except OverflowError:
            raise invalid(f"{what} is too large for a number") from None
        if not math.isfinite(number):
            raise invalid(f"{what} must be a finite number")
        if isinstance(value, int) and int(number) != value:
            raise invalid(f"{what} cannot be stored exactly as a number")
        return number
    if kind == "boolean":
        if not isinstance(value, bool):
            raise invalid(f"{what} must be true or false")
        return 1 if value else 0
    if kind == "datetime":
        return datetime_value(value, what)
    raise invalid(f"unknown type {kind!r}")


def default(kind: str, value: Any, what: str) -> Any:
    """A column's default, validated for its type (text: at most 1024 bytes, no
    control characters)."""
    if kind == "text" and isinstance(value, str) and any(unicodedata.category(c) == "Cc" for c in value):
        raise invalid(f"{what} holds a control character")
    return cell(kind, value, what, limit=MAX_DEFAULT_BYTES)


def out(kind: str, stored: Any) -> Any:
    """A stored value as JSON: booleans as true/false, integers past 2^53 as strings."""
    if stored is None:
        return None
    if kind == "boolean":
        return bool(stored)
    if kind == "integer" and isinstance(stored, int) and abs(stored) > SAFE:
        return str(stored)
    return stored


def row_id_out(rowid: int) -> Any:
    return str(rowid) if rowid > SAFE else rowid


def literal(kind: str, stored: Any) -> str:
    """A strict SQL literal for a validated default (``DEFAULT`` needs one): a
    number written by Python, or text with quotes doubled."""
    if stored is None:
        return "NULL"
    if kind in ("integer", "boolean"):
        return str(int(stored))
    if kind == "real":
        text = repr(float(stored))
        return text if math.isfinite(float(stored)) else "NULL"
    return "'" + str(stored).replace("'", "''") + "'"
