"""Model providers that stream, for real: a Python or TypeScript generator in its
sandboxed worker whose pieces reach the chat while it still runs, checked and bounded
like a whole reply, stopped with the turn; and a tool or another provider that tries
to stream, refused."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path

import pytest

from test_providers_sandboxed import install
from workbench.core.host import Host
from workbench.events import TextDelta

PYTHON = '''
    import asyncio
    import json
    import time


    def _wait_for_go(ctx):
        while not ctx.db.query("SELECT 1 FROM go"):
            time.sleep(0.02)


    def live(request, ctx):
        yield "first "
        _wait_for_go(ctx)  # the test lets it go on once it has seen the first piece
        yield {"text": "second"}


    async def alive(request, ctx):
        yield "first "
        while not await ctx.db.query("SELECT 1 FROM go"):
            await asyncio.sleep(0.02)
        yield {"text": "second"}


    def caller(request, ctx):
        last = request["messages"][-1]
        if last["role"] == "tool":
            yield f"{json.loads(last['content'])['result']['words']} words"
            return
        yield "Counting. "
        yield {"tool_calls": [{"name": "word_count", "arguments": {"text": last["content"]}}]}
        yield {"text": "Done."}


    def malformed(request, ctx):
        yield "fine"
        yield {"tool_calls": [{"arguments": {}}]}


    def flood(request, ctx):
        size = int(request["messages"][-1]["content"])
        for _ in range(8):
            yield "x" * size


    def endless(request, ctx):
        count = 0
        while True:
            count += 1
            yield f"{count} "
            time.sleep(0.05)


    def recall(request, ctx):
        yield {"documents": []}


    def tool(arguments, ctx):
        yield "a piece"
'''

TYPESCRIPT = '''
    export async function* live(request: any, ctx: any) {
      yield "first ";
      while ((await ctx.db.query("SELECT 1 FROM go")).length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      yield { text: "second" };
    }

    export function* plain(request: any, ctx: any) {
      yield "one, ";
      yield { text: "two" };
      yield { tool_calls: [{ name: "word_count", arguments: { text: "a b" } }] };
    }

    export async function* malformed(request: any, ctx: any) {
      yield { text: 3 };
    }

    export async function* search(request: any, ctx: any) {
      yield { results: [] };
    }
'''


def streaming_extension(folder: Path, name: str, entry: str, code: str,
                        providers: list[dict], tools: list[dict] = ()) -> Path:
    folder.mkdir(parents=True)
    (folder / "loca.json").write_text(json.dumps({
        "name": name, "displayName": name, "description": "Providers that stream, for a test.",
        "entry": entry, "database": True, "providers": providers, "tools": list(tools)}))
    (folder / entry).write_text(textwrap.dedent(code))
    return folder


def models(*names: str) -> list[dict]:
    return [{"type": "model", "name": name, "function": name} for name in names]


@pytest.fixture
def streams(tmp_path, home):
    install(home, streaming_extension(
        tmp_path / "src" / "pystream", "pystream", "main.py", PYTHON,
        models("live", "alive", "caller", "malformed", "flood", "endless")
        + [{"type": "memory", "name": "recall", "function": "recall"}],
        [{"name": "yielder", "description": "A tool that wrongly yields its result.",
          "parameters": {"type": "object"}, "function": "tool"}]))
    install(home, streaming_extension(
        tmp_path / "src" / "tsstream", "tsstream", "index.ts", TYPESCRIPT,
        models("live", "plain", "malformed") + [{"type": "search", "name": "web", "function": "search"}]))
    return home


class Deltas:
    """The chat's text as the bus carries it; lets the function go on at the first piece."""

    def __init__(self, host: Host, extension: str | None = None) -> None:
        self.texts: list[str] = []
        self.first = asyncio.Event()
        self.host = host
        self.extension = extension
        if extension is not None:
            host.databases.execute(extension, "CREATE TABLE go (ready INTEGER)")
        host.bus.subscribe(self.seen)

    def seen(self, event) -> None:
        if not isinstance(event, TextDelta):
            return
        self.texts.append(event.text)
        if not self.first.is_set():
            self.first.set()
            if self.extension is not None:
                self.host.databases.execute(self.extension, "INSERT INTO go VALUES (1)")


