"""Tool relevance: BM25 over names, descriptions and triggers picks the right tool among
many decoys; ``alwaysAvailable`` tools skip ranking; the index is built once per tool list."""

from __future__ import annotations

import gc
import itertools
import weakref
from pathlib import Path

import pytest

from workbench.tools.disclosure import disclose, schema_tokens
from workbench.tools.ranking import (
    TOOL_FIELDS,
    Bm25,
    Field,
    document,
    index_for,
    name_words,
    prepare,
    query_terms,
    stem,
    terms,
    tool_fields,
    words,
)
from workbench.tools.registry import Tool


def tool(name: str, description: str, triggers: tuple[str, ...] = (), *,
         extension: str = "ext", always: bool = False, properties: dict | None = None) -> Tool:
    return Tool(name=name, description=description,
                parameters={"type": "object", "properties": properties or {}},
                extension=extension, source="extension", function=name, folder=Path("."),
                entry=None, runtime="python", always_available=always, triggers=triggers)


REAL = [
    tool("word_count", "Count the words and characters in a piece of text. Use when the user "
         "asks how long something is.",
         ("how many words is this", "count the words in this", "how long is this")),
    tool("read_file", "Read a text file and return its contents. Use when the user asks what a "
         "file says.", ("what does this file say", "show me the file", "read the file")),
    tool("list_folder", "List the entries of a folder with their kind and size. Use when the "
         "user asks what is in a folder.",
         ("what is in this folder", "list the files", "show the directory")),
    tool("send_email", "Send an email message to one or more recipients. Use when the user wants "
         "to email someone.", ("email Sam", "send an email to", "write to Anna by mail"),
         extension="mail"),
    tool("addCalendarEvent", "Add an event to the calendar at a date and time. Use when the user "
         "wants to schedule something.",
         ("add dinner with Sam at 8", "put a meeting in my calendar", "schedule a call on Friday"),
         extension="calendar"),
    tool("weather_forecast", "Get the weather forecast for a place: temperature, rain and wind "
         "for the next days. Use when the user asks about the weather.",
         ("will it rain tomorrow", "what's the weather like", "do I need an umbrella"),
         extension="weather"),
    tool("convert_currency", "Convert an amount of money from one currency to another at "
         "today's exchange rate.", ("how much is 100 dollars in euros", "convert pounds to yen"),
         extension="money"),
    tool("translate_text", "Translate text from one language into another.",
         ("translate this into Spanish", "how do you say this in French"), extension="lang"),
    tool("resize_image", "Resize an image (a photo or picture) to a new width and height.",
         ("make this picture smaller", "shrink the photo", "scale the image"), extension="images"),
    tool("git_commit", "Record the staged changes in the git repository with a message.",
         ("commit my changes", "make a commit"), extension="git"),
    tool("set_timer", "Start a countdown timer that rings when the time is up.",
         ("set a timer for 10 minutes", "remind me in an hour"), extension="clock"),
    tool("search_contacts", "Look up people in the address book by name, email or phone.",
         ("what is Marco's number", "find Anna's address"), extension="contacts"),
]

VERBS = ["export", "import", "archive", "validate", "render", "sync", "audit", "tag", "merge",
         "rotate", "encrypt", "compress", "preview", "index", "restore"]
NOUNS = ["email signature", "calendar feed", "file checksum", "folder permission", "image metadata",
         "currency symbol", "weather station", "git hook", "timer log", "contact group",
         "text encoding", "word list", "invoice", "playlist", "spreadsheet", "backup",
         "database table", "shopping list", "photo album", "translation memory"]


def decoys() -> list[Tool]:
    """300 tools whose words overlap the real ones' (email, calendar, file, image, word…)."""
    made = []
    for verb, noun in itertools.islice(itertools.product(VERBS, NOUNS), 300):
        name = f"{verb}_{noun.replace(' ', '_')}"
        made.append(tool(name, f"{verb.capitalize()} the {noun} of a project. Use when the user "
                         f"asks to {verb} a {noun}.", (f"{verb} my {noun}",),
                         extension=f"decoy-{noun.split()[0]}"))
    return made


