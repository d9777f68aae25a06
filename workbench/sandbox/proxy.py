"""The host's allowlisting HTTP proxy: the only way out of a worker's network namespace.

A worker with a ``net`` grant gets a private network namespace with loopback alone;
its proxy port there is a listening socket the host accepts on. Each connection asks
``CONNECT host:port`` (HTTPS and anything tunnelled) or sends one absolute-form HTTP
request (``GET http://host:port/path``), forwarded in origin form with
``Connection: close``. The proxy lets it through only when a grant covers that host
and port, and only to an address it checked itself:

- A target is resolved once, here on the host (``resolve``, the system resolver), and
  the connection goes to the addresses that resolution returned and the check passed
  — never to a name looked up again. Several checked addresses are tried the happy
  eyeballs way (RFC 8305: families interleaved, attempts staggered).
- Every resolved address is checked against the internal ranges (``internal``):
  loopback, private, link-local, shared (CGNAT), unique-local, NAT64, 6to4 and
  IPv4-mapped addresses embedding an internal IPv4 address, Teredo, multicast,
  reserved, documentation and benchmarking ranges. A name (granted by name or
  through ``*``) never reaches an internal address, whatever it resolves to.
- An internal address is reached only through a grant that names it literally, by a
  request that names the same address literally: ``net 127.0.0.1:8080`` lets a tool
  reach ``http://127.0.0.1:8080/`` and nothing else — not ``localhost``, not
  ``127.1``, not ``[::ffff:127.0.0.1]``.
- A Host header that differs from the target (or more than one) is refused, and so
  is a tunnel to a name whose TLS ClientHello asks for another server name (SNI), or
  cannot be checked (split across records): a granted name must not reach another
  site served from the same address. (A Host header inside TLS is out of sight.)

Every refusal and failure is answered with a status whose reason phrase and plain-text
body say what happened (clients such as urllib and httpx show the reason phrase when a
CONNECT fails): 403 refused by the grants (naming ``host:port`` and the rule), 502 the
target could not be resolved, refused the connection or did not answer, 408 the head
did not arrive in time, 431 the head is too large, 429 too many connections, 400 a
request the proxy does not understand. None ends in an empty reply or a reset. Each is
also reported to ``on_event`` (the worker's host sends it to the call's log and, for
refusals, to ``grants explain``).

Per worker, at most ``MAX_CONCURRENT`` connections are open at once and
``MAX_CONNECTIONS`` are accepted in all; a request head must arrive whole within
``HEAD_TIMEOUT`` seconds and ``MAX_HEAD`` bytes; a tunnel with no byte either way for
``IDLE_TIMEOUT`` seconds is closed. The module's values are read when used, so a test
can change them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from workbench.sandbox.policy import NetEndpoint

log = logging.getLogger(__name__)

MAX_HEAD = 64 * 1024
"""Bytes a request head (request line and headers) may have."""
HEAD_TIMEOUT = 10.0
"""Seconds a request head has to arrive whole, from the connection's accept."""
RESOLVE_TIMEOUT = 10.0
CONNECT_TIMEOUT = 10.0
"""Seconds to reach the target, across every checked address."""
IDLE_TIMEOUT = 120.0
"""Seconds a tunnel or forwarded request may pass without a byte either way."""
MAX_CONCURRENT = 32
"""Connections one worker may have open through the proxy at once."""
MAX_CONNECTIONS = 512
"""Connections one worker may open through the proxy in all (its one call)."""
MAX_REPORTED = 20
"""Events reported one by one per worker; the next is one line saying more were not."""
LINGER = 2.0
"""Seconds the proxy keeps reading (and discarding) after it answered a refusal."""
MAX_ADDRESSES = 8
"""Checked addresses of one name tried at most (in the resolver's order)."""
STAGGER = 0.25
"""Seconds between the happy-eyeballs attempts (RFC 8305's connection attempt delay)."""

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# --- which addresses are internal -----------------------------------------------------------

