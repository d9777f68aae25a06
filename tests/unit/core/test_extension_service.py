"""The Host's extension operations: what both faces install, update, remove, trust and
search extensions with, and the tool registry rebuilt after each change."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ext"))
from ext_samples import DEFAULT_PERMISSIONS, tool, write_extension  # noqa: E402
from test_ext_registry import Registry  # noqa: E402

from workbench.config.files import set_setting  # noqa: E402
from workbench.config.home import Home  # noqa: E402
from workbench.core.extension_service import CHANGE_WHILE_STREAMING  # noqa: E402
from workbench.core.host import Host  # noqa: E402
from workbench.events import ExtensionStatusChanged  # noqa: E402
from workbench.ext.errors import ExtensionError, InstallDeclined, RegistryError  # noqa: E402

NAME = "loca-extension-foo"


def yes(_plan: object) -> bool:
    return True


def no(_plan: object) -> bool:
    return False


@pytest.fixture
def host(workdir: Path, home: Home) -> Iterator[Host]:
    """A host on the test's home whose registry URL is a closed port."""
    set_setting(home, workdir, "extensions.registry", "http://127.0.0.1:9")
    with Host.open(cwd=workdir, defer_extensions=True) as opened:
        yield opened


@pytest.fixture
def source(workdir: Path) -> Path:
    """``loca-extension-foo`` 1.0.0 in ``workdir/foo``: one tool, ``foo``, reading
    ``$home/Documents`` and reaching example.com."""
    return write_extension(workdir / "foo")


def staged(home: Home) -> list[Path]:
    folder = home.root / "staging"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def tool_names(host: Host) -> set[str]:
    return {t.name for t in host.registry.available()}


def test_prepare_installs_the_builtin_and_lists_it(host: Host) -> None:
    assert host.extensions.made is None
    assert host.extensions.prepare() == []
    listed = host.extensions.installed()
    assert [(e.name, e.state, e.builtin) for e in listed] == [("builtin", "ok", True)]
    assert host.extensions.get("builtin").tools == listed[0].tools
    assert host.extensions.manager() is host.extensions.made


def test_prepare_without_the_builtin_installs_nothing(host: Host) -> None:
    assert host.extensions.prepare(builtin=False) == []
    assert host.extensions.installed() == []


def test_a_plan_describes_the_extension_and_keeps_its_files_staged(host: Host, source: Path,
                                                                  home: Home) -> None:
    plan = host.extensions.plan_install("foo")  # relative to the host's working folder
    assert (plan.action, plan.name, plan.version, plan.source) == (
        "install", NAME, "1.0.0", str(source))
    assert [t.name for t in plan.tools] == ["foo"]
    assert [(p.kind, p.value, p.reason) for p in plan.tools[0].permissions] == [
        ("net", "example.com:443", "Fetch the page you ask for."),
        ("read", "$home/Documents", "Read the notes you point at.")]
    assert plan.folder.is_dir() and staged(home)
    host.extensions.discard_plan(plan)
    assert staged(home) == []
    assert NAME not in {e.name for e in host.extensions.installed()}


def test_install_a_reviewed_plan_rebuilds_a_loaded_registry(host: Host, source: Path,
                                                           home: Home) -> None:
    host.loading.ensure()
    assert "foo" not in tool_names(host)
    events: list[object] = []
    host.bus.subscribe(events.append)
    installed = host.extensions.install(host.extensions.plan_install(str(source)), yes)
    assert (installed.name, installed.state, installed.version) == (NAME, "ok", "1.0.0")
    assert "foo" in tool_names(host)
    assert [e for e in events if isinstance(e, ExtensionStatusChanged)][-1].reloaded
    assert NAME in [e["name"] for e in host.tools.status_report().to_json()["extensions"]]
    assert staged(home) == []


def test_install_before_loading_leaves_the_load_for_later(host: Host, source: Path) -> None:
    host.extensions.install(str(source), yes)
    assert host.registry.available() == []  # nothing loaded yet: nothing to rebuild
    host.loading.ensure()
    assert "foo" in tool_names(host)


