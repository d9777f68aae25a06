"""The Simple Office add-on as a person meets it: installed by its id (``office``, the
shipped ``extensions/office``) with its own dependencies (once per test process), its
tools (offered as ``addon__office__TOOL``) called in sandboxed workers with the
project's grants, on real files.

Each document a create tool makes is opened again by the same libraries (in a process
of their own, from the add-on's installed dependencies) and by an independent reader:
the Python standard library reading the OOXML parts, ``docx2txt`` and ``xlsx2csv`` (Debian)
for Word and Excel files, LibreOffice Impress for slides, ``pdftotext`` (poppler) for a
PDF. Edits round-trip; a change is saved only once the person accepted its diff where
writes are reviewed; hostile documents (a zip bomb, XML entities, a huge sheet, a PDF
whose page tree loops, paths and links out of the project) get a clear refusal.
"""

from __future__ import annotations

import asyncio

import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest
from pdf_samples import pdf_file

from workbench.config.home import Home
from workbench.core.gateway import CallOptions
from workbench.core.host import Host
from workbench.errors import WorkbenchError
from workbench.events import AskUserRequest, PermissionAnswer, PermissionRequest, RequestDenied
from workbench.ext.manager import ExtensionManager
from workbench.store import Store

pytestmark = pytest.mark.slow  # each call starts a worker that imports lxml and a format's library

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


@pytest.fixture(scope="module")
def office_home(tmp_path_factory) -> Path:
    """A workbench home with the add-on installed, shared by this module's tests."""
    root = tmp_path_factory.mktemp("office-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WORKBENCH_HOME", str(root / "home"))
        patch.setenv("HOME", str(root))
        home = Home.resolve().ensure()
        with Store.open(home.db_path) as store:
            ExtensionManager(home, store, registry_url="http://127.0.0.1:9").install(
                "office", approve=lambda plan: True)  # by its bare id, from the catalog
    return root / "home"


class Person:
    """Answers as a person would: grants for the chat, each change given ``verdict``."""

    def __init__(self, verdict: str = "accept", scope: str = "session") -> None:
        self.verdict, self.scope = verdict, scope
        self.forms: list[AskUserRequest] = []

    async def answer(self, request):
        if isinstance(request, PermissionRequest):
            return PermissionAnswer(self.scope)
        if isinstance(request, AskUserRequest):
            self.forms.append(request)
            return [self.verdict for _ in request.questions]
        raise RequestDenied("not asked in these tests")


@pytest.fixture
def project(office_home, tmp_path_factory, monkeypatch) -> Path:
    monkeypatch.setenv("WORKBENCH_HOME", str(office_home))
    return tmp_path_factory.mktemp("project")


NAMESPACE = "addon__office__"
"""A first-party add-on's tools are offered in its reserved namespace."""


async def call(project: Path, name: str, args: dict, person: Person | None = None):
    name = NAMESPACE + name
    async with Host.open(cwd=project, **({"responder": person} if person else {})) as host:
        grants = host.grants.from_flags(name, [], grant_all=True)
        return await host.tools.call(name, args, CallOptions(grants=grants, prompt=False))