_V4 = [(ipaddress.IPv4Network(net), label) for net, label in (
    ("0.0.0.0/8", "'this network' (0.0.0.0/8)"),
    ("10.0.0.0/8", "private (10.0.0.0/8)"),
    ("100.64.0.0/10", "shared address space (CGNAT, 100.64.0.0/10)"),
    ("127.0.0.0/8", "loopback (127.0.0.0/8)"),
    ("169.254.0.0/16", "link-local (169.254.0.0/16)"),
    ("172.16.0.0/12", "private (172.16.0.0/12)"),
    ("192.0.0.0/24", "IETF protocol assignments (192.0.0.0/24)"),
    ("192.0.2.0/24", "documentation (TEST-NET-1, 192.0.2.0/24)"),
    ("192.88.99.0/24", "6to4 relay anycast (192.88.99.0/24)"),
    ("192.168.0.0/16", "private (192.168.0.0/16)"),
    ("198.18.0.0/15", "benchmarking (198.18.0.0/15)"),
    ("198.51.100.0/24", "documentation (TEST-NET-2, 198.51.100.0/24)"),
    ("203.0.113.0/24", "documentation (TEST-NET-3, 203.0.113.0/24)"),
    ("224.0.0.0/4", "multicast (224.0.0.0/4)"),
    ("255.255.255.255/32", "broadcast (255.255.255.255)"),
    ("240.0.0.0/4", "reserved (240.0.0.0/4)"),
)]

_V6 = [(ipaddress.IPv6Network(net), label) for net, label in (
    ("::/128", "unspecified (::)"),
    ("::1/128", "loopback (::1)"),
    ("64:ff9b::/96", "NAT64 (64:ff9b::/96)"),
    ("64:ff9b:1::/48", "local-use NAT64 (64:ff9b:1::/48)"),
    ("100::/64", "discard-only (100::/64)"),
    ("2001::/32", "Teredo (2001::/32)"),
    ("2001:2::/48", "benchmarking (2001:2::/48)"),
    ("2001:10::/28", "ORCHID (2001:10::/28)"),
    ("2001:20::/28", "ORCHIDv2 (2001:20::/28)"),
    ("2001:db8::/32", "documentation (2001:db8::/32)"),
    ("3fff::/20", "documentation (3fff::/20)"),
    ("fc00::/7", "unique-local (fc00::/7)"),
    ("fe80::/10", "link-local (fe80::/10)"),
    ("fec0::/10", "site-local (fec0::/10)"),
    ("ff00::/8", "multicast (ff00::/8)"),
)]
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")


def internal(address: Address) -> str | None:
    """Why ``address`` is internal (``loopback (127.0.0.0/8)``…), or None when it is a
    public unicast address.

    The stdlib's ``is_private``/``is_global`` are not enough on their own: before
    Python 3.13 they miss IPv4-mapped addresses (``::ffff:127.0.0.1`` is neither
    loopback nor private there), they never look inside 6to4 or IPv4-compatible
    addresses, and they call 100.64.0.0/10 neither private nor global. So the ranges
    are listed here, addresses embedding an IPv4 address are judged by it, every IPv6
    address outside global unicast (2000::/3) is reserved, and anything the stdlib
    does not call global is internal too.
    """
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            return f"scoped to an interface (%{address.scope_id})"
        plain = ipaddress.IPv6Address(int(address))
        if plain in _MAPPED or (plain in _COMPATIBLE and int(plain) > 1):
            embedded = ipaddress.IPv4Address(int(plain) & 0xFFFFFFFF)
            why = internal(embedded)
            kind = "IPv4-mapped" if plain in _MAPPED else "IPv4-compatible"
            return f"{why}, as an {kind} address" if why else None
        if plain in _SIX_TO_FOUR:
            embedded = ipaddress.IPv4Address((int(plain) >> 80) & 0xFFFFFFFF)
            why = internal(embedded)
            return f"{why}, inside the 6to4 address" if why else None
        for network, label in _V6:
            if plain in network:
                return label
        if plain not in _GLOBAL_UNICAST:
            return "reserved (outside global unicast 2000::/3)"
        return None if plain.is_global else "not globally routable"
    for network, label in _V4:
        if address in network:
            return label
    return None if address.is_global else "not globally routable"


