"""The import contracts in pyproject.toml can fail: an import a package's docstring does
not allow, planted in a copy of the tree, breaks `lint-imports`.

Each test copies ``workbench/`` and ``pyproject.toml`` into its temporary folder, adds
one module there and runs the real ``lint-imports`` on the copy; nothing is planted in
the tree itself.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_copy(tmp_path: Path, plant: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``lint-imports`` on a copy of the tree with ``plant`` (path: source) added."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "workbench", tree / "workbench",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    for relative, source in plant.items():
        (tree / relative).write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_copy_as_it_is_keeps_every_contract(tmp_path: Path) -> None:
    result = lint_copy(tmp_path, {})
    assert result.returncode == 0, result.stdout + result.stderr
    assert " broken" in result.stdout and "0 broken" in result.stdout


@pytest.mark.parametrize(("where", "source", "contract"), [
    # The probe cycle: the registry reaching into MCP, which imports the registry.
    ("workbench/tools/probe.py", "import workbench.mcp.naming\n",
     "never the agent or an MCP server"),
    ("workbench/scheduler/probe.py", "import workbench.supervisor.launch\n",
     "Schedule arithmetic runs nothing"),
    # Capabilities import the schedule shapes: the other way round is a cycle.
    ("workbench/scheduler/probe.py", "import workbench.capabilities.schedules\n",
     "No two packages import each other"),
    ("workbench/hooks/probe.py", "import workbench.agent.messages\n",
     "Hooks import the leaves only"),
    ("workbench/ext/probe.py", "import workbench.tools.registry\n",
     "never the tool registry"),
    ("workbench/store/probe.py", "import workbench.config.home\n",
     "Layers: front-ends over core"),
    ("workbench/agent/probe.py", "import workbench.core.host\n",
     "Layers: front-ends over core"),
    # The TUI renders the core's rows; it does not count tools in the registry itself.
    ("workbench/tui/probe.py", "import workbench.tools.registry\n",
     "The faces reach the services and the foundations only through the core"),
    # The schedule form checks a schedule through the core (core/schedule_forms.py).
    ("workbench/tui/probe.py", "import workbench.scheduler.shapes\n",
     "The faces reach the services and the foundations only through the core"),
    ("workbench/cli/probe.py", "import workbench.scheduler.spec\n",
     "The faces reach the services and the foundations only through the core"),
    # The CLI reads and writes the config through core/config_files.py.
    ("workbench/cli/probe.py", "import workbench.config.home\n",
     "The faces reach the services and the foundations only through the core"),
    # A face reaches the core through the Host and the modules of its rows, never its internals.
    ("workbench/cli/probe.py", "from workbench.core.gateway import ToolGateway\n",
     "The faces import the core's public API alone"),
    ("workbench/tui/probe.py", "import workbench.core.loading\n",
     "The faces import the core's public API alone"),
    # Headless is a face too: the turn's result and the defaults come through the core.
    ("workbench/headless/probe.py", "from workbench.agent.loop import TurnResult\n",
     "The faces reach the services and the foundations only through the core"),
    ("workbench/headless/probe.py", "import workbench.core.gateway\n",
     "The faces import the core's public API alone"),
    # Bundles run in the shell's worker; what they keep is in the project, never the store.
    ("workbench/bundles/probe.py", "import workbench.store.db\n",
     "Bundles import the shell's worker"),
    ("workbench/cli/probe.py", "import workbench.bundles.service\n",
     "The faces reach the services and the foundations only through the core"),
    # Card documents are data the faces draw: no widget library, nothing above the leaves.
    ("workbench/cards/probe.py", "import textual.widgets\n",
     "Nothing below the front-ends imports textual"),
    ("workbench/cards/probe.py", "import workbench.manifest.models\n",
     "Layers: front-ends over core"),
])
def test_an_import_the_docstring_does_not_allow_breaks_its_contract(
        tmp_path: Path, where: str, source: str, contract: str) -> None:
    result = lint_copy(tmp_path, {where: source})
    assert result.returncode != 0, result.stdout
    # The summary names each contract then its verdict; a long name wraps.
    verdict = re.search(re.escape(contract) + r".*?\b(KEPT|BROKEN)\b", " ".join(result.stdout.split()))
    assert verdict and verdict.group(1) == "BROKEN", result.stdout


def test_a_face_importing_the_cores_public_api_keeps_it(tmp_path: Path) -> None:
    source = ("from workbench.core.calls import CallOptions\n"
              "from workbench.core.sessions import SessionRow\n")
    result = lint_copy(tmp_path, {"workbench/cli/probe.py": source,
                                  "workbench/tui/probe.py": source,
                                  "workbench/headless/probe.py": source})
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_import_for_type_checking_alone_does_not_count(tmp_path: Path) -> None:
    source = ("from typing import TYPE_CHECKING\n\n"
              "if TYPE_CHECKING:\n    import workbench.mcp.naming\n")
    result = lint_copy(tmp_path, {"workbench/tools/probe.py": source})
    assert result.returncode == 0, result.stdout + result.stderr
