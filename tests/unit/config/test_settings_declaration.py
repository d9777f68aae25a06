"""One declaration per setting: the models say each one's type, default, rule and help once,
code reads the typed view, and no default is written a second time in code."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from workbench.config import DEFAULTS, Config, Home, Settings
from workbench.config.settings import SETTINGS, field_docstrings, validate
from workbench.sandbox.policy import Limits
from workbench.sandbox.pool import PoolLimits

PACKAGE = Path(__file__).resolve().parents[3] / "workbench"


def leaf_fields(model: type[BaseModel], prefix: str = ""):
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            assert field.annotation.__doc__, f"section {prefix}{name} has no docstring"
            yield from leaf_fields(field.annotation, f"{prefix}{name}.")
        else:
            yield prefix + name, field


def test_every_setting_is_a_field_with_a_docstring_and_its_help_is_that_docstring() -> None:
    fields = dict(leaf_fields(Settings))
    assert list(fields) == list(SETTINGS)
    sections = {"": Settings} | {f"{name}.": field.annotation for name, field in
                                 Settings.model_fields.items() if isinstance(field.annotation, type)
                                 and issubclass(field.annotation, BaseModel)}
    for key in fields:
        prefix, _dot, name = key.rpartition(".")
        docstring = field_docstrings(sections[f"{prefix}." if prefix else ""]).get(name, "")
        assert docstring.strip(), f"{key} has no docstring"
        assert SETTINGS[key].help == " ".join(docstring.split())
        assert "\n" not in SETTINGS[key].help


def test_every_default_passes_its_own_rule() -> None:
    for key, setting in SETTINGS.items():
        assert validate(key, setting.default) == setting.default, key


def test_the_view_holds_what_applies_and_cannot_be_changed(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.ensure()
    home.config_file.write_text('[tools]\ntimeout_ms = 1500\n[mcp]\ndisabled = ["a"]\n')
    config = Config.load(home, tmp_path)
    view = config.settings
    assert (view.tools.timeout_ms, view.mcp.disabled, view.sandbox.memory_mb) == (1500, ("a",), 1024)
    assert view.providers.timeout_s == DEFAULTS.providers.timeout_s == 120.0
    with pytest.raises(ValidationError):
        view.tools.timeout_ms = 5  # type: ignore[misc]
    config.set("tools.timeout_ms", "2500")
    assert config.settings.tools.timeout_ms == 2500 and view.tools.timeout_ms == 1500
    assert config.settings is config.settings


def _calls_by_key(tree: ast.AST):
    """``x.get("tools.timeout_ms")`` (any receiver) and ``config.get("model")``; a file's
    own values (``layer.values``) are not what applies and are read by key."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("get", "__getitem__") and node.args
                and isinstance(node.args[0], ast.Constant) and node.args[0].value in SETTINGS):
            receiver = ast.unparse(node.func.value)
            if receiver.endswith(".values"):
                continue
            if "." in node.args[0].value or receiver.endswith(("config", "settings")):
                yield node.lineno, ast.unparse(node)


def test_code_outside_the_config_reads_the_typed_view_not_dotted_keys() -> None:
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.parent.name == "config" and path.parent.parent == PACKAGE:
            continue
        for line, call in _calls_by_key(ast.parse(path.read_text(), str(path))):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {call}")
    assert found == [], "read these through Config.settings:\n" + "\n".join(found)


def _constant(node: ast.expr | None):
    """The value of a literal default (``300_000``, ``1 << 20``, ``"deny"``), else None."""
    if node is None:
        return None
    try:
        return eval(compile(ast.Expression(node), "<default>", "eval"), {"__builtins__": {}})  # noqa: S307
    except Exception:
        return None


def _defaults(tree: ast.AST):
    """``(line, name, value)`` of every parameter default, class-level field default and
    module constant (``DEFAULT_THEME`` counts as ``default_theme``)."""
    for statement in getattr(tree, "body", []):
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    yield statement.lineno, target.id.lower(), statement.value
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            positional = arguments.posonlyargs + arguments.args
            pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
            pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
            for argument, default in pairs:
                yield node.lineno, argument.arg, default
        elif isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                    yield statement.lineno, statement.target.id, statement.value


CHECKED_BESIDE = {
    # workbench.sandbox sits beside workbench.config (the layers contract in pyproject.toml)
    # and cannot read the declaration: its own defaults are checked against it below.
    ("sandbox/policy.py", "memory_mb"),
    # The TUI's first frame is drawn before the settings (pydantic) are imported: its theme
    # is checked against the declaration in tests/tui/test_tui_themes.py.
    ("tui/themes.py", "default_theme"),
}


def test_no_default_of_a_setting_is_written_again_in_code() -> None:
    by_name: dict[str, set] = {}
    for key, setting in SETTINGS.items():
        if setting.type in (int, float, str) and setting.default not in (0, "", True, False):
            by_name.setdefault(key.rsplit(".", 1)[-1], set()).add(setting.default)
    found = []
    for path in PACKAGE.rglob("*.py"):
        where = str(path.relative_to(PACKAGE))
        if where == "config/settings.py":
            continue
        for line, name, default in _defaults(ast.parse(path.read_text(), str(path))):
            value = _constant(default)
            if not isinstance(value, (int, float, str)):
                continue
            wanted = by_name.get(name.removeprefix("default_"), set())
            if not isinstance(value, bool) and value in wanted \
                    and (where, name) not in CHECKED_BESIDE:
                found.append(f"{where}:{line}: {name} = {ast.unparse(default)}")
    assert found == [], "use DEFAULTS.<section>.<name> instead of:\n" + "\n".join(found)


def test_the_sandbox_limits_agree_with_the_declaration() -> None:
    assert Limits().memory_mb == DEFAULTS.sandbox.memory_mb
    assert Limits().output_bytes == DEFAULTS.tools.max_output_bytes
    pool = PoolLimits()
    assert (pool.per_tool, pool.total, pool.memory_mb, pool.idle_s) == (
        DEFAULTS.sandbox.pool_size, DEFAULTS.sandbox.pool_total, DEFAULTS.sandbox.pool_memory_mb,
        DEFAULTS.sandbox.pool_idle_s)
