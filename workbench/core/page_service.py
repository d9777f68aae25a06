"""Extensions' pages: listed from their manifests, opened by calling their own tools as
the person, and acted on through the tools their manifests declare, and no others.

``PageService`` is reached as ``host.pages``. A page (``pages`` in ``loca.json``) names a
tool of its extension; opening it calls that tool as the person with the page's
``arguments`` and checks the ``{"card": …}`` it returns (``workbench.cards``). An
``Action.Execute`` on the page names a verb: it runs only when the verb is a tool the
same extension's manifest declares (by its name there, or the name it is offered under,
``addon__<id>__<tool>`` for a first-party add-on), and only that extension's own tool —
never a built-in, another extension's, an MCP server's or a plugin's tool, whatever the
card says. The call goes through the gateway like any call a person makes (arguments
checked against the tool's schema, hooks, grants), and the page is opened again after it.
Nothing here needs a UI: the TUI's Pages screen and ``workbench ext page`` both call it.

This module imports the cards package, the core's call shapes and the leaves; never a
front-end.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from workbench import jsontext
from workbench.cards import CardError, ExecuteAction, action_data, input_values, parse_card
from workbench.core.calls import CallOptions
from workbench.core.pages import OpenedPage, PageActionOutcome, PageError, PageRow
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.extension_service import ExtensionService
    from workbench.core.loading import Loading
    from workbench.core.tool_service import ToolService
    from workbench.ext.installed import InstalledExtension
    from workbench.manifest.models import Manifest, Page
    from workbench.tools.registry import Tool, ToolRegistry

EXTENSION_SOURCES = ("builtin", "extension")
"""The registry's sources of extensions' tools: an MCP server's or a plugin's tool is
never a page's, whatever its extension field says."""

MAX_ACTION_BYTES = 256 * 1024
"""The largest data an action sends to its tool, as JSON."""


