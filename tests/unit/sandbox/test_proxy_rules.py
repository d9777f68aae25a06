"""The proxy's rules on their own: which addresses are internal, which grant covers a
target, how targets and Host headers are read, and happy eyeballs over checked
addresses (on real loopback sockets)."""

from __future__ import annotations

import asyncio
import ipaddress
import socket

import pytest

from workbench.permissions.policy import _net
from workbench.sandbox import proxy
from workbench.sandbox.deno import _deno_host
from workbench.sandbox.policy import NetEndpoint
from workbench.sandbox.proxy import Refused, internal, parse_address


def why(text: str) -> str | None:
    return internal(ipaddress.ip_address(text))


@pytest.mark.parametrize("address, label", [
    ("0.0.0.0", "this network"), ("0.1.2.3", "this network"),
    ("10.9.8.7", "private"), ("172.16.0.1", "private"), ("172.31.255.255", "private"),
    ("192.168.1.1", "private"), ("100.64.0.1", "shared address space"),
    ("100.127.255.254", "shared address space"), ("127.0.0.1", "loopback"), ("127.255.0.9", "loopback"),
    ("169.254.169.254", "link-local"), ("192.0.0.8", "IETF protocol"), ("192.0.2.55", "TEST-NET-1"),
    ("198.51.100.1", "TEST-NET-2"), ("203.0.113.9", "TEST-NET-3"), ("198.18.0.1", "benchmarking"),
    ("198.19.255.1", "benchmarking"), ("192.88.99.1", "6to4 relay"), ("224.0.0.251", "multicast"),
    ("239.255.255.250", "multicast"), ("240.0.0.1", "reserved"), ("255.255.255.255", "broadcast"),
    ("::", "unspecified"), ("::1", "loopback"), ("fe80::1", "link-local"), ("fc00::1", "unique-local"),
    ("fd12:3456::1", "unique-local"), ("fec0::1", "site-local"), ("ff02::1", "multicast"),
    ("64:ff9b::808:808", "NAT64"), ("64:ff9b:1::1", "local-use NAT64"), ("2001::1", "Teredo"),
    ("2001:db8::1", "documentation"), ("3fff::1", "documentation"), ("2001:2::1", "benchmarking"),
    ("100::1", "discard-only"), ("::ffff:127.0.0.1", "loopback"), ("::ffff:10.0.0.1", "private"),
    ("::ffff:100.64.0.1", "shared address space"), ("::127.0.0.1", "loopback"),
    ("::ffff:0:7f00:1", "reserved"),  # SIIT (::ffff:0:0:0/96) is outside 2000::/3
    ("2002:7f00:1::", "loopback"), ("2002:a00:1::1", "private"), ("2002:a9fe:a9fe::", "link-local"),
    ("4000::1", "reserved"), ("::2:3:4:5", "reserved"),
])
def test_internal_addresses_are_named_by_their_range(address, label):
    found = why(address)
    assert found is not None and label in found, (address, found)


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "93.184.216.34", "100.128.0.1", "100.63.255.255",
                                     "172.32.0.1", "198.20.0.1", "2606:4700:4700::1111",
                                     "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8", "2002:808:808::1"])
def test_public_addresses_are_not_internal(address):
    assert why(address) is None


def test_what_the_stdlib_alone_misses():
    """The gaps the table exists for (checked against this Python's ipaddress)."""
    shared = ipaddress.ip_address("100.64.0.1")
    assert not shared.is_private and why("100.64.0.1")
    six_to_four = ipaddress.ip_address("2002:7f00:1::")
    assert not six_to_four.is_loopback and why("2002:7f00:1::")
    mapped = ipaddress.ip_address("::ffff:127.0.0.1")
    assert not mapped.is_loopback and "loopback" in why("::ffff:127.0.0.1")


def test_a_scoped_address_is_internal():
    assert "scoped" in internal(ipaddress.IPv6Address("2001:4860::1%eth0"))


@pytest.mark.parametrize("text, expected", [
    ("127.0.0.1", "127.0.0.1"), ("[::1]", "::1"), ("::1", "::1"), ("[::ffff:127.0.0.1]", "::ffff:7f00:1"),
    ("127.1", None), ("2130706433", None), ("0x7f.1", None), ("localhost", None), ("[localhost]", None)])
def test_only_standard_address_forms_are_literals(text, expected):
    found = parse_address(text)
    assert (str(found) if found else None) == expected


