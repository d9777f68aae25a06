"""`workbench ext pages` and `workbench ext page`: extensions' pages without a UI.

``pages`` lists the pages the installed extensions declare; ``page`` opens one (its tool
called as the person) and prints its card as plain text, or runs one of the card's
``Action.Execute`` actions (``--action VERB``, inputs' values from ``--data``) and prints
the outcome and the page as it is after it. Everything a card or a tool says goes out
through ``say`` (escapes made visible). Never prompts: a permission the page's tool
lacks fails the command (exit 3).
"""

from __future__ import annotations

import asyncio
import json

import typer

from workbench import jsontext
from workbench.cli.errors import reported
from workbench.cli.output import say
from workbench.errors import ExitCode


def pages_command(
    extension: str | None = typer.Argument(None, metavar="[EXT]", help="Only this extension's pages."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The pages of the installed, enabled extensions (or of EXT)."""
    from workbench.core.host import Host

    with reported(), Host.open(defer_extensions=True) as host:
        rows = host.pages.list(extension)
    if as_json:
        say(json.dumps([row.to_json() for row in rows], indent=2, ensure_ascii=False))
        return
    if not rows:
        say("No extension has pages." if extension is None else f"{extension} has no pages.")
        return
    width = max(len(row.key) for row in rows)
    for row in rows:
        say(f"{row.key:<{width}}  {row.title}  ({row.extension_title})")


def page_command(
    extension: str = typer.Argument(..., metavar="EXT", help="The extension."),
    page: str = typer.Argument(..., metavar="PAGE", help="The page's id."),
    action: str | None = typer.Option(None, "--action", metavar="VERB",
                                      help="Run the card's Action.Execute with this verb."),
    data: str = typer.Option("{}", "--data", metavar="JSON",
                             help="With --action: the inputs' values by input id (other keys are "
                             "added to the action's data), as a JSON object."),
    as_json: bool = typer.Option(False, "--json", help="Print the card document (and the action's "
                                 "outcome) as JSON."),
) -> None:
    """Open a page and print its card; with --action, run one of its actions as the
    person and print the outcome, then the page again."""
    from workbench.cards import plain_text
    from workbench.core.host import Host
    from workbench.core.pages import OpenedPage, PageActionOutcome

    with reported():
        values = jsontext.loads(data, "--data")
        if action is None and data.strip() != "{}":
            say("workbench ext page: --data goes with --action", err=True)
            raise typer.Exit(ExitCode.USAGE)
        opened: OpenedPage | None
        with Host.open(defer_extensions=True) as host:
            if action is None:
                opened = asyncio.run(host.pages.open(extension, page, prompt=False))
                done: PageActionOutcome | None = None
            else:
                if not isinstance(values, dict):
                    say("workbench ext page: --data is a JSON object", err=True)
                    raise typer.Exit(ExitCode.USAGE)
                done = asyncio.run(host.pages.act_on_card(extension, page, action, values, prompt=False))
                opened = done.reopened
    if as_json:
        say(jsontext.dumps(done.to_json() if done is not None else
                           {"page": opened.page.to_json(), "card": opened.document} if opened else {},
                           indent=2, ensure_ascii=False))
    else:
        if done is not None:
            outcome = done.outcome
            if outcome.ok:
                result = outcome.result
                say(result if isinstance(result, str) else
                    jsontext.dumps(result, indent=2, ensure_ascii=False))
            else:
                error = outcome.error or {}
                say(f"error ({error.get('kind', 'error')}): {error.get('message', '')}", err=True)
            if done.reopen_error:
                say(f"error: {done.reopen_error}", err=True)
        if opened is not None:
            if done is not None:
                say("")
            say(plain_text(opened.card))
    if done is not None and not done.outcome.ok:
        from workbench.cli.call import KIND_EXIT

        kind = (done.outcome.error or {}).get("kind", "")
        raise typer.Exit(int(KIND_EXIT.get(kind, ExitCode.ERROR)))
