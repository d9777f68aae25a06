"""Relevance: which tools a message is about, by Okapi BM25 over their own words.

Each tool is a document of weighted fields — its name (split on ``_``, ``-``, ``.``
and camelCase), its description, its ``triggers`` (the phrases a person would say,
weighted highest) and its extension's name — scored with BM25F: each field's term
frequencies are normalised by that field's length (its own ``b``), weighted, summed
and saturated once (``K1``). Words go through a small normaliser of our own
(lowercase, punctuation dropped, English stop words dropped, simple suffix
stripping), and adjacent words also count as a pair, so a phrase outranks the same
words scattered.

An index is made once for a list of tools and cached by the identity of its tools
(the index holds them, so the key cannot be reused while it lives): a reload builds
new ``Tool`` objects and so a new index. It is made incrementally (``ToolIndex``):
each tool's words are read once and kept for every list it is in, and each term's
contributions are worked out the first time a message has it, so the first message
after the tool list changes pays for the changed tools only, not for all of them
(``bench/ranking.py``). ``alwaysAvailable`` tools skip ranking.

Imports nothing of ours beyond the registry's ``Tool``.
"""

from __future__ import annotations

import math
import re
import threading
import weakref
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from workbench.tools.registry import Tool

K1 = 1.2
"""Term-frequency saturation: how quickly repeating a word stops adding to the score."""

B = 0.75
"""Length normalisation: how much a long document's matches are discounted."""

MAX_QUERY_CHARS = 8000
"""A longer message is ranked by its first and last halves of this many characters,
so a pasted document cannot make ranking slow."""

STOP_WORDS = frozenset("""
a about above after again all also am an and any are as at be been before being both but
by can could did do does doing done for from further had has have having he her here hers
him his how i if in into is it its itself just let lets me more most my no nor not now of
off on once only or other our ours out over own please same she should so some such than
that the their them then there these they this those through to too under until up us use
very was we were what when where which while who whom why will with would you your yours
""".split())
"""Function words that say nothing about which tool is meant."""

_WORD = re.compile(r"[^\W_]+")
"""Runs of letters and digits, in any script (``_`` separates words in names)."""
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_VOWEL = re.compile(r"[aeiouy]")
_DOUBLE_KEEP = frozenset("lsz")


