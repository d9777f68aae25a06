"""A model server on 127.0.0.1 that checks every conversation as the real APIs do.

``/v1/chat/completions`` refuses, with OpenAI's status and messages, an assistant
message whose ``tool_calls`` are not followed at once by one tool message per id, a
tool message that answers no call just before it, and ids repeated in one message.
``/v1/messages`` refuses what Anthropic's API refuses: roles that do not alternate, a
``tool_use`` without its ``tool_result`` in the next user message (results first), a
``tool_result`` whose ``tool_use`` is not in the message before, ids that repeat. A
conversation it accepts gets a streamed reply, ``accepted``. It records every request
and every refusal. (Importable from every test folder, beside the root conftest.)
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def openai_problem(messages: list[dict[str, Any]]) -> str | None:
    """What OpenAI says of ``messages``, or None when it accepts them."""
    index = 0
    while index < len(messages):
        message = messages[index]
        if message.get("role") == "tool":
            return ("Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.")
        index += 1
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if not calls:
            continue
        ids = [call.get("id") for call in calls]
        if len(set(ids)) != len(ids) or not all(ids):
            return "Invalid parameter: Duplicate value for 'tool_call_id' of 'tool_calls'."
        waiting = list(ids)
        while index < len(messages) and messages[index].get("role") == "tool":
            answered = messages[index].get("tool_call_id")
            if answered not in waiting:
                return ("Invalid parameter: messages with role 'tool' must be a response to a "
                        "preceeding message with 'tool_calls'.")
            waiting.remove(answered)
            index += 1
        if waiting:
            return ("An assistant message with 'tool_calls' must be followed by tool messages "
                    "responding to each 'tool_call_id'. The following tool_call_ids did not "
                    f"have response messages: {', '.join(waiting)}")
    return None


def anthropic_problem(messages: list[dict[str, Any]]) -> str | None:
    """What Anthropic's Messages API says of ``messages``, or None when it accepts them."""
    seen: set[str] = set()
    for index, message in enumerate(messages):
        expected = "user" if index % 2 == 0 else "assistant"
        if message.get("role") != expected:
            return f"messages: roles must alternate between \"user\" and \"assistant\" (messages.{index})"
        blocks = message.get("content")
        blocks = blocks if isinstance(blocks, list) else [{"type": "text", "text": blocks}]
        uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        for use in uses:
            if use in seen:
                return f"messages.{index}: `tool_use` ids must be unique"
            seen.add(use)
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if results:
            previous = messages[index - 1].get("content") if index else []
            before = {b.get("id") for b in previous if isinstance(b, dict)
                      and b.get("type") == "tool_use"} if isinstance(previous, list) else set()
            stray = [r for r in results if r not in before]
            if stray:
                return (f"messages.{index}: unexpected `tool_use_id` found in `tool_result` "
                        f"blocks: {stray[0]}. Each `tool_result` block must have a "
                        "corresponding `tool_use` block in the previous message.")
            kinds = [b.get("type") for b in blocks]
            if kinds[:len(results)] != ["tool_result"] * len(results):
                return f"messages.{index}: `tool_result` blocks must come first in the content"
        if uses:
            following = messages[index + 1].get("content") if index + 1 < len(messages) else []
            answered = {b.get("tool_use_id") for b in following if isinstance(b, dict)
                        and b.get("type") == "tool_result"} if isinstance(following, list) else set()
            missing = [use for use in uses if use not in answered]
            if missing:
                return (f"messages.{index + 1}: `tool_use` ids were found without `tool_result` "
                        f"blocks immediately after: {missing[0]}. Each `tool_use` block must "
                        "have a corresponding `tool_result` block in the next message.")
    return None


def _openai_stream(text: str) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}
    return f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()


def _anthropic_stream(text: str) -> bytes:
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


class StrictModelServer:
    """See the module docstring. Use as a context manager; ``base_url`` ends in ``/v1``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.refusals: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                server.requests.append(body)
                if self.path.endswith("/chat/completions"):
                    problem = openai_problem(body.get("messages") or [])
                    error = {"error": {"message": problem, "type": "invalid_request_error",
                                       "param": "messages", "code": None}}
                    stream = _openai_stream("accepted")
                elif self.path.endswith("/messages"):
                    problem = anthropic_problem(body.get("messages") or [])
                    error = {"type": "error", "error": {"type": "invalid_request_error",
                                                        "message": problem}}
                    stream = _anthropic_stream("accepted")
                else:
                    self.send_error(404)
                    return
                if problem is not None:
                    server.refusals.append(problem)
                    payload = json.dumps(error).encode()
                    self.send_response(400)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(stream)))
                self.end_headers()
                self.wfile.write(stream)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> StrictModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
