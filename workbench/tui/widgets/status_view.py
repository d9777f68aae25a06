"""The extension status report, drawn: what loaded, what did not and why, which tool
names clash, and the tools offered per source."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from workbench.core.status import StatusReport
from workbench.tui.paths import shown_path
from workbench.tui.widgets.plan_view import heading, line

STATE_STYLES = {"held": "bold $text-warning", "broken": "bold $text-error",
                "untrusted": "bold $text-warning"}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _party(who: dict) -> str:
    return f"{who['extension']} ({who['source']})"


class StatusView(VerticalScroll):
    """A ``StatusReport``; scrolls with the arrow and page keys."""

    DEFAULT_CSS = """
    StatusView {
        height: 1fr;
        padding: 0 1;
        & > .status-view--summary { height: auto; text-style: bold; }
        & > .status-view--counts { height: auto; color: $text-muted; }
        & > .status-view--message { height: auto; padding-left: 4; color: $text-muted; }
        & > .plan-view--heading { height: auto; margin-top: 1; }
        & > .plan-view--item { height: auto; padding-left: 2; }
        & > .plan-view--muted { height: auto; padding-left: 2; color: $text-muted; }
    }
    """

    report: reactive[StatusReport | None] = reactive(None, recompose=True)
    """The report shown; None while it is being built."""

    def compose(self) -> ComposeResult:
        report = self.report
        if report is None:
            yield line("Reading the extensions…", "plan-view--muted")
            return
        yield from self._summary(report)
        yield from self._loaded(report)
        yield from self._errors(report)
        yield from self._conflicts(report)
        if report.notices:
            yield heading("Notices")
            for notice in report.notices:
                yield line(notice)

    def _summary(self, report: StatusReport) -> Iterable[Widget]:
        parts = [f"{report.total_loaded} loaded", _plural(report.total_errors, "load error"),
                 _plural(len(report.conflicts), "conflict")]
        yield Static(" · ".join(parts), classes="status-view--summary")
        counts = ", ".join(f"{source} {count}" for source, count in report.source_counts())
        yield Static(f"{_plural(report.counts['total_tools'], 'tool')} offered ({counts}); "
                     f"{report.counts['shadowed_count']} shadowed", classes="status-view--counts")
        if report.host_tools:
            yield Static(f"host tools: {', '.join(report.host_tools)}",
                         classes="status-view--counts")

    def _loaded(self, report: StatusReport) -> Iterable[Widget]:
        yield heading("Loaded")
        if not report.extensions:
            yield line("none", "plan-view--muted")
        width = max((len(entry.name) for entry in report.extensions), default=0)
        for entry in report.extensions:
            text = Content.assemble((f"{entry.name:<{width}}", "bold"),
                                    (f"  {entry.version or '-':<8}", "$text-muted"),
                                    f"  {_plural(len(entry.tools), 'tool')}")
            capabilities = [c for c in entry.capabilities() if c != "tools"]
            if capabilities:
                text = Content.assemble(text, (f" + {', '.join(capabilities)}", "$text-muted"))
            if entry.scope != "global":
                text = Content.assemble(text, (f"  ({entry.scope})", "$text-muted"))
            yield line(text)
        if report.disabled:
            yield line(f"switched off: {', '.join(report.disabled)}", "plan-view--muted")

    def _errors(self, report: StatusReport) -> Iterable[Widget]:
        yield heading("Load errors")
        if not report.load_errors:
            yield line("none", "plan-view--muted")
        for problem in report.load_errors:
            yield line(Content.assemble((problem.state, STATE_STYLES.get(problem.state, "bold")),
                                        "  ", (problem.extension, "bold"), "  ",
                                        (shown_path(problem.source_path), "$text-muted")))
            yield Static(Content(problem.error_message), classes="status-view--message")

    def _conflicts(self, report: StatusReport) -> Iterable[Widget]:
        yield heading("Conflicts")
        if not report.conflicts:
            yield line("none", "plan-view--muted")
        for conflict in report.conflicts:
            yield line(Content.assemble(
                (conflict["tool_name"], "bold"), ": ",
                (_party(conflict["winner"]), "$text-success"),
                " wins; shadowed: ", ", ".join(_party(s) for s in conflict["shadowed"])))