def test_a_declined_install_leaves_nothing(host: Host, source: Path, home: Home) -> None:
    with pytest.raises(InstallDeclined, match=f"{NAME} was not installed"):
        host.extensions.install(str(source), no)
    assert NAME not in {e.name for e in host.extensions.installed()}
    assert not (home.extensions_dir / NAME).exists() and staged(home) == []


def test_errors_say_what_and_where(host: Host, workdir: Path) -> None:
    with pytest.raises(ExtensionError, match="does not exist") as caught:
        host.extensions.plan_install("no/such/folder")
    assert caught.value.where == str(workdir / "no" / "such" / "folder")
    with pytest.raises(ExtensionError, match="not a valid npm package name"):
        host.extensions.plan_install("npm:Not Valid")
    with pytest.raises(ExtensionError, match="nope is not installed"):
        host.extensions.remove("nope")
    with pytest.raises(ExtensionError, match="cannot be removed"):
        host.extensions.remove("builtin")
    with pytest.raises(ExtensionError, match="nope is not installed"):
        host.extensions.get("nope")


def test_changes_are_refused_while_a_turn_streams(host: Host, source: Path, home: Home) -> None:
    host.extensions.install(str(source), yes)
    plan = host.extensions.plan_install(str(write_extension(home.root.parent / "bar", name="bar")))
    loop = asyncio.new_event_loop()
    try:
        host.chats.turn.task = loop.create_future()  # a turn that has not ended
        assert host.chats.busy
        for change in (lambda: host.extensions.install(plan, yes),
                       lambda: host.extensions.remove(NAME),
                       lambda: host.extensions.trust(NAME),
                       lambda: host.extensions.switch(NAME, False),
                       lambda: host.extensions.update(NAME, yes)):
            with pytest.raises(ExtensionError) as caught:
                change()
            assert caught.value.message == CHANGE_WHILE_STREAMING
    finally:
        host.chats.turn.task = None
        loop.close()
    assert staged(home) == []  # the refused plan's files were dropped
    assert [e.name for e in host.extensions.installed()] == [NAME]


def test_update_shows_the_widened_permission_then_installs(host: Host, source: Path,
                                                          workdir: Path) -> None:
    host.extensions.install(str(source), yes)
    host.loading.ensure()
    wider = {**DEFAULT_PERMISSIONS,
             "net": [{"host": "*", "ports": [443], "reason": "Fetch any page you ask for."}]}
    v2 = write_extension(workdir / "v2", version="2.0.0", tools=[tool("foo", wider), tool("bar")])
    plan = host.extensions.plan_update(NAME, source="v2")
    assert (plan.action, plan.previous_version, plan.version) == ("update", "1.0.0", "2.0.0")
    assert plan.diff is not None and plan.diff.widens
    assert plan.diff.tools_added == ("bar",)
    assert [c.describe() for c in plan.diff.permissions] == [
        "widened: foo: net example.com:443 -> *:443"]
    updated = host.extensions.update(NAME, yes, source=plan)
    assert updated.version == "2.0.0"
    assert {"foo", "bar"} <= tool_names(host)
    assert str(v2) == host.extensions.get(NAME).source


def test_a_declined_update_keeps_the_old_version(host: Host, source: Path, workdir: Path) -> None:
    host.extensions.install(str(source), yes)
    write_extension(workdir / "v2", version="2.0.0")
    with pytest.raises(InstallDeclined):
        host.extensions.update(NAME, no, source="v2")
    assert host.extensions.get(NAME).version == "1.0.0"


def test_remove_drops_the_tools_and_the_private_database(host: Host, source: Path,
                                                        home: Home) -> None:
    host.extensions.install(str(source), yes)
    host.loading.ensure()
    host.databases.execute(NAME, "CREATE TABLE notes (body TEXT)")
    assert host.databases.path(NAME).exists()
    host.extensions.remove(NAME)
    assert "foo" not in tool_names(host)
    assert [e.name for e in host.extensions.installed()] == ["builtin"]
    assert not host.databases.path(NAME).exists()
    assert not (home.extensions_dir / NAME).exists()