def parse_address(text: str) -> Address | None:
    """``text`` as an IP address (brackets around IPv6 allowed), or None for a name.

    Only the standard forms count: ``127.1`` or ``2130706433`` are names here, which
    the resolver turns into addresses that are then checked like any other.
    """
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


async def resolve(host: str, port: int) -> list[str]:
    """The addresses the system resolver gives ``host``; the proxy's only lookup.

    Raises:
        OSError: ``host`` cannot be resolved (``socket.gaierror``).
    """
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [info[4][0] for info in infos]


# --- what a grant lets through --------------------------------------------------------------


def _ports_cover(endpoint: NetEndpoint, port: int) -> bool:
    return any(p == "*" or p == port for p in endpoint.ports)


def _name(host: str) -> str:
    return host.lower().rstrip(".")


def _shown(endpoint: NetEndpoint) -> str:
    ports = ",".join(str(p) for p in endpoint.ports) or "no port"
    host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
    return f"net {host}:{ports}"


@dataclass(eq=False)
class Refused(Exception):
    """A request the proxy answers itself, with ``status`` and ``reason``."""

    status: int
    reason: str
    target: str = ""


class TunnelRefused(Refused):
    """A CONNECT tunnel refused after it was established (its TLS server name differs
    from the granted name): the tool gets a TLS alert, not an HTTP answer."""


ALERT_UNRECOGNIZED_NAME = bytes([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 112])
"""A fatal TLS alert ``unrecognized_name``, the answer to a refused server name."""


def client_hello_name(record: bytes) -> str | None:
    """The server name (SNI) a TLS ClientHello asks for, or None when it names none.

    ``record`` is the first TLS record's payload. Raises ``ValueError`` when it is not
    a whole ClientHello (split across records, or malformed): its name cannot be checked.
    """
    if len(record) < 4 or record[0] != 1:
        raise ValueError("the first TLS record is not a ClientHello")
    size = int.from_bytes(record[1:4], "big")
    hello = record[4:4 + size]
    if len(hello) < size:
        raise ValueError("the ClientHello is split across TLS records")
    at = 2 + 32  # version, random

    def take(width: int) -> bytes:
        nonlocal at
        if at + width > len(hello):
            raise ValueError("the ClientHello is malformed")
        piece = hello[at:at + width]
        at += width
        return piece

    take(take(1)[0])  # session id
    take(int.from_bytes(take(2), "big"))  # cipher suites
    take(take(1)[0])  # compression methods
    if at == len(hello):
        return None  # no extensions
    end = at + int.from_bytes(take(2), "big")
    while at < end:
        kind, data = int.from_bytes(take(2), "big"), take(int.from_bytes(take(2), "big"))
        if kind != 0:
            continue
        if len(data) < 5 or data[2] != 0:
            raise ValueError("the ClientHello's server name is malformed")
        length = int.from_bytes(data[3:5], "big")
        if len(data) < 5 + length:
            raise ValueError("the ClientHello's server name is malformed")
        return data[5:5 + length].decode("ascii", "replace")
    return None


