"""The search services that need a key — Brave Search, Tavily, Google Programmable
Search — and the order they are tried in.

Settings come from the person's own file ``~/.config/workbench/web.toml`` (read when
granted) and the environment (which wins)::

    providers = ["brave", "tavily", "google"]   # the order; WORKBENCH_WEB_PROVIDERS too
    [brave]
    key = "..."                                # BRAVE_SEARCH_API_KEY
    [tavily]
    key = "..."                                # TAVILY_API_KEY
    [google]
    key = "..."                                # GOOGLE_API_KEY
    cx = "..."                                 # GOOGLE_CSE_ID (the search engine's id)

A provider without its key is skipped, and said so. Each key travels in a request
header, never in an address (so no proxy or log line sees it). A provider that fails
(an error status, out of quota, no answer, an answer of another shape) is noted and the
next is tried; the answer names the one that served it.
"""

from __future__ import annotations

import json
import os
import tomllib
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urlencode

from websearch.secrets import Secrets

NAMES = ("brave", "tavily", "google")
TITLES = {"brave": "Brave Search", "tavily": "Tavily", "google": "Google Programmable Search"}
ENDPOINTS = {"brave": "https://api.search.brave.com/res/v1/web/search",
             "tavily": "https://api.tavily.com/search",
             "google": "https://www.googleapis.com/customsearch/v1"}
KEY_VARIABLES = {"brave": "BRAVE_SEARCH_API_KEY", "tavily": "TAVILY_API_KEY",
                 "google": "GOOGLE_API_KEY"}
SETTINGS_FILE = os.path.join("~", ".config", "workbench", "web.toml")
MAX_ANSWER_BYTES = 2 * 1024 * 1024
TIMEOUT_S = 20
QUOTA_STATUSES = {402: "out of quota or credits", 429: "out of quota or rate limited",
                  432: "out of the plan's quota", 433: "past the pay-as-you-go limit"}


class ProviderFailed(Exception):
    """One provider could not answer; the message says why (keys masked)."""


@dataclass
class Settings:
    order: list[str]
    keys: dict[str, str] = field(default_factory=dict)
    google_cx: str | None = None
    endpoints: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _file_settings(notes: list[str]) -> dict:
    path = os.path.expanduser(SETTINGS_FILE)
    try:
        with open(path, "rb") as handle:
            data = handle.read(64 * 1024)
    except FileNotFoundError:
        return {}
    except PermissionError:
        notes.append(f"{SETTINGS_FILE} was not read (not granted)")
        return {}
    except OSError as exc:
        notes.append(f"{SETTINGS_FILE} could not be read: {exc.strerror}")
        return {}
    try:
        found = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        # The message names the line, never the file's text (a key may be on it).
        notes.append(f"{SETTINGS_FILE} is not valid TOML ({str(exc).split('(')[-1].rstrip(')')}); "
                     "it was ignored")
        return {}
    return found if isinstance(found, dict) else {}


def settings(secrets: Secrets) -> Settings:
    """The order, keys and endpoints, from the settings file and the environment."""
    notes: list[str] = []
    found = _file_settings(notes)
    raw_order = os.environ.get("WORKBENCH_WEB_PROVIDERS")
    order = ([p.strip().lower() for p in raw_order.split(",") if p.strip()] if raw_order
             else found.get("providers") if isinstance(found.get("providers"), list) else list(NAMES))
    unknown = [p for p in order if p not in NAMES]
    if unknown:
        notes.append(f"unknown providers {', '.join(map(str, unknown))} were left out (known: "
                     f"{', '.join(NAMES)})")
    chosen = Settings(order=list(dict.fromkeys(p for p in order if p in NAMES)), notes=notes)
    for name in NAMES:
        section = found.get(name) if isinstance(found.get(name), dict) else {}
        key = os.environ.get(KEY_VARIABLES[name]) or section.get("key")
        if isinstance(key, str) and key.strip():
            chosen.keys[name] = secrets.add(key.strip()) or ""
        endpoint = section.get("endpoint")
        chosen.endpoints[name] = endpoint if isinstance(endpoint, str) and endpoint.startswith(
            ("https://", "http://")) else ENDPOINTS[name]
        if name == "google":
            cx = os.environ.get("GOOGLE_CSE_ID") or section.get("cx")
            chosen.google_cx = cx.strip() if isinstance(cx, str) and cx.strip() else None
    return chosen


