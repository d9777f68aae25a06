"""A client for the workbench's Plugin API (``$LOOP_API_URL/api/plugin/v1/…``)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

PREFIX = "/api/plugin/v1"


class StatusError(Exception):
    """The Plugin API answered with a status that is not 2xx."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"the Plugin API answered {status}: {body[:200]}")
        self.status = status
        self.body = body

    def has_status(self, status: int) -> bool:
        return self.status == status


class Client:
    """Calls the Plugin API with the plugin's project-scoped token.

    Args:
        api_url: ``$LOOP_API_URL``.
        token: The token file's contents.
        timeout: Seconds per call.
    """

    def __init__(self, api_url: str, token: str, timeout: float = 10.0) -> None:
        self.api_url = api_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.api_url + PREFIX + path, data=data, method=method,
                                         headers={"Authorization": f"Bearer {self.token}",
                                                  "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                text = answer.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            raise StatusError(exc.code, exc.read().decode("utf-8", "replace")) from None
        return json.loads(text) if text else None

    def channel(self) -> dict[str, Any]:
        """``GET /channel``: the project and the plugin's settings in it."""
        return self.request("GET", "/channel")

    def notify(self, title: str, body: str = "") -> Any:
        """``POST /notifications`` (needs ``notifications``)."""
        return self.request("POST", "/notifications", {"title": title, "body": body})

    def start_run(self, agent: str, prompt: str) -> str:
        """``POST /runs`` (needs ``agent.readonly`` or ``agent.write``): an agent run's id;
        ``/runs/{run_id}/done`` comes when it ends. A 429 past the daily limit."""
        return str(self.request("POST", "/runs", {"agent": agent, "prompt": prompt})["run_id"])

    def post_card(self, title: str, card: dict[str, Any]) -> int:
        """``POST /cards`` (needs ``ui.notification.card``): a card document (Adaptive
        Cards 1.5, the documented subset) for the notification drawer; its id."""
        return int(self.request("POST", "/cards", {"title": title, "card": card})["id"])

    def set_switch(self, switch: str, thread_id: str, *, on: bool | None = None, title: str | None = None,
                   state: str = "idle") -> Any:
        """``PUT /composer/switches/{id}`` (needs ``ui.composer_switch``): change a chat's pill."""
        body: dict[str, Any] = {"thread_id": thread_id, "state": state}
        if on is not None:
            body["on"] = on
        if title is not None:
            body["title"] = title
        return self.request("PUT", f"/composer/switches/{switch}", body)

    def reset_switch(self, switch: str, thread_id: str | None = None) -> Any:
        """``DELETE /composer/switches/{id}``: forget its state (in one chat, or all)."""
        return self.request("DELETE", f"/composer/switches/{switch}",
                            {"thread_id": thread_id} if thread_id else {})
