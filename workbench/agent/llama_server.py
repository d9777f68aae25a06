"""The child process that serves a GGUF model with llama.cpp's own server (``xllamacpp``).

Run as ``python -m workbench.agent.llama_server --model PATH``: it loads the model,
listens on 127.0.0.1 on a port the system picks, prints one JSON line on stdout
(``{"address": "http://127.0.0.1:PORT"}``, or ``{"error": "..."}``) and serves until
its standard input closes. The host holds the other end of that pipe, so the
server ends with the host however the host ends, even killed. llama.cpp's own log
goes to stderr, which the host sends to a file.

Kept apart from ``local.py`` so that the host never imports xllamacpp (nor loads a
model into its own memory): only this child does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def serve(model: str, context_tokens: int, threads: int) -> int:
    """Load ``model``, announce the address, serve until stdin closes."""
    try:
        import xllamacpp
    except ImportError as exc:
        _say({"error": f"xllamacpp is not installed ({exc})"})
        return 1
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.n_ctx = context_tokens
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    if threads > 0:
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # noqa: BLE001 - any failure to load is reported the same way
        _say({"error": f"llama.cpp could not load {model}: {exc}"})
        return 1
    _say({"address": server.listening_address})
    try:
        while sys.stdin.buffer.read(65536):
            pass
    except (OSError, KeyboardInterrupt):
        pass
    # Leave without running the server's destructor: it may wait on requests in
    # flight, and the host has gone.
    os._exit(0)


def _say(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="workbench.agent.llama_server")
    parser.add_argument("--model", required=True)
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args(argv)
    return serve(args.model, args.context, args.threads)


if __name__ == "__main__":
    sys.exit(main())
