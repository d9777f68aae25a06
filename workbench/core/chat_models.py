"""Which model a chat talks to, chosen in the chat: what the TUI's ``/model`` and its
header, the Settings screen, ``workbench sessions model`` and ``workbench run`` ask.

A chat either follows the default (``sessions.model`` empty: the host's model, the
``model`` setting unless ``--model`` said otherwise) or has its own (a spec kept with
it: chosen with ``/model``, ``sessions model``, ``run --session ID --model``, or the
``--model`` the chat was started with). ``choose_model`` checks a spec before anything
is kept, so a bad name changes nothing; ``default`` makes a chat follow the default
again.

``ChatModels`` is reached as ``host.chat_models``; it asks the host's chats
(``host.chats``: a chat, its provider, its model kept), providers (a spec checked,
the extensions' model providers), the default model (``host.default_model``) and the
workspace (the host's folder, home and config).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.agent.providers import ECHO_HINT
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.chats import Chats
    from workbench.core.default_model import DefaultModel
    from workbench.core.providers import Providers
    from workbench.core.workspace import Workspace
    from workbench.store import Store

DEFAULT = "default"
"""The word that makes a chat follow the default model again (``/model default``)."""

MAX_FILES = 20
"""How many files of a folder (``scripted:`` replays) the choices list at most."""


def _matching(rows: list[dict[str, Any]], typed: str) -> list[dict[str, Any]]:
    typed = typed.strip().lower()
    if not typed:
        return rows
    starting = [row for row in rows if row["spec"].lower().startswith(typed)]
    containing = [row for row in rows if row not in starting
                  and (typed in row["spec"].lower() or typed in row["description"].lower())]
    return starting + containing


class ChatModels:
    """A chat's model, as the front-ends ask it; see the module docstring.

    Args:
        chats: The chats (a chat, its model and provider).
        providers: Checks a spec; the extensions' model providers.
        default_model: The model of a chat that keeps none.
        workspace: The host's folder, home and config.
        store: Where a chat's model is kept.
    """

    def __init__(self, *, chats: Chats, providers: Providers, default_model: DefaultModel,
                 workspace: Workspace, store: Store) -> None:
        self.chats = chats
        self.providers = providers
        self.default_model = default_model
        self.workspace = workspace
        self.store = store

    def model_info(self, session_id: str | None = None) -> dict[str, Any]:
        """What the chat ``session_id`` (None: a chat not started yet, or a run's new
        chat) talks to, the model built (``auto`` resolved) to know.

        Returns:
            ``spec`` (what is kept or followed), ``label`` (what it resolved to),
            ``own`` (whether the chat has its own rather than the default),
            ``stand_in`` (True when the replies are echoes, not a model's), ``hint``
            (then: how to connect a model, else None).

        Raises:
            ModelError: The model cannot be used here (no key, no file).
            WorkbenchError: No such session.
        """
        own = False
        if session_id is not None:
            session = self.chats.get(session_id)
            own = bool(session.get("model"))
            spec = session.get("model") or self.default_model.spec
            if session.get("folder") and Path(session["folder"]) != self.workspace.folder:
                # Not built here: a relative path in it is the chat's folder's, which
                # the host enters at the chat's next turn.
                stand_in = spec == "echo"
                return {"spec": spec, "label": spec, "own": own, "stand_in": stand_in,
                        "hint": ECHO_HINT if stand_in else None}
            provider = self.chats.provider(session["id"])
        else:
            spec = self.default_model.spec
            provider = self.default_model.provider()
        name = str(getattr(provider, "name", "") or spec)
        stand_in = name == "echo"
        return {"spec": spec, "label": name if spec == "auto" else spec, "own": own,
                "stand_in": stand_in, "hint": ECHO_HINT if stand_in else None}

    def choose_model(self, session_id: str | None, spec: str) -> dict[str, Any]:
        """Make the chat ``session_id`` talk to ``spec`` from its next turn on, or follow
        the default again (``default``); a chat not started yet (None) is started first
        — after the spec is checked, so a bad one starts nothing.

        Returns:
            The session as it is now.

        Raises:
            WorkbenchError: No such session, or (usage) a spec that names no model; the
                message lists what is known. Nothing is changed then.
        """
        chosen = spec.strip() if isinstance(spec, str) else ""
        if session_id is None:
            if chosen != DEFAULT:
                chosen = self.providers.check_spec(chosen, cwd=self.workspace.folder)
            session_id = self.chats.new()["id"]
        if chosen == DEFAULT:
            session = self.chats.get(session_id)
            self.store.set_session_model(session["id"], None)
            self.store.audit("person", "session.model", session["id"],
                             {"from": session.get("model"), "to": None})
            return self.chats.get(session["id"])
        return self.chats.set_model(session_id, chosen)

    def model_choices(self, session_id: str | None = None, typed: str = "") -> list[dict[str, Any]]:
        """The models a chat can be switched to, for completing ``/model``: the built-in
        ones as configured, the local model files ``workbench models`` knows, the
        ``scripted:`` replays in the chat's folder, the extensions' model providers, and
        ``default`` for a chat that has its own. Those matching ``typed`` (starting with
        it first) when given.

        Returns:
            ``{spec, description, real}`` each (``real``: a model, not a stand-in).
        """
        from workbench.agent.connect import Context, local_model_path
        from workbench.agent.model_files import list_models

        settings = self.workspace.config.settings
        folder = self.workspace.folder
        own = None
        if session_id is not None:
            try:
                session = self.chats.get(session_id)
            except WorkbenchError:
                session = None
            if session is not None:
                own = session.get("model")
                folder = Path(session["folder"]) if session.get("folder") else self.workspace.folder
        rows: list[dict[str, Any]] = []
        if own:
            rows.append({"spec": DEFAULT, "description": f"Follow the default model ({self.default_model.spec})",
                         "real": True})
        rows.append({"spec": "auto", "description": "An API key, else a local server, else the "
                     "local model, else echo", "real": True})
        key_env = settings.openai.api_key_env
        rows.append({"spec": f"openai:{settings.openai.model}",
                     "description": f"{settings.openai.base_url}, key from {key_env}",
                     "real": True})
        rows.append({"spec": f"anthropic:{settings.anthropic.model}",
                     "description": f"Anthropic, key from {settings.anthropic.api_key_env}",
                     "real": True})
        path, _ = local_model_path(Context(self.workspace.config, {}, self.workspace.home.root))
        local = (f"The local model, {path.name}" if path.exists()
                 else "The local model (not here yet: workbench models pull)")
        rows.append({"spec": "local", "description": local, "real": True})
        configured = Path(settings.local.model).expanduser() if settings.local.model else None
        for found in list_models(self.workspace.home.root, configured):
            if not found.builtin:
                rows.append({"spec": f"local:{found.path}",
                             "description": f"A local GGUF model, {found.size / 1e6:.0f} MB",
                             "real": True})
        for provider in self.providers.registry.all("model"):
            rows.append({"spec": f"ext:{provider.qualified_name}",
                         "description": f"The model of the extension {provider.extension}",
                         "real": True})
        try:
            replays = sorted(p.name for p in folder.glob("*.json") if p.is_file())[:MAX_FILES]
        except OSError:
            replays = []
        rows += [{"spec": f"scripted:{name}", "description": "Replay the replies in this file",
                  "real": False} for name in replays]
        rows.append({"spec": "echo", "description": "Not a model: repeats what you type",
                     "real": False})
        return _matching(rows, typed)

    def chat_models(self, limit: int | None = 200) -> dict[str, Any]:
        """Which chats follow the default model and which have their own, for Settings.

        Returns:
            ``default`` (the host's model), ``following`` (how many chats follow it) and
            ``own`` (``{id, title, model}`` of each chat with its own, latest first).
        """
        rows = self.chats.sessions(limit=limit)
        own = [{"id": row["id"], "title": row.get("title"), "model": row["model"]}
               for row in rows if row.get("model")]
        return {"default": self.default_model.spec, "following": len(rows) - len(own), "own": own}

