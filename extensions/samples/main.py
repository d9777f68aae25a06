"""The samples extension: one small tool for each thing a tool's ``ctx`` can do.

Each function is a worked example to copy from. The workbench calls it as
``fn(args, ctx)``: ``args`` are the arguments the model supplied, already checked
against the tool's JSON Schema in ``loca.json``, and ``ctx`` is the toolkit every
tool receives. What the function returns goes back to the model as the result (it
must be JSON); what it raises becomes an error the agent reads and can react to.

A tool may be a plain function or an ``async`` one. In a plain function, a ctx
member that needs an answer (``ask_user``, ``db.query``, ``llm.complete``…) blocks
until it has it; in an ``async`` function the same member returns an awaitable.
The samples use both styles.

When the host refuses a ctx request (a permission you did not grant, speech that is
switched off), the member raises an error whose ``kind`` says why; a sample lets it
propagate, so the agent sees that kind and message unchanged.

This module uses only the standard library. ``test_samples.py`` beside it tests
every tool with ``workbench.testing.MockContext``, with no workbench running.
"""

from __future__ import annotations

import base64
import io
import re
import struct
import wave
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _png_swatch(hex_color: str, size: int = 32) -> str:
    """A ``size``×``size`` PNG of one color, base64-encoded (what images travel as)."""
    red, green, blue = (int(hex_color[i:i + 2], 16) for i in (0, 2, 4))
    row = b"\x00" + bytes((red, green, blue)) * size  # filter byte, then RGB pixels

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    png = (b"\x89PNG\r\n\x1a\n"
           + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(row * size))
           + chunk(b"IEND", b""))
    return base64.b64encode(png).decode("ascii")


# --- asking the person ----------------------------------------------------------


async def sample_choice(args, ctx):
    """Ask one multiple-choice question: the everyday ``ctx.ask_user`` form.

    ``ask_user`` takes a list of questions and returns one answer per question, in
    order. A question without a ``kind`` is a choice: the person picks among
    ``options`` and you get back the option's ``value`` (a list of values with
    ``multiselect``). ``allowFreeformInput`` lets them type an answer of their own.
    """
    options = args.get("options") or ["red", "blue", "green"]
    question = {
        "question": args.get("question") or "Pick a favorite color.",
        "options": [{"label": option.capitalize(), "value": option} for option in options],
        "multiselect": bool(args.get("multiselect")),
        "allowFreeformInput": False,
    }
    [answer] = await ctx.ask_user([question])
    ctx.set_progress(1)
    return {"question": question["question"], "answer": answer}


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.splitlines()]
    tidy = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
    return tidy + "\n" if tidy else ""


def sample_diff(args, ctx):
    """Propose an edit and let the person approve it: a ``diff`` question.

    The form shows ``before`` and ``after`` side by side; the answer is
    ``"accept"`` or ``"reject"``. Only act on an accepted change. This one is a
    plain function, so ``ask_user`` blocks until the person answers.
    """
    before = args["text"]
    after = _tidy(before)
    if after == before:
        ctx.set_progress(1)
        return {"changed": False, "accepted": False, "text": before}
    [verdict] = ctx.ask_user([{
        "kind": "diff",
        "question": "Tidy the whitespace of this text?",
        "before": before,
        "after": after,
        "title": "Trailing spaces and extra blank lines removed",
    }])
    ctx.set_progress(1)
    accepted = verdict == "accept"
    return {"changed": True, "accepted": accepted, "text": after if accepted else before}


