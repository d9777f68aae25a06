"""One vocabulary of process states: the supervisor's children and MCP connections share it,
each with its own table of transitions, checked on every change."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from workbench import states
from workbench.mcp import connection
from workbench.mcp.config import ServerConfig
from workbench.states import CONNECTION_TRANSITIONS, TRANSITIONS, InvalidTransition, ProcessState
from workbench.supervisor.pools import WarmPool
from workbench.supervisor.process import SupervisedProcess

S = ProcessState


def test_the_supervisor_and_mcp_connections_use_the_one_state_type() -> None:
    assert connection.State is ProcessState
    assert issubclass(connection.McpServer, states.Stateful)
    assert issubclass(SupervisedProcess, states.Stateful) and issubclass(WarmPool, states.Stateful)
    assert connection.McpServer.transitions is CONNECTION_TRANSITIONS
    assert SupervisedProcess.transitions is TRANSITIONS


def test_a_connection_is_never_stopping_or_exited_and_every_state_it_reaches_has_a_way_out() -> None:
    reached = {new for targets in CONNECTION_TRANSITIONS.values() for new in targets}
    assert S.STOPPING not in reached and S.EXITED not in reached
    assert reached <= set(CONNECTION_TRANSITIONS)
    assert CONNECTION_TRANSITIONS[S.STOPPED] == {S.STARTING}
    assert CONNECTION_TRANSITIONS[S.FATAL] == {S.STARTING}


def test_an_mcp_server_reports_each_change_once_and_refuses_a_wrong_one() -> None:
    seen: list[tuple[str, str, str]] = []
    server = connection.McpServer(ServerConfig(name="demo", command="true"), launcher=None,  # type: ignore[arg-type]
                                  on_change=lambda s, what: seen.append((what, s.state.value, s.reason)))
    server.change_state(S.STARTING, "a call")
    server.change_state(S.BACKOFF, "it died")
    assert seen == [("state", "starting", "a call"), ("state", "backoff", "it died")]
    with pytest.raises(InvalidTransition, match="BACKOFF → EXITED"):
        server.change_state(S.EXITED)
    assert server.state is S.BACKOFF and server.reason == "it died" and len(seen) == 2


def test_the_states_module_is_a_leaf() -> None:
    tree = ast.parse(Path(states.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported and imported - {"__future__"} <= sys.stdlib_module_names
