"""Tools that attack the host through the worker pipe — and fail that call alone.

A worker owns its end of the socket: it can write any bytes there, not only what its
``ctx`` would. Frames too big, too deep, not JSON, not UTF-8, with lone surrogates or
NaN, or shaped wrongly must each fail the call with a clear error, end the call's record,
kill the worker and leave the host serving the next call. Every byte a worker sends in a
call — result, logs, progress, bubbles, requests — counts against ``tools.max_output_bytes``.
"""

from __future__ import annotations

import json

import pytest

from commands import workbench

pytestmark = pytest.mark.security

PY_CODE = r'''
import gc, socket

def _sock():
    found = [o for o in gc.get_objects() if isinstance(o, socket.socket) and o.fileno() >= 0]
    return found[0]

def raw(args, ctx):
    sock = _sock()
    if "size" in args:
        data = b'{"a":"' + b"x" * args["size"] + b'"}'
    elif "text" in args:
        data = args["text"].encode()
    else:
        data = bytes.fromhex(args["hex"])
    sock.sendall(data + b"\n")
    import time
    time.sleep(30)

def deep(args, ctx):
    depth = args["depth"]
    payload = "[" * depth + "]" * depth
    _sock().sendall(('{"jsonrpc":"2.0","id":1,"result":' + payload + '}\n').encode())
    import time
    time.sleep(30)

def logs(args, ctx):
    for _ in range(args["count"]):
        ctx.log("info", "y" * 60_000)
    return "done"

def bubbles(args, ctx):
    for _ in range(args["count"]):
        ctx.display.markdown("z" * 60_000)
    return "done"

def progress(args, ctx):
    for n in range(args["count"]):
        ctx.set_progress(0.5, "p" * 60_000)
    return "done"

def small(args, ctx):
    ctx.log("info", "a little")
    return "ok"
'''

TS_CODE = r'''
const enc = new TextEncoder();
function rawWrite(data: Uint8Array) {
  let off = 0;
  while (off < data.length) off += Deno.stdout.writeSync(data.subarray(off));
}
export async function raw(args: { text?: string; hex?: string; size?: number }) {
  const bytes = args.size !== undefined
    ? enc.encode('{"a":"' + "x".repeat(args.size) + '"}')
    : args.hex !== undefined
    ? new Uint8Array(args.hex.match(/../g)!.map((h) => parseInt(h, 16)))
    : enc.encode(args.text!);
  rawWrite(bytes);
  rawWrite(enc.encode("\n"));
  await new Promise((r) => setTimeout(r, 30000));
}
export async function deep(args: { depth: number }) {
  const payload = "[".repeat(args.depth) + "]".repeat(args.depth);
  rawWrite(enc.encode('{"jsonrpc":"2.0","id":1,"result":' + payload + "}\n"));
  await new Promise((r) => setTimeout(r, 30000));
}
export function logs(args: { count: number }, ctx: any) {
  for (let i = 0; i < args.count; i++) ctx.log("info", "y".repeat(60000));
  return "done";
}
export function bubbles(args: { count: number }, ctx: any) {
  for (let i = 0; i < args.count; i++) ctx.display.markdown("z".repeat(60000));
  return "done";
}
export function progress(args: { count: number }, ctx: any) {
  for (let i = 0; i < args.count; i++) ctx.setProgress(0.5, "p".repeat(60000));
  return "done";
}
export function small(_args: unknown, ctx: any) {
  ctx.log("info", "a little");
  return "ok";
}
'''

# What each bad frame is, and the words its error must carry.
BAD_FRAMES = [
    ({"depth": 100_000}, "deep", "nested deeper than 64"),
    ({"depth": 65}, "deep", "nested deeper than 64"),
    ({"text": "{not json"}, "raw", "not JSON"),
    ({"hex": "7b226a736f6e727063223a22322e30222c226964223a312c22726573756c74223a22ff227d"}, "raw",
     "not UTF-8"),
    ({"text": '{"jsonrpc":"2.0","id":1,"result":"\\ud800"}'}, "raw", "lone surrogate"),
    ({"text": '{"jsonrpc":"2.0","id":1,"result":NaN}'}, "raw", "not JSON (NaN)"),
    ({"text": '{"jsonrpc":"2.0","id":1,"result":-Infinity}'}, "raw", "not JSON (-Infinity)"),
    ({"text": "[1, 2, 3]"}, "raw", "not an object"),
    ({"text": '{"jsonrpc":"2.0","method":["ctx/log"],"params":{}}'}, "raw", "`method` text"),
    ({"text": '{"jsonrpc":"2.0","method":"ctx/log","params":[1]}'}, "raw", "`params` that are an object"),
    ({"text": '{"jsonrpc":"2.0","id":{"a":1},"method":"ctx/db.query","params":{}}'}, "raw",
     "id must be an integer"),
    ({"text": '{"jsonrpc":"2.0","id":1,"error":"boom"}'}, "raw", "error answer is not an object"),
]