def test_grant_values_become_endpoints():
    assert _net("example.com:443,8443") == NetEndpoint("example.com", [443, 8443])
    assert _net("example.com:*") == NetEndpoint("example.com", ["*"])
    assert _net("[::1]:8080") == NetEndpoint("::1", [8080])
    assert _net("::1:8080") == NetEndpoint("::1", [8080])
    assert _deno_host("::1") == "[::1]" and _deno_host("example.com") == "example.com"


def plan(endpoints, host, port):
    return proxy._plan([NetEndpoint(h, p) for h, p in endpoints], host, port)


def test_a_literal_grant_covers_its_own_address_only():
    literal, covering = plan([("127.0.0.1", [8080])], "127.0.0.1", 8080)
    assert str(literal) == "127.0.0.1" and covering
    for host in ("localhost", "127.1", "::ffff:127.0.0.1", "127.0.0.2"):
        with pytest.raises(Refused) as refused:
            plan([("127.0.0.1", [8080])], host, 8080)
        assert refused.value.status == 403 and "not granted" in refused.value.reason
    literal, _ = plan([("::1", [80])], "::1", 80)
    assert str(literal) == "::1"


def test_names_match_case_and_trailing_dot_blind_and_ports_exactly():
    _, covering = plan([("Example.COM", [443])], "example.com.", 443)
    assert covering
    with pytest.raises(Refused) as refused:
        plan([("example.com", [443])], "example.com", 22)
    assert "example.com:22" in refused.value.reason and "port 22" in refused.value.reason
    _, covering = plan([("example.com", ["*"])], "example.com", 22)
    assert covering
    _, covering = plan([("*", [443])], "anything.test", 443)
    assert covering
    with pytest.raises(Refused):
        plan([("*", [443])], "anything.test", 80)


async def test_a_wildcard_or_a_name_never_reaches_an_internal_address(monkeypatch):
    async def resolve(host, port):
        return {"inside.test": ["10.0.0.1", "::1"], "both.test": ["127.0.0.1", "8.8.8.8"]}[host]

    monkeypatch.setattr(proxy, "resolve", resolve)
    star = [NetEndpoint("*", [80])]
    with pytest.raises(Refused) as refused:
        await proxy._checked("inside.test", 80, None, star)
    assert refused.value.status == 403 and "private" in refused.value.reason and "loopback" in refused.value.reason
    assert [str(a) for a in await proxy._checked("both.test", 80, None, star)] == ["8.8.8.8"]
    with pytest.raises(Refused) as refused:
        await proxy._checked("127.0.0.1", 80, ipaddress.ip_address("127.0.0.1"), star)
    assert "wildcard" in refused.value.reason and "net 127.0.0.1:80" in refused.value.reason
    granted = [NetEndpoint("127.0.0.1", [80])]
    assert await proxy._checked("127.0.0.1", 80, ipaddress.ip_address("127.0.0.1"), granted)


async def test_an_unresolvable_name_is_a_502_naming_it():
    with pytest.raises(Refused) as refused:
        await proxy._checked("nowhere.invalid", 80, None, [NetEndpoint("nowhere.invalid", [80])])
    assert refused.value.status == 502 and "cannot resolve nowhere.invalid" in refused.value.reason


@pytest.mark.parametrize("target, expected", [
    ("example.com:443", ("example.com", 443)), ("[::1]:443", ("::1", 443)),
    ("[::ffff:127.0.0.1]:80", ("::ffff:127.0.0.1", 80))])
def test_connect_targets(target, expected):
    assert proxy._connect_target(target) == expected


@pytest.mark.parametrize("target", ["::1:443", "example.com", "example.com:0", "example.com:99999",
                                    "[::1]443", "[example.com]:443", ":443", "example.com:+80"])
def test_malformed_connect_targets_are_400(target):
    with pytest.raises(Refused) as refused:
        proxy._connect_target(target)
    assert refused.value.status == 400


def test_absolute_form_is_forwarded_in_origin_form_with_connection_close():
    host, port, forward = proxy._absolute_target(
        "GET", "http://[::1]:8080/a?b=1", "HTTP/1.1",
        [("Host", "[::1]:8080"), ("Proxy-Authorization", "x"), ("Connection", "keep-alive"), ("Accept", "*/*")])
    assert (host, port) == ("::1", 8080)
    text = forward.decode()
    assert text.startswith("GET /a?b=1 HTTP/1.1\r\nHost: [::1]:8080\r\n")
    assert "Proxy-Authorization" not in text and "keep-alive" not in text
    assert text.endswith("Accept: */*\r\nConnection: close\r\n\r\n")
    for bad in ("https://example.com/", "ftp://example.com/", "/relative", "http://user:pw@example.com/",
                "http://[::1/", "http://example.com:99999/"):
        with pytest.raises(Refused) as refused:
            proxy._absolute_target("GET", bad, "HTTP/1.1", [])
        assert refused.value.status == 400