def sample_files(args, ctx):
    """Offer files to pick from: a ``files`` question.

    Each entry has a ``path`` (what you get back), and optionally a ``label`` and a
    ``description``. The answer is the chosen path (a list with ``multiselect``).
    Never trust it blindly: check it is one you offered before opening it.

    Reading the extension's own ``memories`` folder is declared as a ``read``
    permission on ``$extension/memories`` in loca.json, so the person sees exactly
    what the tool reads.
    """
    folder = HERE / "memories"
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    if not files:
        raise FileNotFoundError(f"{folder} holds no files to offer")
    entries = [{"path": str(path), "label": path.relative_to(folder).as_posix(),
                "description": f"{path.stat().st_size} bytes"} for path in files]
    [chosen] = ctx.ask_user([{"kind": "files", "question": "Which file should I describe?",
                              "entries": entries, "multiselect": False}])
    offered = {entry["path"]: entry["label"] for entry in entries}
    if chosen not in offered:
        raise ValueError(f"{chosen!r} is not one of the files offered")
    text = Path(chosen).read_text(encoding="utf-8")
    heading = next((line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#")), None)
    ctx.set_progress(1)
    return {"file": offered[chosen], "lines": len(text.splitlines()), "heading": heading}


async def sample_image(args, ctx):
    """Show an image with buttons of your own: an ``image`` question.

    The image travels as base64 (``dataB64``) with its MIME type; ``actions`` are
    the buttons, and the answer is the ``value`` of the one pressed.
    """
    color = (args.get("color") or "#3366cc").lstrip("#").lower()
    [action] = await ctx.ask_user([{
        "kind": "image",
        "question": f"Here is #{color}. Keep it?",
        "dataB64": _png_swatch(color),
        "mime": "image/png",
        "actions": [{"label": "Keep it", "value": "keep"}, {"label": "Try another", "value": "another"}],
    }])
    ctx.set_progress(1)
    return {"color": f"#{color}", "action": action}


def sample_table(args, ctx):
    """Let the person edit rows: a ``table`` question.

    You give ``columns`` and ``rows`` (lists of strings); the answer is the rows as
    the person left them, each an object keyed by column name.
    """
    tasks = args.get("tasks") or ["Water the plants", "Book the dentist", "Renew the library books"]
    [rows] = ctx.ask_user([{
        "kind": "table",
        "question": "Who takes each task? Edit the rows as you like.",
        "columns": ["task", "owner"],
        "rows": [[task, ""] for task in tasks],
    }])
    ctx.set_progress(1)
    unassigned = [row.get("task", "") for row in rows if not str(row.get("owner", "")).strip()]
    return {"rows": rows, "unassigned": unassigned}


# --- showing a result -------------------------------------------------------------


def sample_display(args, ctx):
    """Push one bubble of each kind into the session: ``ctx.display``.

    Display calls are one-way: they return nothing and are never awaited. This tool
    also shows the two things every longer-running tool should do: report progress
    with ``ctx.set_progress`` (0 to 1, ending at 1) and check ``ctx.signal`` between
    steps, stopping as soon as the person cancels (``throw_if_aborted`` raises, and
    the call ends as cancelled).
    """
    title = args.get("title") or "Display samples"
    steps = [
        ("markdown", lambda: ctx.display.markdown(f"## {title}\n\nA **markdown** bubble, then an "
                                                   "image, a table and a diff.")),
        ("image", lambda: ctx.display.image(_png_swatch("3366cc"), "image/png", "A blue swatch")),
        ("table", lambda: ctx.display.table(["kind", "shows"], [["markdown", "text"], ["image", "a picture"],
                                                                 ["table", "rows"], ["diff", "a change"]])),
        ("diff", lambda: ctx.display.diff("colour: blue\n", "color: blue\n", "Spelling")),
    ]
    shown = []
    for done, (kind, show) in enumerate(steps, start=1):
        ctx.signal.throw_if_aborted()
        show()
        shown.append(kind)
        ctx.set_progress(done / len(steps), f"Showed the {kind}")
    ctx.log("info", f"showed {len(shown)} bubbles")
    return {"shown": shown}


# --- reaching capabilities --------------------------------------------------------


async def sample_memory(args, ctx):
    """Reach the person's memories: ``ctx.memories``.

    ``list()``, ``get(title)`` and ``get_file(title, name)`` need the ``memories``
    permission with ``read`` access; ``write(title, content)`` and
    ``edit(title, find, replace)`` need ``write`` (which covers reads too). The
    first use asks the person. ``edit`` replaces exactly one occurrence; none or
    several is an error. Memories an extension ships are read-only, and a skill's
    extra files are reached with ``get_file``.
    """
    action = args["action"]
    if action == "list":
        found = await ctx.memories.list()
        result = {"memories": [{"title": m["title"], "kind": m["kind"]} for m in found]}
    elif action == "read":
        result = await ctx.memories.get(args["title"])
    elif action == "write":
        written = await ctx.memories.write(args["title"], args["content"])
        result = {"title": written["title"], "created": written["created"]}
    elif action == "edit":
        edited = await ctx.memories.edit(args["title"], args["find"], args["replace"])
        result = {"title": edited["title"], "content": edited["after"]}
    else:
        result = await ctx.memories.get_file(args["title"], args["name"])
    ctx.set_progress(1)
    return result


def sample_database(args, ctx):
    """Keep data across runs in the extension's private SQLite database: ``ctx.db``.

    Set ``"database": true`` in loca.json to get one; it belongs to this extension
    alone and is dropped when the extension is removed. ``execute(sql, params)``
    returns ``{changes, lastInsertRowId}``; ``query(sql, params)`` returns rows as
    objects. Always pass values as ``params`` (``?`` placeholders), never by
    formatting them into the SQL.
    """
    ctx.db.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    added = None
    if args.get("note"):
        added = ctx.db.execute("INSERT INTO notes (body) VALUES (?)", [args["note"]])["lastInsertRowId"]
    ctx.set_progress(0.5)
    [count] = ctx.db.query("SELECT COUNT(*) AS n FROM notes")
    latest = ctx.db.query("SELECT body FROM notes ORDER BY id DESC LIMIT ?", [5])
    ctx.set_progress(1)
    return {"added": added, "count": count["n"], "latest": [row["body"] for row in latest]}


async def sample_llm(args, ctx):
    """One completion from the person's model: ``ctx.llm.complete``.

    Pass ``{prompt, systemPrompt?, maxTokens?}``; you get ``{text}``. It needs the
    ``llm`` permission, asked for at first use.
    """
    reply = await ctx.llm.complete({
        "prompt": args["text"],
        "systemPrompt": "Summarize the user's text in one plain sentence.",
        "maxTokens": 60,
    })
    ctx.set_progress(1)
    return {"summary": reply["text"].strip()}


async def sample_tts(args, ctx):
    """Synthesize speech: ``ctx.tts.speak``.

    Returns ``{dataB64, mime, sampleRate}`` with WAV audio. It needs the ``tts``
    permission, and Text-to-Speech must be on in the workbench's settings; when it
    is off the call fails with kind ``unavailable``. This sample reports the
    audio's length; a real tool would save or play it.
    """
    audio = await ctx.tts.speak(args["text"])
    data = base64.b64decode(audio["dataB64"])
    with wave.open(io.BytesIO(data)) as wav:
        seconds = wav.getnframes() / wav.getframerate()
    ctx.set_progress(1)
    return {"mime": audio["mime"], "sampleRate": audio["sampleRate"], "bytes": len(data),
            "seconds": round(seconds, 2)}


def sample_stt(args, ctx):
    """Transcribe speech: ``ctx.stt.transcribe``.

    Pass ``{dataB64, mime?, language?}``; you get ``{text}``. It needs the ``stt``
    permission, and Speech-to-Text must be on in the workbench's settings; when it
    is off the call fails with kind ``unavailable``.
    """
    request = {"dataB64": args["dataB64"], "mime": "audio/wav"}
    if args.get("language"):
        request["language"] = args["language"]
    heard = ctx.stt.transcribe(request)
    ctx.set_progress(1)
    return {"text": heard["text"], "words": len(heard["text"].split())}


async def sample_schedule(args, ctx):
    """Propose a scheduled prompt: ``ctx.schedule_prompt``.

    A draft is ``{title, instruction, schedule, runMissed}``. The schedule is one of
    ``{kind: "once", atMs}``, ``{kind: "interval", everyMinutes}``,
    ``{kind: "weekly", weekdays, hour, minute}`` (0 is Sunday),
    ``{kind: "monthly", day, hour, minute}`` or ``{kind: "yearly", month, day,
    hour, minute}``, in local time. Nothing is saved until the person accepts; they
    may edit it first, so report the draft you get back, not the one you sent.
    """
    draft = {
        "title": args["title"],
        "instruction": args["instruction"],
        "schedule": {"kind": "weekly", "weekdays": args.get("weekdays") or [1, 2, 3, 4, 5],
                     "hour": args.get("hour", 9), "minute": args.get("minute", 0)},
        "runMissed": False,
    }
    answer = await ctx.schedule_prompt(draft)
    ctx.set_progress(1)
    if not answer.get("accepted"):
        return {"accepted": False}
    return {"accepted": True, "draft": answer["draft"]}