def stem(word: str) -> str:
    """Strip common English suffixes so the forms of one word meet.

    ``files``/``file``, ``counting``/``counted``/``counts``/``count``,
    ``directories``/``directory``, ``running``/``run`` and ``creating``/``create``
    each end up the same. It is deliberately small: consistency matters more here
    than producing real words.

    Args:
        word: One lowercase word.

    Returns:
        Its stem (the word itself when it is short or has no known suffix).
    """
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "i"
    elif word.endswith("es") and word[-3:-2] in ("s", "x", "z") or word.endswith(("ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        base = word[:-len(suffix)]
        if word.endswith(suffix) and len(base) >= 2 and _VOWEL.search(base) \
                and not word.endswith("eed"):
            word = base
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in _DOUBLE_KEEP \
                    and not _VOWEL.match(word[-1]):
                word = word[:-1]
            break
    if word.endswith("y") and len(word) > 3:
        word = word[:-1] + "i"
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """The words of ``text``: split on anything not a letter or digit (of any script)
    and at camelCase boundaries, lowercased, stop words and single letters dropped,
    stemmed."""
    found: list[str] = []
    known = _RAW_WORDS
    for raw in _WORD.findall(text):
        made = known.get(raw)
        if made is None:
            if len(known) >= RAW_WORDS_KEPT:
                known.clear()
            made = known[raw] = _raw_words(raw)
        found += made
    return found


RAW_WORDS_KEPT = 50_000
"""How many distinct raw tokens ``words`` remembers the words of before starting over."""

_RAW_WORDS: dict[str, tuple[str, ...]] = {}


def _raw_words(raw: str) -> tuple[str, ...]:
    made = []
    for part in _CAMEL.split(raw):
        word = part.lower()
        if word in STOP_WORDS or (len(word) < 2 and not word.isdigit()):
            continue
        made.append(stem(word))
    return tuple(made)


def terms(text: str) -> list[str]:
    """``words(text)`` followed by each adjacent pair of them (``"word count"``)."""
    found = words(text)
    return found + [f"{a} {b}" for a, b in zip(found, found[1:])]


def query_terms(message: str) -> set[str]:
    """The distinct terms a message is ranked by (long messages by their two ends)."""
    if len(message) > MAX_QUERY_CHARS:
        half = MAX_QUERY_CHARS // 2
        message = message[:half] + "\n" + message[-half:]
    return set(terms(message))


@dataclass(frozen=True)
class Field:
    """One field of the documents in a :class:`Bm25` index.

    Attributes:
        weight: How much a match in it counts (BM25F's field boost).
        b: How much its length discounts its matches (0: none, 1: full), relative to
            the same field's average length.
    """

    weight: float
    b: float = B


class Bm25:
    """An Okapi BM25F index: documents made of fields, each field's term frequencies
    normalised by its own length and weighted, then saturated together (``k1``).

    Every ``(document, term)`` contribution is computed when the index is built, so
    a query only sums them.

    Args:
        documents: Per document, one list of terms per field, in ``fields`` order.
        fields: The fields' weights and length normalisation.
        k1: Term-frequency saturation.
    """

    def __init__(self, documents: Sequence[Sequence[Sequence[str]]], fields: Sequence[Field], *,
                 k1: float = K1) -> None:
        self.size = len(documents)
        averages = [sum(len(doc[i]) for doc in documents) / self.size if self.size else 0.0
                    for i in range(len(fields))]
        frequencies: list[dict[str, float]] = []
        document_frequency: Counter[str] = Counter()
        for doc in documents:
            weighted: dict[str, float] = {}
            for field, field_terms, average in zip(fields, doc, averages):
                if not field_terms:
                    continue
                norm = 1 - field.b + field.b * (len(field_terms) / average if average else 0.0)
                for term, count in Counter(field_terms).items():
                    weighted[term] = weighted.get(term, 0.0) + field.weight * count / norm
            frequencies.append(weighted)
            document_frequency.update(weighted.keys())
        self.postings: dict[str, list[tuple[int, float]]] = {}
        for index, weighted in enumerate(frequencies):
            for term, tf in weighted.items():
                df = document_frequency[term]
                idf = math.log(1 + (self.size - df + 0.5) / (df + 0.5))
                self.postings.setdefault(term, []).append((index, idf * tf * (k1 + 1) / (tf + k1)))

    def scores(self, query: Iterable[str]) -> dict[int, float]:
        """Each matching document's score for the distinct ``query`` terms; documents
        that match nothing are absent."""
        totals: dict[int, float] = {}
        get = totals.get
        for term in query:
            for index, contribution in self.postings.get(term, ()):
                totals[index] = get(index, 0.0) + contribution
        return totals

    def ranked(self, query: Iterable[str]) -> list[tuple[int, float]]:
        """``(document, score)`` for every matching document, best first (ties in
        document order)."""
        return sorted(self.scores(query).items(), key=lambda item: (-item[1], item[0]))


def name_words(name: str) -> str:
    """A tool name as words: ``sendEmail``, ``send_email`` and ``mail.send-email`` all
    read as words (``send email``)."""
    return " ".join(_CAMEL.split(name.replace("_", " ").replace("-", " ").replace(".", " ")))


TOOL_FIELDS = (Field(weight=2.0, b=0.3), Field(weight=1.0, b=0.75), Field(weight=3.0, b=0.3),
               Field(weight=0.5, b=0.0))
"""A tool's name, description, triggers and extension name: triggers weigh most, and
names and triggers are little discounted for length (more example phrases should
not make a tool rank lower)."""


def tool_fields(tool: Tool) -> list[list[str]]:
    """The terms of each of a tool's ``TOOL_FIELDS``."""
    return [terms(name_words(tool.name)), terms(tool.description),
            [term for trigger in tool.triggers for term in terms(trigger)],
            words(name_words(tool.extension))]


@dataclass(frozen=True)
class ToolDocument:
    """One tool as the index sees it: each field's length in terms, and each term's
    ``(field, count)`` pairs in field order. Kept per tool's words (``document``), so a
    new list of the same tools (a reload, a chat's switches) reuses them."""

    lengths: tuple[int, ...]
    counts: dict[str, tuple[tuple[int, int], ...]]


DOCUMENTS_KEPT = 10_000
"""How many tools' documents ``document`` keeps before starting over."""

V = TypeVar("V")


class PerObject(Generic[V]):
    """Values kept for live objects, by identity: an object's value is forgotten when
    the object goes (so what is kept never holds a tool, nor its host, alive)."""

    def __init__(self) -> None:
        self._items: dict[int, tuple[weakref.ref, V]] = {}

    def get(self, item: object) -> V | None:
        found = self._items.get(id(item))
        return found[1] if found is not None and found[0]() is item else None

    def put(self, item: object, value: V) -> None:
        items, key = self._items, id(item)

        def forget(ref: weakref.ref) -> None:
            if items.get(key, (None,))[0] is ref:
                items.pop(key, None)

        items[key] = (weakref.ref(item, forget), value)

    def __len__(self) -> int:
        return len(self._items)


class _Documents:
    """Every document made, by tool object and by words, and which documents have each
    term (so an index finds a term's tools without looking at all of them). Started
    over as a whole past ``DOCUMENTS_KEPT``, with a new ``generation``: an index made
    before that looks its terms up the slow way."""

    def __init__(self) -> None:
        self.generation = 0
        self.start_over()

    def start_over(self) -> None:
        self.generation += 1
        self.by_words: dict[tuple, ToolDocument] = {}
        self.by_tool: PerObject[ToolDocument] = PerObject()
        self.holders: dict[str, list[ToolDocument]] = {}

    def get(self, tool: Tool) -> ToolDocument:
        seen = self.by_tool.get(tool)
        if seen is not None:
            return seen
        key = (tool.name, tool.description, tuple(tool.triggers), tool.extension)
        found = self.by_words.get(key)
        if found is None:
            if len(self.by_words) >= DOCUMENTS_KEPT:
                self.start_over()
            found = self.by_words[key] = _make_document(tool)
            holders = self.holders
            for term in found.counts:
                having = holders.get(term)
                if having is None:
                    holders[term] = [found]
                else:
                    having.append(found)
        self.by_tool.put(tool, found)
        return found


def _make_document(tool: Tool) -> ToolDocument:
    fields = tool_fields(tool)
    counted = [Counter(field_terms) for field_terms in fields]
    counts: dict[str, tuple[tuple[int, int], ...]] = {}
    for term in set().union(*counted):
        counts[term] = tuple((number, field[term]) for number, field in enumerate(counted)
                             if term in field)
    return ToolDocument(tuple(map(len, fields)), counts)


_documents = _Documents()
_documents_lock = threading.Lock()


def document(tool: Tool) -> ToolDocument:
    """``tool``'s document, made from its ``tool_fields`` once per distinct name,
    description, triggers and extension name."""
    with _documents_lock:
        return _documents.get(tool)


def prepare(tools: Iterable[Tool]) -> None:
    """Make the documents of ``tools`` now, so that the first message ranked among them
    only assembles its index."""
    for tool in tools:
        document(tool)


def known(tool: Tool) -> bool:
    """Whether ``tool``'s document is made (for this very tool object)."""
    return _documents.by_tool.get(tool) is not None


POSTINGS_KEPT = 20_000
"""How many terms' postings one index keeps before starting over."""


class ToolIndex:
    """The ranking index of one list of tools; build it with :func:`index_for`.

    It scores exactly as :class:`Bm25` over ``tool_fields`` with ``TOOL_FIELDS`` would,
    but builds incrementally: each tool's document is made once for its words and
    shared by every list it is in (:func:`document`), the list's own figures (the
    fields' average lengths) are summed when it is built, and a term's postings (its
    BM25F contribution to each tool that has it) are worked out the first time a
    message has the term. A new list of known tools costs a few hundred dictionary
    look-ups, and one tool changed costs that tool's words.

    Attributes:
        tools: The tools, in the order given.
        always: The ``alwaysAvailable`` ones, which are never ranked.
    """

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools: tuple[Tool, ...] = tuple(tools)
        self.always: tuple[Tool, ...] = tuple(t for t in self.tools if t.always_available)
        with _documents_lock:
            get = _documents.get
            self._documents = [get(tool) for tool in self.tools]
            self._generation = _documents.generation
        size = self.size = len(self._documents)
        self._averages = [sum(column) / size for column in zip(*(d.lengths for d in self._documents))] \
            if size else [0.0] * len(TOOL_FIELDS)
        self._where = {id(doc): index for index, doc in enumerate(self._documents)}
        """Where each document is; one in the list twice (the same words offered twice)
        is also in ``_again``."""
        self._again: dict[int, list[int]] = {}
        if len(self._where) < size:
            for index, doc in enumerate(self._documents):
                if self._where[id(doc)] != index:
                    self._again.setdefault(id(doc), []).append(index)
        self._postings: dict[str, list[tuple[int, float]]] = {}

    def _having(self, term: str) -> list[int]:
        """The tools (their places in ``tools``) whose documents have ``term``."""
        holders = None
        with _documents_lock:
            if self._generation == _documents.generation:
                having = _documents.holders.get(term, ())
                if len(having) <= self.size:  # else looking at this list's own is quicker
                    holders = list(having)
        if holders is not None:
            where, again = self._where, self._again
            found = [where[key] for key in map(id, holders) if key in where]
            if again:
                found += [index for doc in holders for index in again.get(id(doc), ())]
            return sorted(found)
        return [index for index, doc in enumerate(self._documents) if term in doc.counts]

    def postings(self, term: str) -> list[tuple[int, float]]:
        """``(tool, contribution)`` for every tool that has ``term``, in tool order."""
        found = self._postings.get(term)
        if found is not None:
            return found
        having = self._having(term)
        found = []
        if having:
            df = len(having)
            idf = math.log(1 + (self.size - df + 0.5) / (df + 0.5))
            averages, documents = self._averages, self._documents
            for index in having:
                doc = documents[index]
                tf = 0.0
                for number, count in doc.counts[term]:
                    field, average = TOOL_FIELDS[number], averages[number]
                    norm = 1 - field.b + field.b * (doc.lengths[number] / average if average else 0.0)
                    tf = tf + field.weight * count / norm
                found.append((index, idf * tf * (K1 + 1) / (tf + K1)))
        if len(self._postings) >= POSTINGS_KEPT:
            self._postings.clear()
        self._postings[term] = found
        return found

    def scores(self, query: Iterable[str]) -> dict[int, float]:
        """Each matching tool's score for the distinct ``query`` terms (as
        :meth:`Bm25.scores`)."""
        totals: dict[int, float] = {}
        get = totals.get
        for term in query:
            for index, contribution in self.postings(term):
                totals[index] = get(index, 0.0) + contribution
        return totals

    def search(self, message: str) -> list[tuple[Tool, float]]:
        """Every tool ``message`` matches (``alwaysAvailable`` ones too), best first,
        with its score; tools that match nothing are left out."""
        ranked = sorted(self.scores(query_terms(message)).items(),
                        key=lambda item: (-item[1], item[0]))
        return [(self.tools[index], score) for index, score in ranked]

    def rank(self, message: str) -> list[tuple[Tool, float]]:
        """``search`` without the ``alwaysAvailable`` tools, which skip ranking: they
        are offered regardless (see ``always``)."""
        return [(tool, score) for tool, score in self.search(message) if not tool.always_available]

    def ordered(self, message: str) -> list[Tool]:
        """Every tool: the ones ``message`` is about, best first, then the others in the
        order given (``alwaysAvailable`` ones among them)."""
        relevant = [tool for tool, _ in self.rank(message)]
        chosen = {id(tool) for tool in relevant}
        return relevant + [tool for tool in self.tools if id(tool) not in chosen]


class ToolListCache:
    """A small LRU of objects built from a list of tools, keyed by the identity of the
    tool objects (the built object holds them, so the ids stay theirs)."""

    def __init__(self, build, size: int = 8) -> None:
        self._build = build
        self._size = size
        self._items: OrderedDict[tuple[int, ...], object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, tools: Sequence[Tool]):
        key = tuple(map(id, tools))
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        built = self._build(tools)
        with self._lock:
            self._items[key] = built
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return built


_indexes = ToolListCache(lambda tools: ToolIndex(tools))


def index_for(tools: Sequence[Tool]) -> ToolIndex:
    """The index of ``tools``, built on first use and cached while the same tool
    objects are offered (a reload or a chat's switches give another list).

    Args:
        tools: The tools to rank among, e.g. ``ToolRegistry.available()``.
    """
    return _indexes.get(tools)


def rank_tools(tools: Sequence[Tool], message: str) -> list[tuple[Tool, float]]:
    """``index_for(tools).rank(message)``."""
    return index_for(tools).rank(message)
