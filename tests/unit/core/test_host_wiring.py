"""The host is a composition root: it builds the services, hands each its dependencies
typed in ``__init__``, and keeps nothing of an area's work for itself."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from workbench.core.chat_models import ChatModels
from workbench.core.chats import Chats
from workbench.core.default_model import DefaultModel
from workbench.core.extension_service import ExtensionService
from workbench.core.folder_service import FolderService
from workbench.core.grants import Grants
from workbench.core.host import Host
from workbench.core.loading import Loading
from workbench.core.mcp_servers import McpServers
from workbench.core.memory_service import MemoryService
from workbench.core.providers import Providers
from workbench.core.schedules import Schedules
from workbench.core.settings_service import SettingsService
from workbench.core.shell_service import ShellService
from workbench.core.switches import Switches
from workbench.core.tool_service import ToolService
from workbench.core.workspace import Workspace

SERVICES = {"workspace": Workspace, "loading": Loading, "tools": ToolService,
            "folder": FolderService, "default_model": DefaultModel, "chats": Chats,
            "chat_models": ChatModels, "extensions": ExtensionService, "providers": Providers,
            "mcp": McpServers, "schedules": Schedules, "memories": MemoryService,
            "grants": Grants, "switches": Switches, "settings": SettingsService,
            "shell": ShellService}

WIRING = {"open", "settle_after_crash", "close", "aclose", "ashutdown", "config", "cwd",
          "answer_with", "responder"}
"""What the host itself offers: opening, closing, two views, and how a face puts its
answerer in place."""
"""What the host itself offers: opening and closing, and two views of the workspace."""


@pytest.mark.parametrize("service", SERVICES.values(), ids=SERVICES.keys())
def test_a_service_takes_its_dependencies_typed_never_a_callable_or_the_host(service) -> None:
    parameters = inspect.signature(service.__init__).parameters.values()
    for parameter in parameters:
        if parameter.name == "self":
            continue
        annotation = str(parameter.annotation)
        assert parameter.kind is parameter.KEYWORD_ONLY, (service.__name__, parameter.name)
        assert "Callable" not in annotation and "Host" not in annotation.split("|"), (
            service.__name__, parameter.name, annotation)


def test_the_host_offers_the_wiring_alone_and_reaches_each_service(workdir: Path) -> None:
    offered = {name for name, _ in inspect.getmembers(Host) if not name.startswith("_")}
    assert offered == WIRING
    with Host.open(cwd=workdir, model="echo") as host:
        for name, service in SERVICES.items():
            assert isinstance(getattr(host, name), service), name
        assert host.config is host.workspace.config and host.cwd == host.workspace.folder
        # The one owner of the default model: a new chat and the chats' model ask it.
        assert host.chats.default_model is host.default_model is host.chat_models.default_model


def test_host_py_is_a_short_wiring_file() -> None:
    source = Path(inspect.getfile(Host)).read_text(encoding="utf-8")
    # One statement or so per service: pages, outside changes and plugins' five parts
    # took it from 282 to 340 lines; past 350 the wiring wants a second file.
    assert len(source.splitlines()) < 350
    # The callbacks left are those lower layers take by design (the shell's settings,
    # the extension files' folder and reload, a saved proposal's card): no service's.
    assert source.count("lambda") == 4


def test_a_builtin_source_is_built_from_the_services_it_needs_never_the_host() -> None:
    from workbench.core import sources

    factories = [sources.extension_source, sources.host_source, sources.mcp_source,
                 sources.shell_source]
    for factory in factories:
        parameters = list(inspect.signature(factory).parameters.values())
        assert parameters, factory.__name__
        for parameter in parameters:
            annotation = str(parameter.annotation)
            assert parameter.kind is parameter.KEYWORD_ONLY, (factory.__name__, parameter.name)
            assert annotation != "Host" and "Callable" not in annotation, (factory.__name__, annotation)
    source = Path(inspect.getfile(Host)).read_text(encoding="utf-8")
    # Each registered in one statement, as a source of one's own is.
    assert [source.count(f"self.sources.register({f.__name__}(") for f in factories] == [1, 1, 1, 1]