async def _first_bytes(source: asyncio.StreamReader, host: str, authority: str) -> bytes:
    """What the tool sends first in a tunnel to the name ``host``; a TLS ClientHello is
    read whole and its server name must be ``host`` (or absent): a name grant reaches
    that site, not another one served from the same address.

    Raises:
        TunnelRefused: The ClientHello names another server, or cannot be checked.
    """
    data = await source.read(65536)
    if not data or data[0] != 0x16:
        return data  # not TLS: passed as it is
    while len(data) < 5 or len(data) < 5 + int.from_bytes(data[3:5], "big"):
        more = await source.read(65536)
        if not more:
            return data
        data += more
    try:
        name = client_hello_name(data[5:5 + int.from_bytes(data[3:5], "big")])
    except ValueError as exc:
        raise TunnelRefused(403, f"the TLS handshake to {authority} cannot be checked ({exc})",
                            authority) from None
    if name is not None and _name(name) != _name(host):
        raise TunnelRefused(403, f"the TLS server name {_printable(name, 100)!r} differs from the "
                            f"tunnel's target {authority}", authority)
    return data


def _authority(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _plan(endpoints: list[NetEndpoint], host: str, port: int) -> tuple[Address | None, list[NetEndpoint]]:
    """The target's literal address (None for a name) and the grants that cover it.

    Raises:
        Refused: 403, no grant covers the target.
    """
    literal = parse_address(host)
    target = _authority(host, port)  # as the tool wrote it
    covering = []
    for endpoint in endpoints:
        if not _ports_cover(endpoint, port):
            continue
        granted = parse_address(endpoint.host)
        if endpoint.host == "*":
            covering.append(endpoint)
        elif literal is not None and granted is not None and granted == literal:
            covering.append(endpoint)
        elif literal is None and granted is None and _name(endpoint.host) == _name(host):
            covering.append(endpoint)
    if covering:
        return literal, covering
    same_host = [e for e in endpoints if e.host == "*" or (
        parse_address(e.host) == literal if literal is not None else _name(e.host) == _name(host))]
    if same_host:
        granted = ", ".join(_shown(e) for e in same_host)
        raise Refused(403, f"{target} is not granted to this tool: port {port} is not among the "
                      f"ports granted for {host} (granted: {granted})", target)
    granted = ", ".join(_shown(e) for e in endpoints) or "nothing"
    hint = (" (an address is matched by the address written in the grant, never through a name "
            "or another spelling)" if any(parse_address(e.host) for e in endpoints) else "")
    raise Refused(403, f"{target} is not granted to this tool (granted: {granted}){hint}", target)


async def _checked(host: str, port: int, literal: Address | None,
                   covering: list[NetEndpoint]) -> list[Address]:
    """The addresses the connection may go to: resolved once, every one checked.

    Raises:
        Refused: 502 the name cannot be resolved; 403 every address is internal.
    """
    target = _authority(host, port)  # as the tool wrote it
    if literal is not None:
        why = internal(literal)
        if why is None:
            return [literal]
        if any(parse_address(e.host) == literal for e in covering):
            return [literal]  # granted by its literal address: the person asked for it
        raise Refused(403, f"{target} is {why}: a wildcard grant never reaches an internal "
                      f"address (grant net {_authority(str(literal), port)} to reach it)", target)
    try:
        async with asyncio.timeout(RESOLVE_TIMEOUT):
            found = await resolve(host, port)
    except TimeoutError:
        raise Refused(502, f"cannot resolve {host}: no answer within {RESOLVE_TIMEOUT:g} s",
                      target) from None
    except (OSError, UnicodeError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise Refused(502, f"cannot resolve {host}: {detail}", target) from None
    addresses, inside = [], []
    for text in dict.fromkeys(found):
        address = parse_address(text)
        if address is None:
            continue
        why = internal(address)
        if why is None:
            addresses.append(address)
        else:
            inside.append((address, why))
    if addresses:
        return addresses[:MAX_ADDRESSES]
    if not inside:
        raise Refused(502, f"cannot resolve {host}: the resolver returned no address", target)
    listed = "; ".join(f"{address} is {why}" for address, why in inside)
    raise Refused(403, f"{host} resolves only to internal addresses: {listed}. A name never reaches "
                  f"an internal address; grant the address itself (net "
                  f"{_authority(str(inside[0][0]), port)}) to reach it", target)


def _interleave(addresses: list[Address]) -> list[Address]:
    """RFC 8305 order: families alternate, starting with the first one given."""
    first = [a for a in addresses if a.version == addresses[0].version]
    other = [a for a in addresses if a.version != addresses[0].version]
    ordered = []
    for index in range(max(len(first), len(other))):
        ordered.extend(group[index] for group in (first, other) if index < len(group))
    return ordered


async def dial(addresses: list[Address], port: int) -> socket.socket:
    """A connected socket to one of ``addresses`` (happy eyeballs across them alone).

    Raises:
        OSError: Every address refused or failed; the message names each.
        TimeoutError: None answered within ``CONNECT_TIMEOUT``.
    """
    loop = asyncio.get_running_loop()

    async def attempt(address: Address) -> socket.socket:
        sock = socket.socket(socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                             socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            await loop.sock_connect(sock, (str(address), port))
        except BaseException:
            sock.close()
            raise
        return sock

    ordered = _interleave(addresses)
    pending: set[asyncio.Task] = set()
    tried: dict[asyncio.Task, Address] = {}
    errors: list[str] = []
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            for index, address in enumerate(ordered):
                task = asyncio.ensure_future(attempt(address))
                tried[task] = address
                pending.add(task)
                last = index == len(ordered) - 1
                while pending:
                    done, pending = await asyncio.wait(pending, timeout=None if last else STAGGER,
                                                       return_when=asyncio.FIRST_COMPLETED)
                    if not done:
                        break  # the stagger passed: start the next attempt alongside
                    for finished in done:
                        if finished.exception() is None:
                            return finished.result()
                        errors.append(f"{_authority(str(tried[finished]), port)}: "
                                      f"{_os_reason(finished.exception())}")
        raise OSError("; ".join(errors) or "no address to connect to")
    finally:
        for task in pending:
            task.cancel()
        for leftover in await asyncio.gather(*pending, return_exceptions=True):
            if isinstance(leftover, socket.socket):  # connected just as another won
                leftover.close()


def _os_reason(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "refused the connection"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


# --- the proxy ------------------------------------------------------------------------------

REASONS = {400: "Bad Request", 403: "Forbidden", 408: "Request Timeout", 429: "Too Many Requests",
           431: "Request Header Fields Too Large", 502: "Bad Gateway"}


def _printable(text: str, limit: int) -> str:
    """``text`` as printable ASCII on one line (it may carry what a tool wrote)."""
    clean = "".join(ch if " " <= ch <= "~" else "?" for ch in text)
    return clean if len(clean) <= limit else clean[:limit - 3] + "..."


@dataclass
class Event:
    """One answer the proxy gave itself: ``refused`` (403, 429) or ``failed`` (the rest)."""

    status: int
    target: str
    reason: str
    at: float

    @property
    def outcome(self) -> str:
        return "refused" if self.status in (403, 429) else "failed"

    @property
    def message(self) -> str:
        target = f" {self.target}" if self.target else ""
        return (f"network: {self.outcome}{target} ({self.status} "
                f"{REASONS.get(self.status, 'Error')}): {self.reason}")

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "outcome": self.outcome, "target": self.target,
                "reason": self.reason, "message": self.message, "at": self.at}


class Proxy:
    """Serves one worker's proxy socket until ``close``.

    Args:
        endpoints: The granted endpoints.
        on_event: Called with each ``Event`` the proxy answers itself (the first
            ``MAX_REPORTED`` of them, then one saying more were not reported).
        per_call: The proxy serves one call (a tool's worker), so ``MAX_CONNECTIONS``
            bounds it; False for a long-lived process (a sandboxed MCP server), which
            only ``MAX_CONCURRENT`` bounds.
    """

    def __init__(self, endpoints: list[NetEndpoint],
                 on_event: Callable[[Event], None] | None = None, *,
                 per_call: bool = True) -> None:
        self.decide: Callable[[str, int], Awaitable[str | None]] | None = None
        """Asked about a target no endpoint covers (the shell's network card): None lets
        it through as if granted by name, a text refuses it with that reason."""
        self.endpoints = endpoints
        self.on_event = on_event
        self.per_call = per_call
        self.server: asyncio.AbstractServer | None = None
        self.events: list[Event] = []
        """What the proxy answered itself (refusals and failures), in order."""
        self.accepted = 0
        self.open = 0
        self._tasks: set[asyncio.Task] = set()

    @property
    def refused(self) -> list[str]:
        """``host:port`` targets the tool asked for and was refused."""
        return [e.target for e in self.events if e.outcome == "refused"]

    @classmethod
    async def serve(cls, listener: socket.socket, endpoints: list[NetEndpoint],
                    on_event: Callable[[Event], None] | None = None, *,
                    per_call: bool = True) -> Proxy:
        """Accept on ``listener`` (the worker's proxy socket) until ``close``."""
        listener.setblocking(False)
        proxy = cls(endpoints, on_event, per_call=per_call)
        proxy.server = await asyncio.start_server(proxy._handle, sock=listener, limit=MAX_HEAD)
        return proxy

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in list(self._tasks):
            task.cancel()

    def _record(self, status: int, target: str, reason: str) -> None:
        event = Event(status, target, reason, time.time())
        self.events.append(event)
        log.info("%s", event.message)  # the host's log, also for a sandboxed MCP server's proxy
        if self.on_event is None or len(self.events) > MAX_REPORTED + 1:
            return
        if len(self.events) == MAX_REPORTED + 1:
            event = Event(status, target, f"{reason} (further refusals and failures of this call "
                          "are answered but not reported one by one)", event.at)
        try:
            self.on_event(event)
        except Exception as exc:  # the tool still gets its answer
            log.warning("a proxy event could not be reported: %s: %s", type(exc).__name__, exc)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        self.accepted += 1
        self.open += 1
        try:
            if self.per_call and self.accepted > MAX_CONNECTIONS:
                raise Refused(429, f"this tool has opened {MAX_CONNECTIONS} connections through "
                              "the proxy, the most one call may", "connections")
            if self.open > MAX_CONCURRENT:
                raise Refused(429, f"this tool already has {MAX_CONCURRENT} connections open "
                              "through the proxy, the most it may have at once", "connections")
            await self._proxy(reader, writer)
        except TunnelRefused as refusal:
            reason, target = _printable(refusal.reason, 2000), _printable(refusal.target, 300)
            self._record(refusal.status, target, reason)
            with contextlib.suppress(Exception):
                writer.write(ALERT_UNRECOGNIZED_NAME)
                async with asyncio.timeout(5):
                    await writer.drain()
        except Refused as refusal:
            # Both carry text the tool wrote (a host name): printable ASCII only.
            reason, target = _printable(refusal.reason, 2000), _printable(refusal.target, 300)
            self._record(refusal.status, target, reason)
            await self._reply(writer, refusal.status, reason)
            await self._linger(reader)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the tool went away
        except asyncio.CancelledError:
            # ``close``: nobody awaits this task, and Python 3.11's stream callback would
            # log a cancelled one as an error.
            pass
        except Exception as exc:  # never an empty reply, never a traceback in the host
            self._record(502, "", f"the proxy failed: {type(exc).__name__}: {exc}")
            await self._reply(writer, 502, f"the proxy failed: {type(exc).__name__}")
        finally:
            self.open -= 1
            if task is not None:
                self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _head(self, reader: asyncio.StreamReader) -> bytes:
        try:
            async with asyncio.timeout(HEAD_TIMEOUT):
                return await reader.readuntil(b"\r\n\r\n")
        except TimeoutError:
            raise Refused(408, f"the request head did not arrive whole within {HEAD_TIMEOUT:g} s") from None
        except (asyncio.LimitOverrunError, ValueError):
            raise Refused(431, f"the request head is larger than {MAX_HEAD} bytes") from None

    async def _proxy(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await self._head(reader)
        line, _, rest = head.partition(b"\r\n")
        parts = line.decode("latin-1").split(" ")
        if len(parts) != 3:
            raise Refused(400, "malformed request line")
        method, target, version = parts
        headers = _headers(rest)
        if method.upper() == "CONNECT":
            host, port = _connect_target(target)
            forward = b""
        else:
            host, port, forward = _absolute_target(method, target, version, headers)
        authority = _authority(host, port)
        hosts = [value for name, value in headers if name.lower() == "host"]
        if len(hosts) > 1:
            raise Refused(403, f"the request to {authority} has {len(hosts)} Host headers", authority)
        if hosts and not _same_authority(hosts[0], host, port, default=None if forward == b"" else 80):
            raise Refused(403, f"the Host header {_printable(hosts[0], 100)!r} differs from the "
                          f"request target {authority}", authority)
        try:
            literal, covering = _plan(self.endpoints, host, port)
        except Refused:
            if self.decide is None:
                raise
            refusal = await self.decide(host, port)
            if refusal is not None:
                raise Refused(403, refusal, authority) from None
            literal, covering = parse_address(host), [NetEndpoint(host, [port])]
        addresses = await _checked(host, port, literal, covering)
        try:
            upstream = await dial(addresses, port)
        except TimeoutError:
            raise Refused(502, f"{authority} did not answer within {CONNECT_TIMEOUT:g} s",
                          authority) from None
        except OSError as exc:
            raise Refused(502, f"cannot reach {authority}: {exc.strerror or exc}", authority) from None
        up_reader, up_writer = await asyncio.open_connection(sock=upstream)
        try:
            if forward:
                up_writer.write(forward)
            else:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            check = None
            if not forward and literal is None:
                async def check(source: asyncio.StreamReader) -> bytes:
                    return await _first_bytes(source, host, authority)
            await _relay(reader, writer, up_reader, up_writer, check)
        finally:
            with contextlib.suppress(Exception):
                up_writer.close()

    @staticmethod
    async def _reply(writer: asyncio.StreamWriter, status: int, message: str) -> None:
        reason = REASONS.get(status, "Error")
        phrase = _printable(f"{reason} (workbench proxy): {message}", 400)
        body = f"{message}\n".encode("utf-8", "replace")
        with contextlib.suppress(Exception):
            writer.write(f"HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                         f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                         + body)
            async with asyncio.timeout(5):
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()

    @staticmethod
    async def _linger(reader: asyncio.StreamReader) -> None:
        """Read what the tool is still sending, for a moment, before closing: closing
        with unread bytes resets the connection, and the tool would lose the reply."""
        with contextlib.suppress(Exception):
            async with asyncio.timeout(LINGER):
                received = 0
                while received < MAX_HEAD * 16 and (data := await reader.read(65536)):
                    received += len(data)


def _headers(block: bytes) -> list[tuple[str, str]]:
    found = []
    for raw in block.decode("latin-1").split("\r\n"):
        if not raw:
            continue
        name, colon, value = raw.partition(":")
        if not colon or not name or name != name.strip():
            raise Refused(400, f"malformed header line {_printable(raw, 80)!r}")
        found.append((name, value.strip()))
    return found


def _port(text: str, target: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise Refused(400, f"no valid port in the request target {_printable(target, 200)!r}")
    return int(text)


def _connect_target(target: str) -> tuple[str, int]:
    """``host:port`` or ``[v6]:port`` of a CONNECT."""
    if target.startswith("["):
        host, bracket, port = target[1:].partition("]:")
        if not bracket or parse_address(host) is None or parse_address(host).version != 6:
            raise Refused(400, f"malformed CONNECT target {_printable(target, 200)!r}")
        return host, _port(port, target)
    host, colon, port = target.rpartition(":")
    if not colon or not host or ":" in host:
        raise Refused(400, f"malformed CONNECT target {_printable(target, 200)!r} "
                      "(write an IPv6 address in brackets: [::1]:443)")
    return host, _port(port, target)


_HOP = {"connection", "proxy-connection", "keep-alive", "proxy-authorization", "te", "trailer",
        "upgrade"}


def _absolute_target(method: str, target: str, version: str,
                     headers: list[tuple[str, str]]) -> tuple[str, int, bytes]:
    """The host, port and origin-form request of an absolute-form HTTP request."""
    try:
        url = urlsplit(target)
        port = url.port or 80
        host = url.hostname
    except ValueError as exc:
        raise Refused(400, f"malformed request target {_printable(target, 200)!r}: {exc}") from None
    if url.scheme.lower() != "http" or not host:
        raise Refused(400, "only absolute http:// URLs or CONNECT are proxied, not "
                      f"{_printable(target, 200)!r}")
    if "@" in url.netloc:
        raise Refused(400, "credentials in the request target are not proxied")
    path = url.path or "/"
    if url.query:
        path += "?" + url.query
    kept = [(name, value) for name, value in headers if name.lower() not in _HOP]
    if not any(name.lower() == "host" for name, _ in kept):
        kept.insert(0, ("Host", url.netloc))
    lines = [f"{method} {path} {version}", *(f"{n}: {v}" for n, v in kept), "Connection: close"]
    return host, port, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _same_authority(value: str, host: str, port: int, default: int | None) -> bool:
    """Whether a Host header names ``host:port`` (the port may be left out when it is the
    scheme's default, or for CONNECT when the header names the host alone)."""
    value = value.strip()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        name, _, port_text = value.partition(":") if value.count(":") <= 1 else (value, "", "")
    given = parse_address(name)
    wanted = parse_address(host)
    if given is not None or wanted is not None:
        same_host = given == wanted
    else:
        same_host = _name(name) == _name(host)
    if not port_text:
        return same_host and (default is None or port == default)
    return same_host and port_text.isdigit() and int(port_text) == port


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 up_reader: asyncio.StreamReader, up_writer: asyncio.StreamWriter,
                 first=None) -> None:
    """Pipe both ways until either side ends or nothing moves for ``IDLE_TIMEOUT``;
    ``first`` (a coroutine function of the tool's reader) reads and checks what the
    tool sends first, raising ``TunnelRefused`` to end the tunnel."""
    last = [time.monotonic()]

    async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, check=None) -> None:
        try:
            if check is not None and (data := await check(source)):
                last[0] = time.monotonic()
                sink.write(data)
                await sink.drain()
            while data := await source.read(65536):
                last[0] = time.monotonic()
                sink.write(data)
                await sink.drain()
        except ConnectionError:
            pass
        # The source ended: pass its end on (not when cancelled: the other side may
        # still get an answer, such as a TLS alert).
        with contextlib.suppress(Exception):
            if sink.can_write_eof():
                sink.write_eof()

    tasks = [asyncio.ensure_future(pipe(reader, up_writer, first)),
             asyncio.ensure_future(pipe(up_reader, writer))]
    try:
        # Over when the target has said all it will (the tool may have half-closed
        # long before), when nothing moved either way for IDLE_TIMEOUT, or when what
        # the tool sent first was refused.
        while not tasks[1].done():
            idle = IDLE_TIMEOUT - (time.monotonic() - last[0])
            if idle <= 0:
                break
            await asyncio.wait(tasks if not tasks[0].done() else [tasks[1]], timeout=idle,
                               return_when=asyncio.FIRST_COMPLETED)
            if tasks[0].done() and not tasks[0].cancelled() and tasks[0].exception() is not None:
                raise tasks[0].exception()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