@pytest.mark.parametrize("header, host, port, default, same", [
    ("example.com", "example.com", 80, 80, True), ("example.com:80", "example.com", 80, 80, True),
    ("EXAMPLE.com.", "example.com", 80, 80, True), ("example.com", "example.com", 8080, 80, False),
    ("example.com:8080", "example.com", 8080, 80, True), ("other.com", "example.com", 80, 80, False),
    ("[::1]:8080", "::1", 8080, 80, True), ("[::1]", "::1", 8080, 80, False),
    ("127.0.0.1:8080", "127.0.0.1", 8080, 80, True), ("localhost:8080", "127.0.0.1", 8080, 80, False),
    ("example.com", "example.com", 443, None, True), ("example.com:444", "example.com", 443, None, False)])
def test_host_headers_must_name_the_target(header, host, port, default, same):
    assert proxy._same_authority(header, host, port, default) is same


def _listener(family: int, address: str) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.bind((address, 0))
    sock.listen()
    return sock


async def test_happy_eyeballs_goes_to_the_checked_address_that_answers():
    with _listener(socket.AF_INET, "127.0.0.1") as four:
        port = four.getsockname()[1]
        # ::1 on that port refuses (nothing listens there): the next address is tried.
        sock = await proxy.dial([ipaddress.ip_address("::1"), ipaddress.ip_address("127.0.0.1")], port)
        try:
            assert sock.getpeername()[:2] == ("127.0.0.1", port)
        finally:
            sock.close()


