"""The Office and Web add-ons' own pieces that need no worker: an XML part's prologue
check, the readable text of hostile HTML, the masking of keys in every form a URL or a
form would carry them, and the person's provider settings from a file and the
environment."""

from __future__ import annotations

from urllib.parse import quote, quote_plus

import pytest

from addon_modules import addon_path

addon_path("office")
addon_path("web")

from officedocs.files import MAX_PROLOGUE, _prologue_refusal  # noqa: E402
from websearch import providers, readable  # noqa: E402
from websearch.secrets import HIDDEN, Secrets  # noqa: E402


@pytest.mark.parametrize("head, said", [
    (b'<?xml version="1.0"?>\n<w:document/>', None),
    (b"\xef\xbb\xbf<?xml?><!--a comment--><a/>", None),
    (b"<!---->" * 10 + b"<a/>", None),
    (b'<!DOCTYPE a [<!ENTITY b "c">]><a>&b;</a>', "declares a document type"),
    (b"<!--" + b" " * 20000 + b'--><!doctype a SYSTEM "file:///etc/passwd"><a/>', "declares a document type"),
    (b"<?xml version='1.0'?><!ENTITY x 'y'><a/>", "declares a document type"),
    (b"<!-- never closed", "is not well-formed XML"),
    (b"<!--" + b" " * MAX_PROLOGUE, "has a prologue longer than"),
    (b" " * MAX_PROLOGUE, "has a prologue longer than"),
], ids=["declaration", "bom-and-comment", "empty-comments", "entities", "doctype-after-long-comment",
        "entity-alone", "unclosed-comment", "endless-comment", "endless-space"])
def test_an_xml_parts_prologue(head, said):
    found = _prologue_refusal(head[:MAX_PROLOGUE])
    assert (found is None) if said is None else (said in found)


def test_readable_text_keeps_the_main_content_and_its_links_and_survives_hostile_markup():
    page = ("<html><head><title> The  Title </title><script>alert('x')</script></head><body>"
            "<nav><a href='/n'>Nav</a><div><p>deep nav</p></div></nav>"
            "<article><h2>News</h2><p>Read <a href='more.html'>more <b>here</b></a> "
            "and <a href='javascript:evil()'>not this</a>.</p>"
            "<ul><li>one<li>two</ul><table><tr><th>a<th>b<tr><td>1<td>2</table>"
            + "<p>filler text</p>" * 20 + "</article><aside>ads</aside><footer>foot</footer>")
    title, text = readable.html_text(page, "https://example.org/news/today")
    assert title == "The Title"
    assert text.startswith("## News\n\nRead [more here](https://example.org/news/more.html) and not this.")
    assert "- one\n- two" in text and "| a | b" in text and "| 1 | 2" in text
    for gone in ("alert", "Nav", "deep nav", "ads", "foot", "javascript"):
        assert gone not in text
    # Unclosed, misnested and very deep markup gives text, never an error.
    deep = "<div>" * 5000 + "<p>bottom</p>" + "<b><i>crossed</b></i><p>unclosed <a href=x>link"
    assert "bottom" in readable.html_text(deep, "http://e.org/")[1]
    assert readable.html_text("", "http://e.org/") == ("", "")


def test_every_form_of_a_key_is_masked():
    secrets = Secrets()
    key = secrets.add("abc/def+ghi=jkl")
    text = f"x {key} y {quote(key, safe='')} z {quote_plus(key)}"
    assert secrets.mask(text) == f"x {HIDDEN} y {HIDDEN} z {HIDDEN}"
    assert secrets.clean({"a": [text], key: 1}) == {"a": [secrets.mask(text)], HIDDEN: 1}
    assert Secrets().mask(None) == ""


def test_the_persons_settings_come_from_the_file_and_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in [*providers.KEY_VARIABLES.values(), "GOOGLE_CSE_ID", "WORKBENCH_WEB_PROVIDERS"]:
        monkeypatch.delenv(variable, raising=False)
    secrets = Secrets()
    assert providers.settings(secrets).order == list(providers.NAMES)  # no file: the default order
    settings = tmp_path / ".config" / "workbench" / "web.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text('providers = ["google", "brave", "google", "bing"]\n[google]\nkey = "from-file"\n'
                        'cx = "e1"\nendpoint = "ftp://elsewhere/"\n[brave]\nkey = "brave-file"\n')
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "brave-env")
    chosen = providers.settings(secrets)
    assert chosen.order == ["google", "brave"] and chosen.google_cx == "e1"
    assert chosen.keys == {"google": "from-file", "brave": "brave-env"}  # the environment wins
    assert chosen.endpoints["google"] == providers.ENDPOINTS["google"]  # not http(s): the default
    assert chosen.notes == ["unknown providers bing were left out (known: brave, tavily, google)"]
    assert secrets.mask("from-file brave-env") == f"{HIDDEN} {HIDDEN}"
    monkeypatch.setenv("WORKBENCH_WEB_PROVIDERS", " Tavily , brave")
    assert providers.settings(Secrets()).order == ["tavily", "brave"]
