"""What the HTTP providers share: server-sent events, retries, error bodies, secrets.

``SSEDecoder`` turns bytes, cut anywhere (inside a UTF-8 character, inside a line),
into events. ``post_stream`` sends one streaming request: a 429 (or 503/529) is
retried a bounded number of times, honouring ``Retry-After`` within a bounded total
wait; any other error status becomes a ``ModelError`` carrying the server's own
message; a connection that drops mid-reply becomes a ``ModelError`` too (whatever
was already streamed stays with the caller). API keys never appear in a message:
``mask`` blanks them out of every text that leaves this module.

Imports httpx lazily (``post_stream`` only), so building a provider costs nothing.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import email.utils
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from workbench.config.settings import DEFAULTS
from workbench.errors import ModelError

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 503, 529})
"""Statuses worth retrying: rate limited, overloaded (529 is Anthropic's)."""


@dataclass
class Usage:
    """Tokens one reply used, as the server reported them.

    Attributes:
        input_tokens: Tokens of the prompt (OpenAI's ``prompt_tokens``).
        output_tokens: Tokens generated (OpenAI's ``completion_tokens``).
        raw: Everything the server said about usage (and llama.cpp's ``timings``).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class SSEEvent:
    """One server-sent event: its ``event:`` name (``message`` when absent) and data."""

    event: str
    data: str


class SSEDecoder:
    """Server-sent events from bytes that may be split anywhere.

    Follows the WHATWG rules: lines end in CRLF, LF or CR; ``:`` starts a comment
    (keep-alives); ``field:value`` drops one leading space from the value, so
    ``data:x`` and ``data: x`` are the same; several ``data`` lines join with a
    newline; a blank line dispatches the event.
    """

    def __init__(self) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._event = ""
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Add bytes; returns the events they complete."""
        self._buffer += self._text.decode(data)
        return self._drain(final=False)

    def close(self) -> list[SSEEvent]:
        """The stream ended: dispatch what is pending (some servers omit the last blank line)."""
        self._buffer += self._text.decode(b"", final=True)
        events = self._drain(final=True)
        if self._buffer:
            self._line(self._buffer)
            self._buffer = ""
        if self._data:
            events.append(self._dispatch())
        return events

    def _drain(self, *, final: bool) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        while True:
            match = re.search(r"\r\n|\r|\n", self._buffer)
            if match is None:
                return events
            if match.group() == "\r" and match.end() == len(self._buffer) and not final:
                return events  # a CR at the end may be the first half of a CRLF
            line, self._buffer = self._buffer[:match.start()], self._buffer[match.end():]
            if line == "":
                if self._data:
                    events.append(self._dispatch())
                else:
                    self._event = ""
            else:
                self._line(line)

    def _line(self, line: str) -> None:
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value

    def _dispatch(self) -> SSEEvent:
        event = SSEEvent(self._event or "message", "\n".join(self._data))
        self._event, self._data = "", []
        return event


def mask(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret (of 4 characters or more) replaced by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def safe_url(url: str) -> str:
    """``url`` without a user name or password in it."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2]))


def error_message(body: bytes) -> str:
    """The human part of an error body: ``error.message``, ``message``, ``detail``, or the text."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:500] or "(no message)"
    found: Any = data
    if isinstance(data, dict):
        found = data.get("error", data)
        if isinstance(found, dict):
            found = found.get("message") or found.get("detail") or found.get("type") or found
        elif found is data:
            found = data.get("message") or data.get("detail") or data
    return (found if isinstance(found, str) else json.dumps(found))[:500]


def retry_after(headers: Any, attempt: int) -> float:
    """Seconds to wait before retry ``attempt`` (1-based): ``retry-after-ms``,
    ``Retry-After`` in seconds or as an HTTP date, else exponential backoff from 1 s."""
    millis = headers.get("retry-after-ms")
    if millis:
        with contextlib.suppress(ValueError):
            return max(0.0, float(millis) / 1000)
    value = headers.get("retry-after")
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            when = None
        if when is not None:
            return max(0.0, when.timestamp() - time.time())
    return float(2 ** (attempt - 1))


@dataclass
class StreamRequest:
    """One streaming POST and how patient to be with it.

    Attributes:
        label: Who is asked, for messages (``openai:gpt-4o-mini``).
        url: Where to POST.
        body: The JSON body.
        headers: Extra headers (the API key goes here; it is never shown).
        secrets: Values to blank out of every message.
        max_retries: Retries after a 429/503/529 before giving up.
        max_wait_s: The longest total wait across retries; a server asking for
            more is not waited for.
        timeout_s: How long to wait for the server to send anything.
    """

    label: str
    url: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()
    max_retries: int = DEFAULTS.providers.max_retries
    max_wait_s: float = DEFAULTS.providers.max_retry_wait_s
    timeout_s: float = DEFAULTS.providers.timeout_s

    def fail(self, message: str, status: int | None = None) -> ModelHTTPError:
        return ModelHTTPError(mask(message, self.secrets), where=self.label, status=status)


class ModelHTTPError(ModelError):
    """A ``ModelError`` from talking to a server; ``status`` is the HTTP status, if one came."""

    def __init__(self, message: str, *, where: str | None = None, status: int | None = None,
                 server_message: str = "") -> None:
        super().__init__(message, where=where)
        self.status = status
        self.server_message = server_message


async def post_stream(request: StreamRequest, *, transport: Any = None) -> AsyncIterator[bytes]:
    """POST ``request`` and yield the reply's bytes as they arrive.

    Raises:
        ModelError: The server cannot be reached, answered an error (with its
            message), kept rate limiting past the retries or the wait bound, or the
            connection dropped before the reply was complete.
    """
    import httpx

    timeout = httpx.Timeout(request.timeout_s, connect=min(10.0, request.timeout_s))
    waited = 0.0
    where = safe_url(request.url)
    # A proxy from the environment must not carry a request to a server on this machine.
    loopback = urlsplit(request.url).hostname in ("127.0.0.1", "localhost", "::1")
    async with httpx.AsyncClient(timeout=timeout, transport=transport,
                                 trust_env=not loopback) as client:
        for attempt in range(1, request.max_retries + 2):
            try:
                async with client.stream("POST", request.url, json=request.body,
                                         headers=request.headers) as response:
                    if response.status_code in RETRY_STATUSES and attempt <= request.max_retries:
                        delay = retry_after(response.headers, attempt)
                        if waited + delay <= request.max_wait_s:
                            log.info("%s answered %s; retrying in %.1f s", request.label,
                                     response.status_code, delay)
                            waited += delay
                            await response.aclose()
                            await asyncio.sleep(delay)
                            continue
                    if response.status_code >= 400:
                        body = await response.aread()
                        raise _status_error(request, response.status_code, body, attempt, waited,
                                            response.headers)
                    async for chunk in response.aiter_bytes():
                        yield chunk
                    return
            except httpx.TimeoutException as exc:
                raise request.fail(f"no answer from {where} within {request.timeout_s:g} s "
                                   f"({type(exc).__name__})") from None
            except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
                raise request.fail(f"cannot reach {where}: {exc}") from None
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                raise request.fail(f"the connection to {where} dropped before the reply was "
                                   f"complete ({exc or type(exc).__name__}); what arrived is kept") from None
            except httpx.HTTPError as exc:
                raise request.fail(f"request to {where} failed: {exc}") from None


def _status_error(request: StreamRequest, status: int, body: bytes, attempt: int, waited: float,
                  headers: Any) -> ModelHTTPError:
    message = mask(error_message(body), request.secrets)
    error = _status_text(request, status, message, attempt, waited, headers)
    error.server_message = message
    return error


def _status_text(request: StreamRequest, status: int, message: str, attempt: int, waited: float,
                 headers: Any) -> ModelHTTPError:
    if status in RETRY_STATUSES:
        tries = "once" if attempt == 1 else f"{attempt} times"
        wanted = retry_after(headers, attempt)
        why = (f"; it asked to wait {wanted:g} s more, past the {request.max_wait_s:g} s bound"
               if attempt <= request.max_retries else f" after {waited:g} s of waiting")
        return request.fail(f"still rate limited or overloaded ({status}) after asking {tries}"
                            f"{why}: {message}", status)
    hint = ""
    if status in (401, 403):
        hint = " (check the API key)"
    return request.fail(f"the server answered {status}{hint}: {message}", status)