def test_a_tampered_extension_is_held_until_trusted(host: Host, source: Path, home: Home) -> None:
    host.extensions.install(str(source), yes)
    host.loading.ensure()
    main = home.extensions_dir / NAME / "main.py"
    main.write_text(main.read_text() + "# changed\n")
    host.loading.reload()
    held = host.extensions.get(NAME)
    assert held.state == "held" and "files changed since you approved it: main.py" in held.reason
    assert "foo" not in tool_names(host)

    plan = host.extensions.plan_trust(NAME)
    assert (plan.action, plan.changed_files) == ("trust", ("main.py",))
    assert plan.diff is not None and plan.diff.empty
    assert host.extensions.get(NAME).state == "held"  # looking changed nothing

    main.write_text(main.read_text() + "# again\n")
    with pytest.raises(ExtensionError, match="changed since you reviewed them"):
        host.extensions.trust(NAME, digest=plan.digest)
    assert host.extensions.get(NAME).state == "held"

    again = host.extensions.plan_trust(NAME)
    trusted = host.extensions.trust(NAME, digest=again.digest)
    assert trusted.digest == again.digest
    assert host.extensions.get(NAME).state == "ok"
    assert "foo" in tool_names(host)


def test_trust_asks_and_a_no_keeps_it_held(host: Host, source: Path, home: Home) -> None:
    host.extensions.install(str(source), yes)
    main = home.extensions_dir / NAME / "main.py"
    main.write_text(main.read_text() + "# changed\n")
    with pytest.raises(InstallDeclined, match="stays held"):
        host.extensions.trust(NAME, no)
    assert host.extensions.get(NAME).state == "held"
    with pytest.raises(ExtensionError, match="checked by its signature"):
        host.extensions.plan_trust("builtin")


def test_switching_an_extension_off_and_on(host: Host, source: Path) -> None:
    host.extensions.install(str(source), yes)
    host.loading.ensure()
    host.extensions.switch(NAME, False)
    assert not host.extensions.get(NAME).enabled
    assert "foo" not in tool_names(host)
    assert host.tools.status_report().disabled == (NAME,)
    host.extensions.switch(NAME, True)
    assert "foo" in tool_names(host)
    with pytest.raises(ExtensionError, match="nope is not installed"):
        host.extensions.switch("nope", False)


@pytest.fixture
def registry(home: Home, workdir: Path) -> Iterator[Registry]:
    """A loopback npm registry named by the ``extensions.registry`` setting."""
    served = Registry()
    served.thread.start()
    set_setting(home, workdir, "extensions.registry", served.url)
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()


def test_search_and_install_from_the_registry(registry: Registry, workdir: Path,
                                              home: Home) -> None:
    from ext_samples import make_tgz

    tarball = make_tgz(write_extension(workdir / "pkg", version="1.2.0"), workdir / "foo.tgz")
    registry.publish(NAME, {"1.2.0": tarball.read_bytes()}, latest="1.2.0",
                     description="Foo things.")
    registry.search_results = {"loca-extension": [
        {"name": NAME, "version": "1.2.0", "description": "Foo things."}]}
    with Host.open(cwd=workdir, defer_extensions=True) as host:
        found = host.extensions.search(["foo"], limit=5)
        assert [(r.name, r.version, r.description) for r in found] == [
            (NAME, "1.2.0", "Foo things.")]
        assert host.extensions.search(["nothing-like-it"]) == []
        installed = host.extensions.install(f"npm:{NAME}", yes)
        assert (installed.version, installed.source) == ("1.2.0", f"npm:{NAME}")


def test_search_with_an_unreachable_registry_is_an_error(host: Host) -> None:
    with pytest.raises(RegistryError, match="cannot reach the registry"):
        host.extensions.search(["weather"])

