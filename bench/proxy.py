"""The allowlisting proxy's own cost, beside a direct connection measured in the same run.

Run with ``.venv/bin/python bench/proxy.py``. A loopback HTTP server (port 0) answers a
small page; each figure is the median of ``BENCH_REQUESTS`` requests, printed with the
baseline:

a. one HTTP/1.1 GET over a fresh connection, straight to the server (baseline);
b. the same GET through the proxy as absolute-form (``GET http://127.0.0.1:PORT/``),
   with a literal grant of that address: parsing the head, the grant and address
   checks, the connection to the checked address, forwarding and relaying;
c. the same through a CONNECT tunnel;
d. the address check alone (``proxy.internal``) on a mixed list of addresses, per address.

Goal: the proxy adds at most 2 ms per request on loopback (b - a, c - a).
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _report import report  # noqa: E402

REQUESTS = int(os.environ.get("BENCH_REQUESTS", "300"))
GOAL_MS = 2.0


def page_server() -> tuple[socket.socket, int]:
    server = socket.create_server(("127.0.0.1", 0))
    body = b"page"
    reply = (b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\n" + body)

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1]


async def get(address: tuple[str, int], head: bytes, connect: bytes | None = None) -> float:
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection(*address)
    if connect is not None:
        writer.write(connect)
        await reader.readuntil(b"\r\n\r\n")
    writer.write(head)
    reply = await reader.read()
    writer.close()
    assert reply.startswith(b"HTTP/1.1 200") and reply.endswith(b"page"), reply
    return (time.perf_counter() - start) * 1000


async def main() -> None:
    from workbench.sandbox.policy import NetEndpoint
    from workbench.sandbox.proxy import Proxy, internal

    server, port = page_server()
    listener = socket.create_server(("127.0.0.1", 0))
    proxy = await Proxy.serve(listener, [NetEndpoint("127.0.0.1", [port])])
    proxied = listener.getsockname()
    origin = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    absolute = f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    connect = f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    proxy_module = sys.modules["workbench.sandbox.proxy"]
    proxy_module.MAX_CONNECTIONS = 10 * REQUESTS  # the bench is one long "call"
    direct, forwarded, tunnelled = [], [], []
    for _ in range(REQUESTS):  # interleaved, so drift hits all three alike
        direct.append(await get(("127.0.0.1", port), origin))
        forwarded.append(await get(proxied, absolute))
        tunnelled.append(await get(proxied, origin, connect))
    proxy.close()
    listener.close()
    server.close()
    base = statistics.median(direct)
    for label, samples in (("GET through the proxy (HTTP)", forwarded),
                           ("GET through a CONNECT tunnel", tunnelled)):
        report("proxy", label, statistics.median(samples), base, "a direct GET, fresh connection",
               max_over_ms=GOAL_MS)
    addresses = [ipaddress.ip_address(a) for a in (
        "8.8.8.8", "10.0.0.1", "100.64.0.1", "::1", "::ffff:127.0.0.1", "2002:7f00:1::",
        "2606:4700:4700::1111", "64:ff9b::1", "fe80::1", "93.184.216.34")]
    rounds = 20_000
    start = time.perf_counter()
    for _ in range(rounds):
        for address in addresses:
            internal(address)
    per = (time.perf_counter() - start) / (rounds * len(addresses)) * 1e6
    print(f"d. address check:               {per:.2f} µs per address")


if __name__ == "__main__":
    asyncio.run(main())