async def test_dialing_names_every_address_that_failed():
    with _listener(socket.AF_INET, "127.0.0.1") as probe:
        port = probe.getsockname()[1]
    with pytest.raises(OSError) as failed:
        await proxy.dial([ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")], port)
    assert f"127.0.0.1:{port}: refused the connection" in str(failed.value)
    assert f"[::1]:{port}" in str(failed.value)


def test_interleaving_alternates_families():
    addresses = [ipaddress.ip_address(a) for a in ("::1", "::2", "10.0.0.1", "10.0.0.2", "::3")]
    assert [str(a) for a in proxy._interleave(addresses)] == ["::1", "10.0.0.1", "::2", "10.0.0.2", "::3"]


async def test_the_proxy_answers_a_flood_and_a_bad_head_on_real_sockets(monkeypatch):
    """Without a worker: a proxy on a loopback listener, clients that misbehave."""
    monkeypatch.setattr(proxy, "MAX_CONCURRENT", 2)
    events = []
    listener = _listener(socket.AF_INET, "127.0.0.1")
    served = await proxy.Proxy.serve(listener, [NetEndpoint("127.0.0.1", [1])], events.append)
    address = listener.getsockname()

    async def ask(data: bytes) -> bytes:
        reader, writer = await asyncio.open_connection(*address)
        writer.write(data)
        reply = await reader.read()
        writer.close()
        return reply

    try:
        held = [await asyncio.open_connection(*address) for _ in range(2)]
        for _, writer in held:
            writer.write(b"GET http://127.0.0.1:1/ HTTP/1.1\r\n")
        flooded = await ask(b"GET http://127.0.0.1:1/ HTTP/1.1\r\n\r\n")
        assert flooded.startswith(b"HTTP/1.1 429") and b"2 connections" in flooded
        for _, writer in held:
            writer.close()
        await asyncio.gather(*(writer.wait_closed() for _, writer in held), return_exceptions=True)
        garbage = await ask(b"\x16\x03\x01 not http at all\r\n\r\n")
        assert garbage.startswith(b"HTTP/1.1 400") and garbage.split(b"\r\n\r\n", 1)[1].strip()
        sneaky = await ask(b"CONNECT \x1b]0;owned\x07:80 HTTP/1.1\r\n\r\n")
        assert b"\x1b" not in sneaky and sneaky.startswith(b"HTTP/1.1 403")
        assert [e.status for e in events] == [429, 400, 403]
        assert all("\x1b" not in e.reason and "\x1b" not in e.target for e in events)
    finally:
        served.close()
        listener.close()


def test_doctor_reports_the_proxy_rules():
    from workbench.sandbox.doctor import probe

    [check] = [c for c in probe().checks if c.name == "network-proxy"]
    assert check.ok and check.required and "literal grant" in check.detail


def test_deno_allow_net_takes_any_port_and_bracketed_ipv6(tmp_path):
    from workbench.sandbox.deno import configure
    from workbench.sandbox.policy import Policy

    policy = Policy(runtime="deno", entry="/x/main.ts", function="f", extension_dir="/x",
                    net=[NetEndpoint("example.com", ["*"]), NetEndpoint("::1", [8080, 8081])])
    configure(policy, binary="/bin/true", deno_dir=str(tmp_path / "deno"), tool="t")
    [flag] = [a for a in policy.deno["argv"] if a.startswith("--allow-net")]
    assert flag == "--allow-net=example.com,[::1]:8080,[::1]:8081"


async def test_a_long_lived_proxy_is_bounded_at_once_not_in_all(monkeypatch):
    """A sandboxed MCP server's proxy lives as long as the server: no total per call."""
    monkeypatch.setattr(proxy, "MAX_CONNECTIONS", 2)
    statuses = {}
    for per_call in (True, False):
        listener = _listener(socket.AF_INET, "127.0.0.1")
        served = await proxy.Proxy.serve(listener, [], per_call=per_call)
        try:
            replies = []
            for _ in range(4):
                reader, writer = await asyncio.open_connection(*listener.getsockname())
                writer.write(b"CONNECT nowhere.test:1 HTTP/1.1\r\n\r\n")
                replies.append((await reader.read()).split(b" ", 2)[1])
                writer.close()
            statuses[per_call] = replies
        finally:
            served.close()
            listener.close()
    assert statuses == {True: [b"403", b"403", b"429", b"429"], False: [b"403"] * 4}


def client_hello(server_name: str | None) -> bytes:
    """The first TLS record Python's own client sends (a real ClientHello)."""
    import ssl

    context = ssl.create_default_context()
    if server_name is None:
        context.check_hostname = False
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = context.wrap_bio(incoming, outgoing, server_hostname=server_name)
    with pytest.raises(ssl.SSLWantReadError):
        client.do_handshake()
    return outgoing.read()


def test_the_server_name_of_a_real_client_hello():
    record = client_hello("granted.test")
    assert record[0] == 0x16
    assert proxy.client_hello_name(record[5:]) == "granted.test"
    assert proxy.client_hello_name(client_hello(None)[5:]) is None
    with pytest.raises(ValueError):
        proxy.client_hello_name(record[5:60])  # split across records
    with pytest.raises(ValueError):
        proxy.client_hello_name(b"\x02\x00\x00\x00")  # not a ClientHello


async def test_a_tunnel_to_a_name_carries_only_its_own_tls_server_name(monkeypatch):
    """A name grant reaches that site, not another one the same address serves (SNI)."""
    async def resolve(host, port):
        return ["127.0.0.1"]

    monkeypatch.setattr(proxy, "resolve", resolve)
    # Here loopback stands for the public address a shared host would have.
    monkeypatch.setattr(proxy, "internal", lambda address: None)
    received: list[bytes] = []

    async def upstream(reader, writer):
        received.append(await reader.read(65536))
        writer.close()

    target = await asyncio.start_server(upstream, "127.0.0.1", 0)
    port = target.sockets[0].getsockname()[1]
    events = []
    listener = _listener(socket.AF_INET, "127.0.0.1")
    served = await proxy.Proxy.serve(listener, [NetEndpoint("granted.test", [port])], events.append)

    async def tunnel(hello: bytes) -> bytes:
        reader, writer = await asyncio.open_connection(*listener.getsockname())
        writer.write(f"CONNECT granted.test:{port} HTTP/1.1\r\n\r\n".encode())
        assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 200 Connection established\r\n\r\n"
        writer.write(hello)
        reply = await reader.read()
        writer.close()
        return reply

    try:
        assert await tunnel(client_hello("other-site.test")) == proxy.ALERT_UNRECOGNIZED_NAME
        assert [e.status for e in events] == [403] and "other-site.test" in events[0].reason
        assert await tunnel(client_hello("Granted.Test")) == b""
        assert received and received[-1].startswith(b"\x16\x03")
        assert len(events) == 1
    finally:
        served.close()
        listener.close()
        target.close()


async def test_a_failing_report_still_answers_the_tool():
    def broken(event):
        raise RuntimeError("the store is gone")

    listener = _listener(socket.AF_INET, "127.0.0.1")
    served = await proxy.Proxy.serve(listener, [], broken)
    try:
        reader, writer = await asyncio.open_connection(*listener.getsockname())
        writer.write(b"CONNECT elsewhere.test:443 HTTP/1.1\r\n\r\n")
        reply = await reader.read()
        writer.close()
        assert reply.startswith(b"HTTP/1.1 403") and b"elsewhere.test:443 is not granted" in reply
    finally:
        served.close()
        listener.close()
