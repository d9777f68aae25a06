"""``workbench config`` and ``workbench trust`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from workbench.cli.config import config_app, trust_command
from workbench.config.home import Home, project_config_path
from workbench.config.trust import sha256_of


@pytest.fixture
def app() -> typer.Typer:
    """A root app holding only the config commands."""
    root = typer.Typer()
    root.add_typer(config_app, name="config")
    root.command("trust")(trust_command)
    return root


@pytest.fixture
def run(app: typer.Typer):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, list(args))

    return invoke


def test_get_default(run, home: Home) -> None:
    result = run("config", "get", "tools.timeout_ms")
    assert (result.exit_code, result.stdout) == (0, "300000\n")


def test_get_with_origin_and_json(run, home: Home) -> None:
    home.config_file.write_text("extensions.enabled = false\n")
    result = run("config", "get", "extensions.enabled", "--origin")
    assert result.stdout == f"false\tglobal: {home.config_file}\n"
    result = run("config", "get", "headless.allowlist", "--json")
    assert json.loads(result.stdout) == {"key": "headless.allowlist", "value": [],
                                         "origin": "default"}


def test_unknown_key_exits_2(run, home: Home) -> None:
    for args in (("config", "get", "modle"), ("config", "set", "modle", "x")):
        result = run(*args)
        assert result.exit_code == 2
        assert "unknown setting 'modle'" in result.stderr
        assert "did you mean 'model'" in result.stderr
    assert not home.config_file.exists()


def test_bad_value_exits_2_and_writes_nothing(run, home: Home) -> None:
    result = run("config", "set", "tools.timeout_ms", "soon")
    assert result.exit_code == 2
    assert "an integer" in result.stderr
    assert not home.config_file.exists()


def test_set_keeps_comments(run, home: Home) -> None:
    home.config_file.write_text("# mine\n[headless]\n# policy\napprovals = \"deny\"  # safe\n")
    result = run("config", "set", "headless.approvals", "allowlisted")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"headless.approvals = allowlisted in {home.config_file}\n"
    assert home.config_file.read_text() == (
        "# mine\n[headless]\n# policy\napprovals = \"allowlisted\"  # safe\n")
    result = run("config", "set", "headless.allowlist", "fs.read, web.get")
    assert result.stdout.startswith('headless.allowlist = ["fs.read", "web.get"] in ')
    assert run("config", "get", "headless.allowlist").stdout == '["fs.read", "web.get"]\n'


def test_set_on_a_fresh_home_creates_it(run) -> None:
    result = run("config", "set", "model", "scripted:demo.json")
    assert result.exit_code == 0, result.output
    home = Home.resolve()
    assert home.config_file.read_text() == 'model = "scripted:demo.json"\n'


def test_malformed_config_exits_1_naming_file_line_and_column(run, home: Home) -> None:
    home.config_file.write_text('model = "a"\ntheme = \n')
    before = home.config_file.read_bytes()
    for args in (("config", "get", "model"), ("config", "list"),
                 ("config", "set", "model", "b")):
        result = run(*args)
        assert result.exit_code == 1
        assert f"{home.config_file}:2:9" in result.stderr
        assert "Traceback" not in result.output
    assert home.config_file.read_bytes() == before


def test_wrong_type_in_file_exits_1_naming_key(run, home: Home) -> None:
    home.config_file.write_text('[tools]\ntimeout_ms = "x"\n')
    result = run("config", "list")
    assert result.exit_code == 1
    assert f"{home.config_file}:2" in result.stderr and "tools.timeout_ms" in result.stderr


def test_list_text_and_json(run, home: Home) -> None:
    home.config_file.write_text('theme = "light"\n')
    text = run("config", "list").stdout.splitlines()
    from workbench.config.settings import SETTINGS

    assert len(text) == len(SETTINGS)
    assert text[1].split() == ["theme", "light", "global:", str(home.config_file)]
    rows = json.loads(run("config", "list", "--json").stdout)
    assert [r["key"] for r in rows][:2] == ["model", "theme"]
    assert rows[1] == {"key": "theme", "value": "light",
                       "origin": f"global: {home.config_file}", "help": rows[1]["help"]}
    assert all(r["help"] for r in rows)


def test_path_without_project(run, home: Home, workdir: Path) -> None:
    result = run("config", "path")
    assert result.stdout == (f"global: {home.config_file} (not created yet)\n"
                             f"project: none found from {workdir}\n")


def test_project_set_trust_and_path(run, home: Home, workdir: Path) -> None:
    path = project_config_path(workdir)
    result = run("config", "set", "model", "project-model", "--project")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"model = project-model in {path}\n"
    assert "not trusted yet" in result.stderr
    assert run("config", "path").stdout.splitlines()[1] == f"project: {path} (untrusted)"

    got = run("config", "get", "model", "--origin")
    assert got.stdout == "auto\tdefault\n"
    assert "is not trusted" in got.stderr

    trusted = run("trust")
    assert trusted.exit_code == 0, trusted.output
    assert trusted.stdout.splitlines() == [
        f"trusted {path}", f"sha256 {sha256_of(path.read_bytes())}", "it sets: model"]
    got = run("config", "get", "model", "--origin")
    assert got.stdout == f"project-model\tproject: {path} (trusted)\n"
    assert got.stderr == ""
    assert run("config", "path").stdout.splitlines()[1] == f"project: {path} (trusted)"

    changed = run("config", "set", "model", "other", "--project")
    assert "differs from the version you trusted" in changed.stderr
    got = run("config", "get", "model")
    assert got.stdout == "project-model\n"
    assert "changed since you trusted it" in got.stderr
    assert "(changed since trusted at " in run("config", "path").stdout


def test_trust_from_an_explicit_subfolder(run, home: Home, workdir: Path) -> None:
    path = project_config_path(workdir)
    path.parent.mkdir()
    path.write_text('theme = "t"\n')
    sub = workdir / "src" / "pkg"
    sub.mkdir(parents=True)
    result = run("trust", str(sub))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"trusted {path}\n")


def test_trust_without_project_exits_1(run, home: Home, workdir: Path) -> None:
    result = run("trust")
    assert result.exit_code == 1
    assert "no .workbench/config.toml" in result.stderr
    assert not home.trust_file.exists()


def test_trust_refuses_an_invalid_project_config(run, home: Home, workdir: Path) -> None:
    path = project_config_path(workdir)
    path.parent.mkdir()
    path.write_text("[tools]\ntimeout = 3\n")
    result = run("trust")
    assert result.exit_code == 1
    assert f"{path}:2" in result.stderr and "tools.timeout" in result.stderr


def test_commands_are_registered_on_the_root_app() -> None:
    from workbench.cli import register

    root = typer.Typer()
    register.all_subcommands(root)
    result = CliRunner().invoke(root, ["config", "get", "model"])
    assert (result.exit_code, result.stdout) == (0, "auto\n")
    assert CliRunner().invoke(root, ["trust", "--help"]).exit_code == 0