class PageService:
    """The pages of the host's extensions; see the module docstring.

    Args:
        extensions: The installed extensions and the project's (their manifests).
        registry: The tools loaded (an action's tool is looked up there by extension).
        tools: How a person's call is made.
        loading: The tools are loaded before a page is opened.
    """

    def __init__(self, *, extensions: ExtensionService, registry: ToolRegistry, tools: ToolService,
                 loading: Loading) -> None:
        self.extensions = extensions
        self.registry = registry
        self.tools = tools
        self.loading = loading

    # --- listing ---------------------------------------------------------------

    def _usable(self) -> list[InstalledExtension]:
        return [found for found in self.extensions.here()
                if found.manifest is not None and found.ok and found.enabled]

    def list(self, extension: str | None = None) -> list[PageRow]:
        """The pages of the extensions that are installed, enabled and in order (or of
        ``extension`` alone), in the order their manifests list them.

        Raises:
            PageError: ``extension`` is named and is not such an extension. Blocks
                (reads the extensions' folders): a face calls it from a thread.
        """
        rows: list[PageRow] = []
        named = False
        for found in self._usable():
            if extension is not None and found.name != extension:
                continue
            named = True
            assert found.manifest is not None
            rows.extend(_row(found, page) for page in found.manifest.pages)
        if extension is not None and not named:
            raise PageError(f"no extension named {extension!r} is installed, enabled and in order "
                            "(workbench ext list)", where=f"page {extension}")
        return rows

    def _find(self, extension: str, page_id: str) -> tuple[PageRow, Page, Manifest]:
        for found in self._usable():
            if found.name == extension and found.manifest is not None:
                page = found.manifest.page(page_id)
                if page is None:
                    listed = ", ".join(item.id for item in found.manifest.pages) or "none"
                    raise PageError(f"{extension} has no page {page_id!r} (its pages: {listed})",
                                    where=f"page {extension}/{page_id}")
                return _row(found, page), page, found.manifest
        raise PageError(f"no extension named {extension!r} is installed, enabled and in order "
                        "(workbench ext list)", where=f"page {extension}/{page_id}")

    def _tool(self, row: PageRow, manifest: Manifest, verb: str) -> Tool:
        """The loaded tool ``verb`` names among ``row``'s extension's own declared tools.

        Raises:
            PageError: The manifest declares no such tool, or it is not loaded.
        """
        declared = manifest.tool(verb)
        candidates = [tool for tool in self.registry.all_tools() if tool.extension == row.extension
                      and tool.source in EXTENSION_SOURCES]
        if declared is None:
            # The name it is offered under (addon__<id>__<tool>) names a declared tool too.
            offered = next((tool for tool in candidates if tool.name == verb), None)
            declared = manifest.tool(offered.own_name) if offered is not None else None
        if declared is None:
            raise PageError(f"{verb!r} is not a tool of {row.extension}: a page runs only the tools "
                            "its own extension's manifest declares", where=f"page {row.key}")
        tool = next((tool for tool in candidates if tool.own_name == declared.name), None)
        if tool is None:
            raise PageError(f"the tool {declared.name!r} of {row.extension} is not loaded "
                            "(workbench ext status)", where=f"page {row.key}")
        try:
            resolved = self.registry.resolve(tool.qualified_name)
        except WorkbenchError:
            resolved = None
        if resolved is not tool:
            raise PageError(f"the tool {declared.name!r} of {row.extension} is not reachable by "
                            f"{tool.qualified_name}", where=f"page {row.key}")
        return tool

    # --- opening ---------------------------------------------------------------

    async def open(self, extension: str, page_id: str, *, prompt: bool = True) -> OpenedPage:
        """Open a page: call its tool as the person and check the card it returns.

        Args:
            extension: The extension's name.
            page_id: The page's id in its manifest.
            prompt: Whether a permission the tool lacks may be asked for (the TUI); when
                false the call fails at once instead (``workbench ext page``).

        Raises:
            PageError: No such page, its tool is not loaded or fails, or what it returns
                is not ``{"card": <a card of the subset>}``; the message says which.
        """
        await asyncio.to_thread(self.loading.ensure)
        row, page, manifest = await asyncio.to_thread(self._find, extension, page_id)
        tool = self._tool(row, manifest, page.tool)
        outcome = await self.tools.call(tool.qualified_name, dict(page.arguments),
                                        CallOptions(caller="person", prompt=prompt))
        if not outcome.ok:
            error = outcome.error or {}
            raise PageError(f"its tool {page.tool} failed ({error.get('kind', 'error')}): "
                            f"{error.get('message', '')}", where=f"page {row.key}")
        document = _card_document(outcome.result, row)
        try:
            card = parse_card(document, where=f"page {row.key}: the card")
        except CardError as exc:
            raise PageError(exc.message, where=exc.where) from None
        return OpenedPage(page=row, card=card, document=document)

    # --- acting ----------------------------------------------------------------

    async def act(self, extension: str, page_id: str, verb: str, data: Any, *,
                  prompt: bool = True) -> PageActionOutcome:
        """Run an ``Action.Execute`` of a page: call the tool ``verb`` of the page's own
        extension as the person with ``data``, then open the page again.

        Args:
            extension: The extension's name.
            page_id: The page's id.
            verb: A tool its manifest declares (by its name there, or the name it is
                offered under).
            data: The action's data with the inputs' values merged in (a JSON object):
                the tool's arguments, checked against its schema by the gateway.
            prompt: As for ``open``.

        Raises:
            PageError: No such page, ``verb`` is not a tool of the page's extension,
                or ``data`` is not a JSON object within ``MAX_ACTION_BYTES``. A call
                that fails is not raised: its outcome says so.
        """
        await asyncio.to_thread(self.loading.ensure)
        row, _page, manifest = await asyncio.to_thread(self._find, extension, page_id)
        _check_data(data, row)
        tool = self._tool(row, manifest, verb)
        outcome = await self.tools.call(tool.qualified_name, data,
                                        CallOptions(caller="person", prompt=prompt))
        try:
            reopened: OpenedPage | None = await self.open(extension, page_id, prompt=prompt)
            error = ""
        except WorkbenchError as exc:
            reopened, error = None, str(exc)
        return PageActionOutcome(page=row, verb=verb, outcome=outcome, reopened=reopened,
                                 reopen_error=error)

    async def act_on_card(self, extension: str, page_id: str, verb: str,
                          values: dict[str, Any] | None = None, *,
                          prompt: bool = False) -> PageActionOutcome:
        """Run the page's own ``Action.Execute`` whose verb is ``verb`` as a person would
        press it (``workbench ext page --action``): the page is opened, the action
        found on its card, its inputs' values taken from ``values`` (by input id; an input
        not named keeps the card's value) and checked as the card declares them, and
        the action's data sent with them; keys of ``values`` that name no input are
        added to the data as they are.

        Raises:
            PageError: As for ``act``; or the card has no enabled action ``verb``, or an
                input's value is missing or not valid (each named).
        """
        opened = await self.open(extension, page_id, prompt=prompt)
        values = dict(values or {})
        _check_data(values, opened.page)
        card = opened.card
        offered = [action for action in card.all_actions() if isinstance(action, ExecuteAction)]
        action = next((item for item in offered if item.verb == verb), None)
        if action is None:
            listed = ", ".join(sorted({item.verb for item in offered})) or "none"
            raise PageError(f"the page offers no action {verb!r} (its actions: {listed})",
                            where=f"page {opened.page.key}")
        if not action.is_enabled:
            raise PageError(f"the page's action {verb!r} is disabled", where=f"page {opened.page.key}")
        ids = {item.id for item in card.inputs()}
        entered = {key: value for key, value in values.items() if key in ids}
        checked, problems = input_values(card, entered)
        if problems and action.associated_inputs == "auto":
            raise PageError("; ".join(str(problem) for problem in problems),
                            where=f"page {opened.page.key}")
        data = action_data(action, checked)
        data.update({key: value for key, value in values.items() if key not in ids})
        return await self.act(extension, page_id, verb, data, prompt=prompt)


def _row(found: InstalledExtension, page: Page) -> PageRow:
    return PageRow(extension=found.name, extension_title=found.display_name, id=page.id,
                   title=page.title, tool=page.tool)


def _card_document(result: Any, row: PageRow) -> dict[str, Any]:
    """The card document in a page tool's result: ``{"card": {…}}``, or that as JSON text."""
    if isinstance(result, str):
        try:
            result = jsontext.loads(result, f"page {row.key}: the result of {row.tool}")
        except WorkbenchError:
            result = None
    if not isinstance(result, dict) or not isinstance(result.get("card"), dict):
        raise PageError(f"its tool {row.tool} returned no card: a page's tool returns "
                        '{"card": {"type": "AdaptiveCard", "version": "1.5", …}}',
                        where=f"page {row.key}")
    return result["card"]


def _check_data(data: Any, row: PageRow) -> None:
    if not isinstance(data, dict):
        raise PageError("an action's data is a JSON object", where=f"page {row.key}")
    found = jsontext.encodable(data)
    if found is not None:
        raise PageError(f"the action's data: {found[1]}", where=f"page {row.key}#{found[0]}")
    size = len(jsontext.dumps(data, ensure_ascii=False).encode("utf-8"))
    if size > MAX_ACTION_BYTES:
        raise PageError(f"the action's data is {size} bytes, more than {MAX_ACTION_BYTES}",
                        where=f"page {row.key}")