def zygote_children(host: Host) -> list[int]:
    """The processes the zygote forked that still run: a worker's supervisor each. (One
    that ended stays a zombie until the zygote's next request reaps it.)"""
    pid = host.sandbox.zygote.process.pid
    children = [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return [child for child in children if not _ended(child)]


def _ended(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] in ("Z", "X")


# --- streaming reaches the chat live ----------------------------------------------------


@pytest.mark.parametrize(("extension", "model"), [
    ("pystream", "live"), ("pystream", "alive"), ("tsstream", "live")])
async def test_a_generator_streams_each_piece_to_the_chat_before_it_ends(streams, workdir,
                                                                         extension, model):
    async with Host.open(cwd=workdir, model=f"ext:{extension}/{model}") as host:
        deltas = Deltas(host, extension)
        # The function waits for a row the test writes only once the first piece has
        # reached the chat: a reply sent whole would never come.
        result = await asyncio.wait_for(host.chats.send_prompt("hi"), 60)
        rows = host.chats.messages(result.session_id)
    assert (result.status, result.text) == ("done", "first second")
    assert deltas.texts == ["first ", "second"]
    assert [m["content"] for m in rows] == ["hi", "first second"]


async def test_tool_calls_of_a_streamed_reply_are_run_by_the_turn(streams, workdir):
    async with Host.open(cwd=workdir, model="ext:pystream/caller") as host:
        result = await host.chats.send_prompt("one two three")
        rows = host.chats.messages(result.session_id)
    assert (result.status, result.text) == ("done", "3 words")
    assert [m["role"] for m in rows] == ["user", "assistant", "tool", "assistant"]
    assert rows[1]["content"] == "Counting. Done."
    assert [(c["name"], c["arguments"]) for c in rows[1]["tool_calls"]] == [
        ("word_count", {"text": "one two three"})]
    assert json.loads(rows[2]["content"])["result"]["words"] == 3


async def test_a_sync_typescript_generator_streams_text_and_tool_calls(streams, workdir):
    async with Host.open(cwd=workdir, model="ext:tsstream/plain") as host:
        deltas = Deltas(host)
        chat = host.chats.new()["id"]
        await host.chats.send_prompt("hi", chat)
        rows = host.chats.messages(chat)
    assert deltas.texts[:2] == ["one, ", "two"]
    assert rows[1]["content"] == "one, two"
    assert rows[1]["tool_calls"][0]["name"] == "word_count"


# --- checked and bounded like a whole reply ---------------------------------------------------


@pytest.mark.parametrize(("spec", "where"), [
    ("ext:pystream/malformed", "/tool_calls/0/name (streamed piece 1): Field required"),
    ("ext:tsstream/malformed", "/text (streamed piece 0): Input should be a valid string"),
])
async def test_a_malformed_piece_is_refused_with_its_pointer(streams, workdir, spec, where):
    provider = spec.removeprefix("ext:")
    async with Host.open(cwd=workdir, model=spec) as host:
        result = await host.chats.send_prompt("hi")
    assert result.status == "error"
    assert f"the model provider {provider} answered with a malformed reply at {where}" in result.error


@pytest.mark.parametrize(("size", "words"), [
    # Every byte the worker sends counts (sandbox/worker_host.py), so the worker's own
    # bound is met first; the stream's bound stays for what reaches it otherwise.
    (200_000, "sent more than 1048576 bytes in this call"),
    (1_100_000, "sent more than 1048576 bytes in this call"),
])
async def test_a_stream_past_the_output_cap_is_refused_not_cut(streams, workdir, size, words):
    async with Host.open(cwd=workdir, model="ext:pystream/flood") as host:
        deltas = Deltas(host)
        result = await host.chats.send_prompt(str(size))
        audited = [e["action"] for e in host.store.list_audit(limit=20)]
    assert result.status == "error"
    assert words in result.error and "the limit is 1048576 (tools.max_output_bytes)" in result.error
    assert "provider.error.output_too_large" in audited
    # Refused at the piece that passed the cap: what came before stays whole, nothing after.
    assert sum(len(text) for text in deltas.texts) <= 1 << 20
    assert all(len(text) == size for text in deltas.texts)


async def test_cancelling_the_turn_mid_stream_stops_the_worker(streams, workdir):
    async with Host.open(cwd=workdir, model="ext:pystream/endless") as host:
        host.sandbox.keep_warm = False
        deltas = Deltas(host)
        turn = asyncio.ensure_future(host.chats.send_prompt("go"))
        await asyncio.wait_for(deltas.first.wait(), 30)
        assert zygote_children(host)
        assert host.chats.cancel()
        result = await turn
        assert result.status == "cancelled"
        for _ in range(100):
            if not zygote_children(host):
                break
            await asyncio.sleep(0.05)
        assert zygote_children(host) == []
        seen = len(deltas.texts)
        # Nothing arrives after the end: there is no event to wait for, only a while in
        # which a stream still going would have sent its next pieces (it sends one each 50 ms).
        await asyncio.sleep(0.3)
        assert len(deltas.texts) == seen


# --- only model providers stream ----------------------------------------------------------------


async def test_a_tool_or_another_provider_that_streams_is_refused(streams, workdir):
    async with Host.open(cwd=workdir) as host:
        tool = await host.tools.call("yielder", {})
        memory = await host.tools.call("memory_search", {"query": "anything"})
        web = await host.tools.call("web_search", {"query": "anything"})
    assert not tool.ok and tool.error["kind"] == "tool"
    assert tool.error["message"] == (
        "the tool pystream.yielder is a generator (its function tool yields), but only a "
        "model provider may stream its answer: return the result instead")
    [recalled] = memory.result["providers"]
    assert recalled["provider"] == "pystream/recall" and not recalled["ok"]
    assert recalled["error"].startswith("the memory provider pystream/recall is a generator "
                                        "(its function recall yields), but only a model provider")
    assert not web.ok
    assert "the search provider tsstream/web is a generator (its function search yields)" in (
        web.error["message"])
