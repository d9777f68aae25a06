"""`workbench ext …`: install, update, remove, list, search, trust, enable, disable and
validate extensions, and report their status.

The manifest and ext packages are imported inside each command, so that loading this
module (which every `workbench` invocation does) costs no more than typer. Questions
are asked only on a terminal; without one, a command that needs a yes refuses with
exit code 2 unless `--yes` is given, so a script never hangs. A "no" exits 4.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from workbench.cli.errors import reported
from workbench.cli.output import say
from workbench.cli.pages import page_command, pages_command
from workbench.errors import ExitCode, WorkbenchError
from workbench.text import visible

if TYPE_CHECKING:
    from workbench.core.host import Host
    from workbench.core.extension_views import InstallPlan

ext_app = typer.Typer(help="Install, inspect and validate extensions.", no_args_is_help=True)
ext_app.command("pages")(pages_command)
ext_app.command("page")(page_command)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


@ext_app.command("validate")
def validate(
    path: Path = typer.Argument(..., metavar="PATH",
                               help="The extension folder, or its loca.json."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Check an extension's manifest and files without running any of its code.

    Exits 0 when the extension is valid, 1 when it has errors, 2 when PATH does not exist.
    """
    if not path.exists():
        say(f"workbench ext validate: {path} does not exist", err=True)
        raise typer.Exit(ExitCode.USAGE)
    from workbench.core.checks import validate_extension

    report, shown = validate_extension(path)
    if as_json:
        say(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        for problem in report.errors:
            say(f"error: {problem.describe()}")
        for problem in report.warnings:
            say(f"warning: {problem.describe()}")
        counts = f"{_plural(len(report.errors), 'error')}, {_plural(len(report.warnings), 'warning')}"
        verdict = "valid" if report.valid else "invalid"
        say(f"{shown}: {verdict} ({counts})")
    raise typer.Exit(ExitCode.OK if report.valid else ExitCode.ERROR)


@contextlib.contextmanager
def _host(*, builtin: bool = True) -> Iterator[Host]:
    """Open the host (its extensions are not loaded) and report what a person should
    know: config notices and the repairs made at start.

    The built-in extension is installed (or restored) first unless ``builtin`` is
    False; a failure to do so is a notice, not the end of the command.
    """
    from workbench.core.host import Host

    with Host.open(defer_extensions=True) as host:
        for notice in host.config.notices:
            say(f"notice: {notice}", err=True)
        for notice in host.extensions.prepare(builtin=builtin):
            say(f"notice: {notice}", err=True)
        yield host


def _confirm(question: str, *, yes: bool, what: str) -> bool:
    """Ask y/N on a terminal; refuse (exit 2) without one unless ``--yes`` was given."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise WorkbenchError(f"{what} needs a confirmation and there is no terminal to ask "
                             "on; pass --yes to accept", exit_code=ExitCode.USAGE)
    return typer.confirm(visible(question), default=False, err=True)


REWRITE_OPTION = typer.Option(
    False, "--allow-hook-rewrite",
    help="Let its on_tool_call hook rewrite the arguments of other extensions' tools (the "
         "hooks.rewrite grant; off unless given, or answered yes on a terminal).")


def _hook_rewrite(plan: InstallPlan, *, allow: bool, yes: bool) -> bool | None:
    """Whether the person lets the plan's on_tool_call hook rewrite other extensions'
    calls: the flag, else a y/N on a terminal (never with --yes: it stays off). None
    when the extension has no such hook."""
    if not plan.rewrites_calls:
        return None
    if allow:
        return True
    if yes or not sys.stdin.isatty():
        return False
    return typer.confirm(visible(f"Let {plan.name}'s on_tool_call hook rewrite the arguments of "
                                 "other extensions' tools (hooks.rewrite)?"), default=False, err=True)


def _approver(*, yes: bool, as_json: bool, question: str) -> Callable[[InstallPlan], bool]:
    def approve(plan: InstallPlan) -> bool:
        if not as_json:
            for line in plan.describe():
                say(line)
        return _confirm(question.format(name=plan.name), yes=yes,
                        what=f"{plan.action.capitalize()} {plan.name}")

    return approve


@contextlib.contextmanager
def _declined() -> Iterator[None]:
    """A ``no`` from the person is not an error: say so and exit 4."""
    from workbench.core.extension_views import InstallDeclined

    try:
        yield
    except InstallDeclined as exc:
        say(f"cancelled: {exc.message}", err=True)
        raise typer.Exit(int(exc.exit_code)) from None


def _echo_json(data: object) -> None:
    say(json.dumps(data, indent=2, ensure_ascii=False))


@ext_app.command("install")
def install(
    source: str = typer.Argument(..., metavar="SOURCE",
                                 help="A shipped add-on's id (`workbench ext addons`), a folder, "
                                 "a .tgz/.tar.gz/.zip file, or npm:NAME[@VERSION]."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Accept without asking (for scripts)."),
    as_json: bool = typer.Option(False, "--json", help="Print what was installed as JSON."),
    allow_hook_rewrite: bool = REWRITE_OPTION,
) -> None:
    """Install an extension after showing what it brings and asking.

    Shows its tools, each permission with its reason, hooks and what each can do,
    knowledge and skills, then asks y/N (and, for an on_tool_call hook, whether it may
    rewrite other extensions' calls). Without a terminal, --yes is required (exit 2
    otherwise).
    """
    with reported(), _declined(), _host() as host:
        approve = _approver(yes=yes, as_json=as_json, question="Install {name}?")
        plans: list[InstallPlan] = []
        rewrite: list[bool | None] = []

        def remember(plan: InstallPlan) -> bool:
            plans.append(plan)
            accepted = approve(plan)
            if accepted:
                rewrite.append(_hook_rewrite(plan, allow=allow_hook_rewrite, yes=yes))
            return accepted

        installed = host.extensions.install(source, remember)
        if rewrite and rewrite[0]:
            host.extensions.set_hook_rewrite(installed.name, True)
    if as_json:
        _echo_json({"extension": installed.to_json(), "plan": plans[0].to_json()})
    else:
        say(f"Installed {installed.name} {installed.version} in {installed.path}")


@ext_app.command("update")
def update(
    name: str = typer.Argument(..., metavar="NAME", help="The installed extension."),
    source: str | None = typer.Option(None, "--source",
                                      help="Fetch from here instead of the recorded source."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Accept without asking (for scripts)."),
    as_json: bool = typer.Option(False, "--json", help="Print what was updated as JSON."),
    allow_hook_rewrite: bool = REWRITE_OPTION,
) -> None:
    """Install a new version of an extension, showing how its permissions changed."""
    with reported(), _declined(), _host() as host:
        approve = _approver(yes=yes, as_json=as_json, question="Update {name}?")
        plans: list[InstallPlan] = []

        def remember(plan: InstallPlan) -> bool:
            plans.append(plan)
            return approve(plan)

        updated = host.extensions.update(name, remember, source=source)
        if allow_hook_rewrite and plans and plans[0].rewrites_calls:
            host.extensions.set_hook_rewrite(updated.name, True)
    if as_json:
        _echo_json({"extension": updated.to_json(), "plan": plans[0].to_json()})
    else:
        say(f"Updated {updated.name} to {updated.version}")


@ext_app.command("remove")
def remove(
    name: str = typer.Argument(..., metavar="NAME", help="The installed extension."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Remove without asking."),
) -> None:
    """Uninstall an extension with its private database and the memories it shipped."""
    with reported(), _declined(), _host() as host:
        found = host.extensions.get(name)
        if found.builtin:
            host.extensions.remove(name)  # refuses, with the reason
        if not _confirm(f"Remove {name} with its private data?", yes=yes, what=f"Remove {name}"):
            from workbench.core.extension_views import InstallDeclined

            raise InstallDeclined(f"{name} was not removed")
        host.extensions.remove(name)
    say(f"Removed {name}")


@ext_app.command("list")
def list_extensions(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The installed extensions and this folder's project's own, with their version,
    state (ok, held, broken, conflict) and origin (installed, or the project)."""
    with reported(), _host() as host:
        found = host.extensions.here()
    if as_json:
        _echo_json([extension.to_json() for extension in found])
        return
    if not found:
        say("No extensions installed.")
        return
    width = max(len(extension.name) for extension in found)
    for extension in found:
        say(f"{extension.name:<{width}}  {extension.version or '-':<10}  "
                   f"{extension.state:<8}  {extension.display_name}  ({extension.origin})")
        if extension.reason:
            say(f"{'':<{width}}  {extension.reason}")


@ext_app.command("addons")
def list_addons(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The add-ons shipped with workbench, and whether each is installed here; install
    one with `workbench ext install ID`."""
    with reported(), _host() as host:
        rows = host.extensions.addons()
    if as_json:
        _echo_json([row.to_json() for row in rows])
        return
    if not rows:
        say("No add-ons are shipped with this workbench.")
        return
    width = max(len(row.id) for row in rows)
    for row in rows:
        state = f"installed {row.version}" if row.installed else "not installed"
        say(f"{row.id:<{width}}  {state:<18}  {row.display_name}: {row.description}")


@ext_app.command("search")
def search(
    words: list[str] = typer.Argument(None, metavar="[WORDS]...", help="Words to look for."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=250, help="At most this many."),
) -> None:
    """Find extensions on the npm registry (the keywords loca-extension and workbench-extension)."""
    with reported(), _host(builtin=False) as host:
        results = host.extensions.search(words or [], limit=limit)
    if as_json:
        _echo_json([result.to_json() for result in results])
        return
    if not results:
        say("No extensions found.")
        return
    width = max(len(result.name) for result in results)
    for result in results:
        say(f"{result.name:<{width}}  {result.version:<10}  {result.description}")
    say("\nInstall one with `workbench ext install npm:NAME`.")


@ext_app.command("trust")
def trust(
    target: str = typer.Argument(..., metavar="NAME|PATH",
                                 help="An installed extension's name, or the folder of one of "
                                      "the project's own (.workbench/extensions/NAME)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Trust without asking."),
    as_json: bool = typer.Option(False, "--json", help="Print what is now approved as JSON."),
    allow_hook_rewrite: bool = REWRITE_OPTION,
) -> None:
    """Approve an extension's current files: a held installed extension runs again, a
    project's own extension runs in its (trusted) project.

    A project extension is named by its folder (anything with a '/'), so that a name
    its author chose never stands for it. It is shown like an install — tools, each
    permission with its reason, hooks and what each can do — and consented to for its
    files as they are; when they change it is held until trusted again.
    """
    with reported(), _declined(), _host() as host:
        approve = _approver(yes=yes, as_json=as_json, question="Trust {name} as it is now?")
        rewrite: list[bool | None] = []

        def remember(plan: InstallPlan) -> bool:
            accepted = approve(plan)
            if accepted:
                rewrite.append(_hook_rewrite(plan, allow=allow_hook_rewrite, yes=yes))
            return accepted

        project = "/" in target or target.startswith(".")
        if project:
            plan = host.extensions.trust_project(target, remember)
            identity = f"project:{plan.folder}"
        else:
            plan = host.extensions.trust(target, remember)
            identity = plan.name
        # Asked (or given) now: a no takes an earlier yes back; --yes alone keeps it.
        if rewrite and rewrite[0] is not None and (rewrite[0] or not yes):
            host.extensions.set_hook_rewrite(identity, bool(rewrite[0]))
    if as_json:
        _echo_json(plan.to_json())
    else:
        say(f"Trusted {plan.name} ({plan.digest})"
                   + (f" in {plan.folder}" if project else ""))


@ext_app.command("status")
def status(
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    details: bool = typer.Option(False, "--details",
                                 help="Also list each extension's tools, permissions with "
                                      "their reasons, knowledge and skills."),
) -> None:
    """What loaded, what did not and why, which tool names clash, and the tools per source.

    Loads the extensions as a start would (in this folder's project) and reports them.
    """
    from workbench.core.host import Host

    with reported(), Host.open() as host:
        report = host.tools.status_report()
    if as_json:
        _echo_json(report.to_json())
    else:
        say(report.to_text(details=details), nl=False)


def _switch(name: str, enabled: bool) -> None:
    with reported(), _host(builtin=False) as host:
        found = host.extensions.get(name)
        if found.enabled == enabled:
            say(f"{name} is already {'enabled' if enabled else 'disabled'}")
            return
        host.extensions.switch(name, enabled)
    if enabled:
        say(f"Enabled {name}: its tools are offered from the next start"
                   + (f" (it is {found.state}: {found.reason})" if not found.ok else ""))
    else:
        say(f"Disabled {name}: its tools are not offered from the next start; it stays "
                   f"installed (`workbench ext enable {name}` turns it back on)")


@ext_app.command("enable")
def enable(name: str = typer.Argument(..., metavar="NAME", help="The installed extension.")) -> None:
    """Switch an installed extension on, in every chat."""
    _switch(name, True)


@ext_app.command("disable")
def disable(name: str = typer.Argument(..., metavar="NAME", help="The installed extension.")) -> None:
    """Switch an installed extension off, in every chat, without removing it."""
    _switch(name, False)