def _request(request: urllib.request.Request, name: str) -> dict:
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            body = response.read(MAX_ANSWER_BYTES + 1)
    except urllib.error.HTTPError as exc:
        why = QUOTA_STATUSES.get(exc.code, f"answered HTTP {exc.code}")
        detail = ""
        try:
            detail = exc.read(2000).decode("utf-8", "replace")
        except OSError:
            pass
        raise ProviderFailed(f"{why} (HTTP {exc.code}){': ' + detail[:300] if detail else ''}") from None
    except urllib.error.URLError as exc:
        raise ProviderFailed(f"could not be reached: {exc.reason}") from None
    except (TimeoutError, OSError) as exc:
        raise ProviderFailed(f"did not answer: {exc}") from None
    if len(body) > MAX_ANSWER_BYTES:
        raise ProviderFailed(f"answered more than {MAX_ANSWER_BYTES} bytes")
    try:
        answer = json.loads(body)
    except ValueError:
        raise ProviderFailed("answered something that is not JSON") from None
    if not isinstance(answer, dict):
        raise ProviderFailed("answered JSON of another shape (not an object)")
    return answer


def _results(items, title: str, url: str, snippet: str, name: str) -> list[dict]:
    if not isinstance(items, list):
        raise ProviderFailed("answered JSON of another shape (no list of results)")
    found = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get(url), str):
            found.append({"title": str(item.get(title) or "")[:500], "url": item[url][:2000],
                          "snippet": str(item.get(snippet) or "")[:2000]})
    return found


def brave(query: str, limit: int, chosen: Settings) -> list[dict]:
    url = chosen.endpoints["brave"] + "?" + urlencode({"q": query, "count": min(limit, 20)})
    answer = _request(urllib.request.Request(url, headers={
        "Accept": "application/json", "X-Subscription-Token": chosen.keys["brave"],
        "User-Agent": "workbench-web/1"}), "brave")
    web = answer.get("web") if isinstance(answer.get("web"), dict) else {}
    return _results(web.get("results", []), "title", "url", "description", "brave")


def tavily(query: str, limit: int, chosen: Settings) -> list[dict]:
    body = json.dumps({"query": query, "max_results": min(limit, 20)}).encode()
    answer = _request(urllib.request.Request(chosen.endpoints["tavily"], data=body, method="POST",
                                             headers={"Content-Type": "application/json",
                                                      "Authorization": f"Bearer {chosen.keys['tavily']}",
                                                      "User-Agent": "workbench-web/1"}), "tavily")
    return _results(answer.get("results"), "title", "url", "content", "tavily")


def google(query: str, limit: int, chosen: Settings) -> list[dict]:
    if not chosen.google_cx:
        raise ProviderFailed("has a key but no search engine id (set GOOGLE_CSE_ID, or cx "
                             f"in the [google] section of {SETTINGS_FILE})")
    url = chosen.endpoints["google"] + "?" + urlencode({"cx": chosen.google_cx, "q": query,
                                                         "num": min(limit, 10)})
    answer = _request(urllib.request.Request(url, headers={
        "Accept": "application/json", "X-goog-api-key": chosen.keys["google"],
        "User-Agent": "workbench-web/1"}), "google")
    if "items" not in answer:
        if isinstance(answer.get("searchInformation"), dict):
            return []  # a search with no results
        raise ProviderFailed("answered JSON of another shape (no items)")
    return _results(answer.get("items"), "title", "link", "snippet", "google")


SEARCH = {"brave": brave, "tavily": tavily, "google": google}