def same_libraries(office_home: Path, script: str, *paths: Path) -> dict:
    """Run ``script`` with the add-on's installed libraries, in a process of its own."""
    site = office_home / "cache" / "python" / "office" / "site"
    done = subprocess.run([sys.executable, "-c", script, *map(str, paths)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(site)}, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


REOPEN = """
import json, sys, docx, openpyxl, pptx, pypdf
d = docx.Document(sys.argv[1])
x = openpyxl.load_workbook(sys.argv[2])
p = pptx.Presentation(sys.argv[3])
f = pypdf.PdfReader(sys.argv[4])
print(json.dumps({
  "word": [[q.style.name, q.text] for q in d.paragraphs], "word_table": [[c.text for c in r.cells] for r in d.tables[0].rows],
  "excel": {s.title: [[c.value for c in row] for row in s.iter_rows()] for s in x.worksheets},
  "slides": [[sh.text_frame.text for sh in s.shapes if sh.has_text_frame] for s in p.slides],
  "notes": [s.notes_slide.notes_text_frame.text for s in p.slides],
  "pdf": [pg.extract_text() for pg in f.pages]}))
"""


def ooxml_texts(path: Path, part_prefix: str, tag: str) -> list[str]:
    """Every ``tag`` element's text in the package's parts under ``part_prefix``, read
    with the standard library alone."""
    with zipfile.ZipFile(path) as package:
        names = sorted(n for n in package.namelist() if n.startswith(part_prefix) and n.endswith(".xml"))
        return [element.text or "" for name in names
                for element in ElementTree.fromstring(package.read(name)).iter(tag)]


async def test_each_create_tool_makes_a_document_other_programs_open(office_home, project, tmp_path):
    table = [["Item", "Cost"], ["Paper", "10"]]
    made = {
        "create_word": {"path": "out/summary.docx", "title": "Summary", "blocks": [
            {"type": "heading", "text": "Notes", "level": 1},
            {"type": "paragraph", "text": "Café meeting on Tuesday."},
            {"type": "bullet", "text": "Buy paper"}, {"type": "table", "rows": table}]},
        "create_excel": {"path": "budget.xlsx", "sheets": [{"name": "Budget", "rows": [
            ["Item", "Qty", "Cost"], ["Paper", 2, 10.5], ["Ink", 1, 30], ["Total", None, "=SUM(C2:C3)"]]}]},
        "create_powerpoint": {"path": "deck.pptx", "slides": [
            {"title": "Plan", "bullets": ["Start", "Finish"], "notes": "Speak slowly"}]},
        "create_pdf": {"path": "report.pdf", "title": "Report", "blocks": [
            {"type": "heading", "text": "Results"}, {"type": "paragraph", "text": "Sales rose by 5%."},
            {"type": "table", "rows": table}, {"type": "page_break"},
            {"type": "paragraph", "text": "Second page \u4e2d"}]},
    }
    for tool, args in made.items():
        outcome = await call(project, tool, args, Person())
        assert outcome.ok, (tool, outcome.error)
        assert outcome.result["created"] and "+" in outcome.result["diff"]
    assert outcome.result["pages"] == 2 and "1 characters outside Latin-1" in outcome.result["note"]

    again = same_libraries(office_home, REOPEN, project / "out/summary.docx", project / "budget.xlsx",
                           project / "deck.pptx", project / "report.pdf")
    assert again["word"][:4] == [["Title", "Summary"], ["Heading 1", "Notes"],
                                 ["Normal", "Café meeting on Tuesday."], ["List Bullet", "Buy paper"]]
    assert again["word_table"] == table
    assert again["excel"] == {"Budget": [["Item", "Qty", "Cost"], ["Paper", 2, 10.5], ["Ink", 1, 30],
                                         ["Total", None, "=SUM(C2:C3)"]]}
    assert again["slides"] == [["Plan", "Start\nFinish"]] and again["notes"] == ["Speak slowly"]
    assert "Sales rose by 5%." in again["pdf"][0] and "Second page ?" in again["pdf"][1]

    # Independent readers: the standard library on the OOXML parts, poppler on the PDF.
    assert ooxml_texts(project / "out/summary.docx", "word/document", f"{W}t") == [
        "Summary", "Notes", "Café meeting on Tuesday.", "Buy paper", "Item", "Cost", "Paper", "10"]
    assert ooxml_texts(project / "budget.xlsx", "xl/worksheets/", f"{S}f") == ["SUM(C2:C3)"]
    assert set(ooxml_texts(project / "budget.xlsx", "xl/", f"{S}t")) >= {"Item", "Paper", "Ink", "Total"}
    assert ooxml_texts(project / "deck.pptx", "ppt/slides/slide", f"{A}t") == ["Plan", "Start", "Finish"]
    pdftotext = shutil.which("pdftotext")
    assert pdftotext, "pdftotext (Debian's poppler-utils) is missing: `make setup` installs it"
    text = subprocess.run([pdftotext, "-layout", str(project / "report.pdf"), "-"],
                          capture_output=True, text=True, check=True, timeout=60).stdout
    assert "Report" in text and "Sales rose by 5%." in text and "Paper" in text and "\f" in text
    # Programs of their own for Word and Excel files (Debian's docx2txt, a Perl script, and
    # xlsx2csv, which shares no code with openpyxl).
    docx2txt, xlsx2csv = shutil.which("docx2txt"), shutil.which("xlsx2csv")
    assert docx2txt and xlsx2csv, "docx2txt or xlsx2csv (Debian) is missing: `make setup` installs them"
    words = subprocess.run([docx2txt, str(project / "out/summary.docx"), "-"],
                           capture_output=True, text=True, check=True, timeout=60).stdout
    assert all(line in words for line in ("Summary", "Notes", "Café meeting on Tuesday.", "Buy paper",
                                          "Paper")), words
    rows = subprocess.run([xlsx2csv, str(project / "budget.xlsx")],
                          capture_output=True, text=True, check=True, timeout=60).stdout.splitlines()
    assert rows[:3] == ["Item,Qty,Cost", "Paper,2,10.5", "Ink,1,30"], rows
    # LibreOffice Impress for the slides (Debian's libreoffice-impress-nogui), to PDF.
    soffice = shutil.which("soffice")
    assert soffice, "soffice (Debian's libreoffice-impress-nogui) is missing: `make setup` installs it"
    converted = tmp_path / "converted"
    subprocess.run([soffice, f"-env:UserInstallation={(tmp_path / 'office-profile').as_uri()}",
                    "--headless", "--convert-to", "pdf", "--outdir", str(converted),
                    str(project / "deck.pptx")], capture_output=True, check=True, timeout=300)
    slides = subprocess.run([pdftotext, str(converted / "deck.pdf"), "-"],
                            capture_output=True, text=True, check=True, timeout=60).stdout
    assert all(word in slides for word in ("Plan", "Start", "Finish")), slides

    # Read back through the add-on's own read tools, with structure.
    word = await call(project, "read_word", {"path": "out/summary.docx"})
    assert word.result["text"] == ("# Summary\n# Notes\nCafé meeting on Tuesday.\n- Buy paper\n"
                                   "| Item | Cost |\n| Paper | 10 |\n")
    excel = await call(project, "read_excel", {"path": str(project / "budget.xlsx")})
    assert "A2: Paper | B2: 2 | C2: 10.5" in excel.result["text"]
    assert "C4: =SUM(C2:C3)" in excel.result["text"]
    assert excel.result["sheets"][0]["column_totals"] == {"B": 3, "C": 40.5}
    deck = await call(project, "read_powerpoint", {"path": "deck.pptx"})
    assert deck.result["text"] == "## Slide 1: Plan\n- Start\n- Finish\nNotes: Speak slowly\n"
    pdf = await call(project, "read_pdf", {"path": "report.pdf", "max_pages": 1})
    assert pdf.result["text"].startswith("## Page 1\n") and "## Page 2" not in pdf.result["text"]
    assert pdf.result["truncated"] and pdf.result["note"] == "only the first 1 of 2 pages are shown"

    again = await call(project, "create_excel", made["create_excel"], Person())
    assert not again.ok and "overwrite: true" in again.error["message"]


async def test_edits_round_trip_and_are_saved_only_once_accepted(office_home, project):
    person = Person()
    assert (await call(project, "create_word", {"path": "notes.docx", "blocks": [
        {"type": "paragraph", "text": "The meeting is on Monday."}]}, person)).ok
    assert (await call(project, "create_excel", {"path": "budget.xlsx", "sheets": [
        {"rows": [["Item", "Cost"], ["Paper", 10]]}]}, person)).ok
    assert (await call(project, "create_powerpoint", {"path": "deck.pptx", "slides": [
        {"title": "Plan", "bullets": ["Draft"]}]}, person)).ok
    before = {p.name: p.read_bytes() for p in project.iterdir()}

    # Rejected, or with no one there to accept (an unattended run): nothing changes.
    rejected = await call(project, "edit_word", {"path": "notes.docx", "operations": [
        {"op": "replace_text", "find": "Monday", "replace": "Friday"}]}, Person("reject"))
    assert not rejected.ok and "rejected; nothing was written" in rejected.error["message"]
    unattended = await call(project, "edit_excel", {"path": "budget.xlsx", "operations": [
        {"op": "set_cell", "cell": "B2", "value": 99}]})
    assert not unattended.ok and "tools.review_writes" in unattended.error["message"]
    overwrite = await call(project, "create_powerpoint", {"path": "deck.pptx", "overwrite": True,
                                                          "slides": [{"title": "Other"}]})
    assert not overwrite.ok and "reviewed first" in overwrite.error["message"]
    assert {p.name: p.read_bytes() for p in project.iterdir()} == before

    word = await call(project, "edit_word", {"path": "notes.docx", "operations": [
        {"op": "replace_text", "find": "Monday", "replace": "Friday"},
        {"op": "append_heading", "text": "Actions", "level": 2},
        {"op": "append_paragraph", "text": "Send the minutes."}]}, person)
    assert word.ok, word.error
    [form] = person.forms[-1].questions
    assert form["kind"] == "diff" and form["before"] == "The meeting is on Monday.\n"
    assert form["after"] == "The meeting is on Friday.\n## Actions\nSend the minutes.\n"
    assert "-The meeting is on Monday.\n+The meeting is on Friday.\n" in word.result["diff"]
    read = await call(project, "read_word", {"path": "notes.docx"})
    assert read.result["text"] == form["after"]

    excel = await call(project, "edit_excel", {"path": "budget.xlsx", "operations": [
        {"op": "set_cell", "cell": "b2", "value": 12.5}, {"op": "append_row", "values": ["Ink", 30]},
        {"op": "set_cell", "cell": "B4", "value": "=SUM(B2:B3)"}, {"op": "add_sheet", "name": "Notes"}]}, person)
    assert excel.ok, excel.error
    read = await call(project, "read_excel", {"path": "budget.xlsx"})
    assert "A2: Paper | B2: 12.5" in read.result["text"] and "A3: Ink | B3: 30" in read.result["text"]
    assert "B4: =SUM(B2:B3)" in read.result["text"] and "## Sheet Notes" in read.result["text"]

    deck = await call(project, "edit_powerpoint", {"path": "deck.pptx", "operations": [
        {"op": "add_slide", "title": "Results", "bullets": ["Up 5%"]},
        {"op": "replace_text", "find": "Draft", "replace": "Final"}]}, person)
    assert deck.ok, deck.error
    read = await call(project, "read_powerpoint", {"path": "deck.pptx"})
    assert read.result["text"] == "## Slide 1: Plan\n- Final\n## Slide 2: Results\n- Up 5%\n"
    gone = await call(project, "edit_powerpoint", {"path": "deck.pptx", "operations": [
        {"op": "delete_slide", "index": 1}]}, person)
    assert gone.ok and (await call(project, "read_powerpoint", {"path": "deck.pptx"})).result["slides"] == 1

    missing = await call(project, "edit_word", {"path": "notes.docx", "operations": [
        {"op": "replace_text", "find": "Sunday", "replace": "x"}]}, person)
    assert not missing.ok and "'Sunday' is not in notes.docx; nothing was changed" in missing.error["message"]


async def undo(project: Path, change_set: int) -> dict:
    """Undo as the person does from a tool card: the undo tool asks for the project's
    grant (allowed once) and runs."""
    async with Host.open(cwd=project, responder=Person(scope="once")) as host:
        return await host.changes.aundo(change_set)


async def test_the_person_undoes_a_saved_change_from_the_change_list(office_home, project):
    person = Person()
    made = await call(project, "create_excel", {"path": "budget.xlsx", "sheets": [{"rows": [["Paper", 10]]}]}, person)
    assert made.result["change"]["undoable"] is True
    original = (project / "budget.xlsx").read_bytes()
    edited = await call(project, "edit_excel", {"path": "budget.xlsx", "operations": [
        {"op": "set_cell", "cell": "B1", "value": 99}]}, person)
    assert edited.ok and edited.result["change"]["undoable"] is True
    async with Host.open(cwd=project) as host:
        rows = host.changes.list()
        # No model can run the undo tool, in a chat or not.
        chat = host.chats.new()["id"]
        arguments = {"path": "budget.xlsx", "token": None, "before": None, "after": "0" * 64}
        refused = await host.chats.call_for_model(chat, "addon__office__restore_document", arguments)
        assert not refused.ok
    assert [(r["command"], r["state"]) for r in rows[:2]] == [("Changed budget.xlsx", "applied"),
                                                              ("Made budget.xlsx", "applied")]
    assert (await undo(project, edited.result["change_set"]))["state"] == "undone"
    assert (project / "budget.xlsx").read_bytes() == original
    assert [p.name for p in (project / ".workbench" / "office-undo").iterdir()] == [".gitignore"]
    deck = await call(project, "create_powerpoint", {"path": "deck.pptx", "slides": [{"title": "New"}]}, person)
    assert (await undo(project, deck.result["change_set"]))["state"] == "undone"
    assert not (project / "deck.pptx").exists()  # a document the change made is removed

    # Changed by the person since: their version is kept and nothing is undone.
    again = await call(project, "edit_excel", {"path": "budget.xlsx", "operations": [
        {"op": "set_cell", "cell": "B1", "value": 7}]}, person)
    (project / "budget.xlsx").write_bytes(b"the person's own version")
    with pytest.raises(WorkbenchError, match="was changed again after this change; your version is kept"):
        await undo(project, again.result["change_set"])
    assert (project / "budget.xlsx").read_bytes() == b"the person's own version"
    with pytest.raises(WorkbenchError, match="undone newest first"):
        await undo(project, made.result["change_set"])


def test_an_undo_from_the_command_line_gets_its_permission_from_grant(office_home, project):
    """``workbench changes undo`` asks no one: the undo tool's permission comes from
    ``--grant`` (read as ``workbench run`` reads it), or the undo is refused and the
    change stays applied."""
    from commands import workbench

    made = asyncio.run(call(project, "create_word", {"path": "memo.docx", "blocks": [
        {"type": "paragraph", "text": "Hello"}]}, Person()))
    assert made.ok and made.result["change"]["undoable"] is True, made.error
    change = str(made.result["change_set"])
    refused = workbench("changes", "undo", change, cwd=project)
    assert refused.returncode != 0 and "the undo did not run" in refused.stderr
    assert (project / "memo.docx").exists()
    bad = workbench("changes", "undo", change, "-g", "nothing-here", cwd=project)
    assert bad.returncode != 0 and "--grant nothing-here" in bad.stderr
    elsewhere = workbench("changes", "undo", change, "-g", f"write:{project.parent}", cwd=project)
    assert elsewhere.returncode != 0 and (project / "memo.docx").exists()  # not the grant it needs
    done = workbench("changes", "undo", change, "-g", "read", "-g", "write", cwd=project)
    assert done.returncode == 0, done.stderr
    assert not (project / "memo.docx").exists()
    listed = json.loads(workbench("changes", "show", change, "--json", cwd=project).stdout)
    assert listed["state"] == "undone"


def package(parts: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return buffer.getvalue()


LOOPING_PDF = pdf_file([b"<< /Type /Catalog /Pages 2 0 R >>",
                        b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
                        b"<< /Type /Pages /Kids [2 0 R] /Count 1 /Parent 2 0 R >>"])
"""A page tree whose pages hold the tree itself."""


def deflate_bomb() -> bytes:
    """A one-page PDF whose content stream inflates from about 100 KB to 100 MB."""
    import zlib

    packer = zlib.compressobj(9)
    line = b"BT /F1 12 Tf (aaaa) Tj ET\n" * 40000
    stream = b"".join(packer.compress(line) for _ in range(100)) + packer.flush()
    return pdf_file([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                     b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                     b"/Resources << /Font << /F1 5 0 R >> >> >>",
                     b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(stream), stream),
                     b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"])


async def test_hostile_documents_get_a_clear_refusal(office_home, project, tmp_path):
    laughs = (b'<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaaaaaaaa">'
              b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><w:document>&b;</w:document>')
    (project / "bomb.docx").write_bytes(package({"word/document.xml": b"\0" * (40 << 20)}))
    (project / "laughs.docx").write_bytes(package({"[Content_Types].xml": b"<Types/>",
                                                   "word/document.xml": laughs}))
    padded = b'<?xml version="1.0"?><!--' + b" " * 20000 + b"-->" + laughs[21:]
    (project / "padded.docx").write_bytes(package({"word/document.xml": padded}))
    (project / "fake.pptx").write_text("not a zip")
    (project / "loop.pdf").write_bytes(LOOPING_PDF)
    (project / "deflate.pdf").write_bytes(deflate_bomb())
    outside = tmp_path / "secret.docx"
    outside.write_bytes(b"private")
    (project / "link.docx").symlink_to(outside)
    refusals = {
        ("read_word", "bomb.docx"): "(a zip bomb?); it was not opened",
        ("read_word", "laughs.docx"): "declares a document type or entities",
        ("read_word", "padded.docx"): "declares a document type or entities",
        ("read_powerpoint", "fake.pptx"): "not an Office document (not a zip package)",
        ("read_pdf", "deflate.pdf"): "Limit reached while decompressing",
        ("read_pdf", "loop.pdf"): "loop.pdf could not be read as a PDF: PdfReadError: Detected cyclic",
        ("read_word", "link.docx"): "is outside this project",
        ("read_word", "../secret.docx"): "is outside this project",
        ("read_excel", "notes.txt"): "is not a .xlsx or .xlsm file",
    }
    for (tool, path), said in refusals.items():
        outcome = await call(project, tool, {"path": path})
        assert not outcome.ok, (tool, path, outcome.result)
        assert said in outcome.error["message"], (tool, path, outcome.error)
        assert "Traceback" not in outcome.error["message"]
    made = await call(project, "create_word", {"path": str(tmp_path / "out.docx"), "blocks": []}, Person())
    assert not made.ok and "is outside this project" in made.error["message"]
    assert not (tmp_path / "out.docx").exists() and outside.read_bytes() == b"private"

    # A huge sheet is read in part, and says so.
    rows = "".join(f'<row r="{n}"><c r="A{n}"><v>{n}</v></c></row>' for n in range(1, 5001))
    sheet = (f'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
             f'<sheetData>{rows}</sheetData></worksheet>').encode()
    (project / "huge.xlsx").write_bytes(package(workbook_parts(sheet)))
    huge = await call(project, "read_excel", {"path": "huge.xlsx"})
    assert huge.ok, huge.error
    assert huge.result["truncated"] and "only the first 2000 rows" in huge.result["note"]
    assert "A2000: 2000" in huge.result["text"] and "A2001" not in huge.result["text"]
    too_big = await call(project, "edit_excel", {"path": "huge.xlsx", "operations": [
        {"op": "set_cell", "cell": "B1", "value": 1}]}, Person())
    assert not too_big.ok and "too large to edit here" in too_big.error["message"]


def workbook_parts(sheet: bytes) -> dict[str, bytes]:
    """The smallest parts of a workbook openpyxl opens, with ``sheet`` as its one sheet."""
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    return {
        "[Content_Types].xml": (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
            '</Types>').encode(),
        "_rels/.rels": (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/>'
            '</Relationships>').encode(),
        "xl/workbook.xml": (f'<workbook xmlns="{main}" xmlns:r="{rel}"><sheets>'
                            '<sheet name="Big" sheetId="1" r:id="rId1"/></sheets></workbook>').encode(),
        "xl/_rels/workbook.xml.rels": (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/>'
            '</Relationships>').encode(),
        "xl/worksheets/sheet1.xml": sheet,
    }


def test_a_chat_makes_reads_and_edits_documents_with_a_model_that_calls_the_tools(office_home, project):
    """The three prompts a new user tries, in one chat through ``workbench run`` with a
    scripted model; each change accepted through the answers file (an unattended run)."""
    from commands import workbench

    (project / "notes.md").write_text("# Week 48\n\n- Launch moved to 14 January.\n- Ben writes the notes.\n")
    turns = {
        "make a one-page Word summary of notes.md": [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.md"}}]},
            {"tool_calls": [{"name": "addon__office__create_word", "arguments": {"path": "summary.docx", "title": "Week 48", "blocks": [
                {"type": "bullet", "text": "Launch: 14 January"}, {"type": "bullet", "text": "Notes: Ben"}]}}]},
            {"text": "I saved summary.docx."}],
        "what is in budget.xlsx, column C total?": [
            {"tool_calls": [{"name": "addon__office__create_excel", "arguments": {"path": "budget.xlsx", "sheets": [
                {"name": "Q4", "rows": [["Item", "Who", "Cost"], ["Venue", "Hall", 240], ["Coffee", "Bar", 42.25]]}]}}]},
            {"tool_calls": [{"name": "addon__office__read_excel", "arguments": {"path": "budget.xlsx"}}]},
            {"text": "Column C totals 282.25."}],
        "add a slide titled Results": [
            {"tool_calls": [{"name": "addon__office__create_powerpoint", "arguments": {"path": "deck.pptx", "slides": [{"title": "Plan"}]}}]},
            {"tool_calls": [{"name": "addon__office__edit_powerpoint", "arguments": {"path": "deck.pptx", "operations": [
                {"op": "add_slide", "title": "Results"}]}}]},
            {"text": "Added."}],
    }
    (project / "accept.json").write_text(json.dumps([["accept"]] * 2))
    ended = []
    for prompt, replies in turns.items():
        (project / "model.json").write_text(json.dumps(replies))
        done = workbench("run", "--jsonl", "--model", "scripted:model.json", "--answers", "accept.json",
                         "--addon", "office", "-g", "read", "-g", "write", prompt, cwd=project,
                         tracebacks=True)
        assert done.returncode == 0, done.stdout + done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        ended += [e for e in events if e["type"] == "tool_call_ended"]
    assert [(e["tool"], e["ok"]) for e in ended] == [
        ("builtin.read_file", True), *[(f"office.{NAMESPACE}{tool}", True) for tool in (
            "create_word", "create_excel", "read_excel", "create_powerpoint", "edit_powerpoint")]]
    assert ended[3]["result"]["sheets"][0]["column_totals"] == {"C": 282.25}
    assert ooxml_texts(project / "summary.docx", "word/document", f"{W}t") == [
        "Week 48", "Launch: 14 January", "Notes: Ben"]
    assert ooxml_texts(project / "deck.pptx", "ppt/slides/slide", f"{A}t") == ["Plan", "Results"]