@pytest.fixture(scope="module")
def index():
    return index_for(decoys() + REAL)


@pytest.mark.parametrize("message, expected", [
    ("How many words are in this paragraph?", "word_count"),
    ("What does ~/notes/todo.txt say? Show me the file.", "read_file"),
    ("what files are in my Downloads folder?", "list_folder"),
    ("Email Sam the quarterly report please", "send_email"),
    ("Add dinner with Sam at 8 on Thursday", "addCalendarEvent"),
    ("Will it rain in Lisbon tomorrow? What's the weather like?", "weather_forecast"),
    ("how much is 250 dollars in euros", "convert_currency"),
    ("Translate 'good morning' into Spanish", "translate_text"),
    ("make this picture smaller, it's too big to upload", "resize_image"),
    ("commit my changes with the message 'fix typo'", "git_commit"),
    ("set a timer for 25 minutes", "set_timer"),
    ("what is Marco's phone number", "search_contacts"),
])
def test_the_right_tool_ranks_first_among_many_decoys(index, message, expected):
    ranked = index.rank(message)
    assert ranked, f"nothing matched {message!r}"
    assert ranked[0][0].name == expected, [(t.name, round(s, 2)) for t, s in ranked[:5]]


def test_a_message_about_nothing_offered_matches_nothing(index):
    assert index.rank("hello there, how are you?") == []


def test_triggers_outweigh_a_description_that_merely_mentions_the_words():
    focused = tool("sum_numbers", "Add up a list of numbers.", ("add these numbers up",))
    mention = tool("notes", "Keep notes. You can add numbers, lists and these other things up to "
                   "a page long in a note.")
    ranked = index_for([mention, focused]).rank("add these numbers up")
    assert [t.name for t, _ in ranked] == ["sum_numbers", "notes"]


def test_always_available_tools_skip_ranking_and_are_always_offered():
    clock = tool("current_time", "Tell the current date and time.", ("what time is it",), always=True)
    tools = [clock] + REAL + decoys()
    index = index_for(tools)
    assert index.always == (clock,)
    assert all(t is not clock for t, _ in index.rank("what time is it"))
    assert [t for t, _ in index.search("what time is it")][0] is clock  # tool_search finds it
    # With a budget that only fits a few schemas, it is still offered, first.
    plan = disclose(tools, "email Sam", budget=400)
    assert plan.active and plan.offered[0] is clock
    assert "send_email" in [t.name for t in plan.offered]
    assert plan.offered_tokens <= 400 and len(plan.offered) < len(tools)
    assert {t.name for t in plan.deferred} | {t.name for t in plan.offered} == {t.name for t in tools}
    # Nothing relevant: only what is always offered.
    assert disclose(tools, "hello", budget=400).offered == (clock,)


def test_without_disclosure_every_tool_is_offered_relevant_first():
    tools = decoys()[:20] + REAL
    plan = disclose(tools, "set a timer for ten minutes", budget=10**9)
    assert not plan.active and plan.deferred == ()
    assert len(plan.offered) == len(tools) and plan.offered[0].name == "set_timer"
    assert [t.name for t in disclose(tools, "", budget=10**9).offered] == [t.name for t in tools]


def test_a_tool_too_large_for_the_room_left_is_skipped_not_cut():
    huge = tool("send_fax", "Send a fax.", ("send a fax",),
                properties={f"field_{i}": {"type": "string", "description": "x" * 80} for i in range(40)})
    small = tool("fax_status", "Say whether a fax was sent.", ("was my fax sent",))
    plan = disclose([huge, small], "send a fax and tell me whether it was sent",
                    budget=schema_tokens(small) + 10)
    assert plan.active and plan.offered == (small,) and plan.deferred == (huge,)


def test_words_split_names_and_meet_across_forms():
    assert name_words("addCalendarEvent") == "add Calendar Event"
    assert words("sendEmail to the word_count-tool.v2") == ["send", "email", "word", "count", "tool", "v2"]
    for group in (["files", "file"], ["counting", "counted", "counts", "count"],
                  ["directories", "directory"], ["running", "run"], ["creating", "created", "create"],
                  ["replies", "reply", "replying"], ["boxes", "box"]):
        assert len({stem(word) for word in group}) == 1, group
    assert terms("count the words") == ["count", "word", "count word"]