def declare(lab, runtime: str) -> str:
    name = f"frames{runtime}"
    code = PY_CODE if runtime == "python" else TS_CODE
    tools = {tool: {} for tool in ("raw", "deep", "logs", "bubbles", "progress", "small")}
    lab.extension(name, code, tools, runtime=runtime)
    return name


async def assert_healthy(lab, name: str) -> None:
    outcome = await lab.call(f"{name}.small")
    assert outcome.ok and outcome.result == "ok", outcome.error
    assert all(row["status"] != "running" for row in lab.host.store.list_tool_calls())


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_a_bad_frame_fails_its_call_alone(lab, runtime):
    name = declare(lab, runtime)
    for args, tool, words in BAD_FRAMES:
        outcome = await lab.call(f"{name}.{tool}", args)
        assert not outcome.ok, (args, outcome.result)
        assert outcome.error["kind"] == "tool", (args, outcome.error)
        assert words in outcome.error["message"], (args, outcome.error)
        assert "the worker broke the protocol" in outcome.error["message"] or tool == "raw"
    rows = lab.host.store.list_tool_calls()
    assert len(rows) == len(BAD_FRAMES) and {row["status"] for row in rows} == {"error"}
    await assert_healthy(lab, name)


@pytest.mark.parametrize("runtime", ["python", "deno"])
async def test_a_frame_past_the_line_bound_is_refused(lab, runtime):
    name = declare(lab, runtime)
    lab.host.sandbox.limits.output_bytes = 64 << 20  # the frame bound, not the output bound
    outcome = await lab.call(f"{name}.raw", {"size": 9 << 20})
    assert outcome.error["kind"] == "output_too_large", outcome.error
    assert "larger than 8388608 bytes" in outcome.error["message"]
    await assert_healthy(lab, name)


@pytest.mark.parametrize("runtime", ["python", "deno"])
@pytest.mark.parametrize("tool", ["logs", "bubbles", "progress"])
async def test_every_byte_a_worker_sends_counts_against_the_output_bound(lab, runtime, tool):
    name = declare(lab, runtime)
    seen = []
    lab.host.bus.subscribe(seen.append)
    # 40 × 60 kB is 2.4 MB: each message is small, together they pass the 1 MiB bound.
    outcome = await lab.call(f"{name}.{tool}", {"count": 40})
    assert outcome.error["kind"] == "output_too_large", outcome.error
    assert "more than 1048576 bytes in this call" in outcome.error["message"]
    # What reached the host's events stayed under the bound: nothing past it was handed on.
    assert sum(len(repr(event)) for event in seen) < (1 << 20) + 100_000
    assert lab.host.store.list_tool_calls()[0]["status"] == "error"
    under = await lab.call(f"{name}.{tool}", {"count": 5})
    assert under.ok, under.error
    await assert_healthy(lab, name)


def test_workbench_call_reports_a_deep_frame_without_a_traceback(tmp_path):
    """The real command: a clear error on stderr, its exit code, the record ended."""
    folder = tmp_path / "deepext"
    folder.mkdir()
    (folder / "main.py").write_text(PY_CODE)
    (folder / "loca.json").write_text(json.dumps({
        "name": "deepext", "displayName": "Deep", "description": "Sends a deep frame.",
        "entry": "main.py", "tools": [{"name": "deep", "description": "Deep.", "function": "deep",
                                       "parameters": {"type": "object"}}]}))
    env = {"WORKBENCH_HOME": str(tmp_path / "home")}
    installed = workbench("ext", "install", str(folder), "--yes", env=env)
    assert installed.returncode == 0, installed.stderr
    for extra in ([], ["--json"]):
        done = workbench("call", "deep", "--args", '{"depth": 200000}', *extra, env=env)
        assert "Traceback" not in done.stderr + done.stdout
        assert done.returncode != 0
        shown = done.stdout if extra else done.stderr
        assert "the worker broke the protocol: a message nested deeper than 64 levels" in shown
    # A model's call in `workbench run`: the call fails alone, the turn goes on to its reply.
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([{"tool_calls": [{"name": "deep", "arguments": {"depth": 200000}}]},
                                   {"text": "The tool failed."}]))
    ran = workbench("run", "--model", f"scripted:{replies}", "--jsonl", "go", env=env)
    assert "Traceback" not in ran.stderr + ran.stdout
    events = [json.loads(line) for line in ran.stdout.splitlines()]
    ended = [event for event in events if event["type"] == "tool_call_ended"]
    assert "nested deeper than 64 levels" in ended[0]["error"]["message"]
    assert events[-1]["status"] == "done" and events[-1]["text"] == "The tool failed."
    from workbench.store import Store

    store = Store.open(tmp_path / "home" / "workbench.db")
    try:
        statuses = [row["status"] for row in store.list_tool_calls()]
    finally:
        store.close()
    assert statuses == ["error", "error", "error"]
