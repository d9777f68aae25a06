"""The readable text of a fetched page: HTML's main content with its links kept, or the
text of a PDF, page by page; bounded.

For HTML the text is taken from ``<main>`` or ``<article>`` when the page has one (else
``<body>``), leaving out scripts, styles, forms, navigation, headers, footers and
asides; headings become ``#`` lines, list items ``-`` lines, and a link
``[its text](its address)``, the address made absolute against the page's.
"""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

SKIPPED = {"script", "style", "noscript", "template", "svg", "nav", "header", "footer",
           "aside", "form", "button", "iframe", "select", "head"}
BLOCKS = {"p", "div", "section", "article", "main", "br", "tr", "table", "ul", "ol",
          "blockquote", "pre", "figure", "figcaption", "dl", "dt", "dd", "hr"}
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
VOID = {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed",
        "source", "track", "wbr"}
MAX_DEPTH = 512


class _Text(HTMLParser):
    """Collects the text of the whole body and of the main part, if any."""

    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base
        self.title = ""
        self._in_title = False
        self.skip: int | None = None
        """Where in ``stack`` a left-out element starts."""
        self.stack: list[str] = []
        self.main_depth: int | None = None
        self.body: list[str] = []
        self.main: list[str] = []
        self.link: list[str] | None = None
        self.href = ""

    def _out(self, text: str) -> None:
        self.body.append(text)
        if self.main_depth is not None:
            self.main.append(text)

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self._in_title = True
        if tag in VOID:
            if tag == "br" and self.skip is None:
                self._out("\n")
            return
        if len(self.stack) >= MAX_DEPTH:
            return
        self.stack.append(tag)
        if self.skip is not None:
            return
        if tag in SKIPPED:
            self.skip = len(self.stack) - 1
            return
        if tag in ("main", "article") and self.main_depth is None:
            self.main_depth = len(self.stack) - 1
        if tag in HEADINGS:
            self._out("\n\n" + "#" * HEADINGS[tag] + " ")
        elif tag == "li":
            self._out("\n- ")
        elif tag in BLOCKS:
            self._out("\n")
        elif tag in ("td", "th"):
            self._out(" | ")
        elif tag == "a":
            href = dict(attrs).get("href") or ""
            if href and not href.startswith(("javascript:", "data:", "#")):
                self.link, self.href = [], urljoin(self.base, href)

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        if tag in VOID or tag not in self.stack:
            return
        while self.stack and self.stack.pop() != tag:
            pass
        if self.skip is not None:
            if len(self.stack) <= self.skip:
                self.skip = None
            return
        if tag == "a" and self.link is not None:
            text = " ".join("".join(self.link).split())
            self.link = None
            if text:
                self._out(f"[{text}]({self.href})")
        elif tag in HEADINGS or tag in BLOCKS or tag == "li":
            self._out("\n")
        if self.main_depth is not None and len(self.stack) <= self.main_depth:
            self.main_depth = None
            self.main.append("\n\n")

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self.skip is not None:
            return
        if self.link is not None:
            self.link.append(data)
        else:
            self._out(data)


def _tidy(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.splitlines()]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def html_text(html: str, base: str) -> tuple[str, str]:
    """The page's title and readable text."""
    parser = _Text(base)
    try:
        parser.feed(html)
        parser.close()
    except (AssertionError, ValueError):  # html.parser gives up on some broken markup
        pass
    main = _tidy("".join(parser.main))
    body = _tidy("".join(parser.body))
    return " ".join(parser.title.split())[:500], main if len(main) >= 200 or not body else body


def pdf_text(data: bytes, max_pages: int) -> tuple[str, int, bool]:
    """The text of a PDF's first ``max_pages`` pages, its page count, and whether pages
    were left out."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data), strict=False)
    if reader.is_encrypted and not reader.decrypt(""):
        raise ValueError("the PDF is encrypted with a password")
    count = len(reader.pages)
    texts = [f"## Page {n + 1}\n{(reader.pages[n].extract_text() or '').rstrip()}"
             for n in range(min(count, max_pages))]
    return "\n\n".join(texts), count, count > max_pages


def is_pdf(content_type: str, data: bytes, url: str) -> bool:
    return ("pdf" in content_type.lower() or data[:5] == b"%PDF-"
            or urlsplit(url).path.lower().endswith(".pdf") and data[:5] == b"%PDF-")