def test_bm25_saturates_repetition_and_discounts_long_documents():
    index = Bm25([[["cat"]], [["cat"] * 10], [["cat"] + ["dog"] * 30], [["dog"]]], [Field(1.0)])
    scores = index.scores(["cat"])
    assert set(scores) == {0, 1, 2}
    assert scores[1] > scores[0] > scores[2]
    assert scores[1] < 2 * scores[0]  # ten times the word is not ten times the score


def test_the_index_is_built_once_per_tool_list():
    tools = REAL + decoys()
    assert index_for(tools) is index_for(list(tools))
    changed = tools[:-1] + [tool(tools[-1].name, "Another description.")]
    assert index_for(changed) is not index_for(tools)


MESSAGES = ["How many words are in this paragraph?", "Email Sam the quarterly report please",
            "export my invoice and archive the backup", "what files are in my Downloads folder?",
            "Add dinner with Sam at 8 on Thursday", "render the photo album preview", "hello"]


def full_rebuild(tools: list[Tool]) -> Bm25:
    """The index made from scratch, every tool's words read and every term worked out."""
    return Bm25([tool_fields(t) for t in tools], TOOL_FIELDS)


def test_an_incremental_index_ranks_exactly_as_a_full_rebuild():
    before = decoys() + REAL
    index_for(before).rank("warm every term up")  # its documents are kept from now on
    for message in MESSAGES:
        index_for(before).rank(message)
    # One tool changed, one added, one removed, and the list reordered: a new list whose
    # index reuses the documents of every tool it still has.
    changed = [tool(t.name, t.description + " Also renders a preview.") if t.name == "render_backup"
               else t for t in before[1:]]
    after = [*reversed(changed), tool("shrink_photo", "Shrink a photo album.", ("shrink my photo",))]
    for tools in (before, after, after[:40]):
        index, reference = index_for(tools), full_rebuild(tools)
        for message in MESSAGES:
            expected = [(tools[i], score) for i, score in reference.ranked(query_terms(message))]
            assert index.search(message) == expected, message
    assert index_for(after).search("shrink the photo album")[0][0].name == "shrink_photo"


def test_a_tools_words_are_read_once_for_every_list_it_is_in():
    tools = decoys()[:30]
    prepare(tools)
    reloaded = [tool(t.name, t.description, t.triggers, extension=t.extension) for t in tools]
    assert all(document(new) is document(old) for new, old in zip(reloaded, tools))
    assert document(tool("other", "Another description.")) is not document(tools[0])


def test_words_in_other_scripts_are_kept():
    weather = tool("wetter", "Zeigt das Wetter für München und Köln.", ("wie wird das Wetter",))
    index = index_for([weather, tool("uhr", "Zeigt die Uhrzeit.")])
    assert [t.name for t, _ in index.rank("Wetter in Köln?")] == ["wetter"]
    assert "köln" in words("Köln")


def test_the_same_tool_offered_twice_ranks_in_both_places():
    twice = [REAL[0], *REAL[1:4], REAL[0]]
    index, reference = index_for(twice), full_rebuild(twice)
    message = "how many words is this"
    assert index.search(message) == [(twice[i], s) for i, s in reference.ranked(query_terms(message))]
    assert [t for t, _ in index.search(message)][:2] == [REAL[0], REAL[0]]


def _clear_list_caches() -> None:
    """Push the lists just ranked out of the small caches of recent lists."""
    for n in range(10):
        others = [tool(f"other_{n}", "Something else.")]
        index_for(others)
        disclose(others, "x", budget=10)


def test_what_is_kept_for_ranking_does_not_keep_a_tool_alive():
    made = tool("ephemeral_tool", "A tool that goes away.", ("go away",))
    kept = weakref.ref(made)
    index_for([made]).rank("go away")
    disclose([made], "go away", budget=10)
    del made
    _clear_list_caches()
    gc.collect()
    assert kept() is None
