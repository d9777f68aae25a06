"""Agent Skills as their authors write them: every front-matter form YAML allows loads
with its exact description, through the real CLI and the memory tools; bundled files
come as text or base64; two sources of one skill name are a conflict in the status."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from commands import workbench

from workbench.config.home import Home
from workbench.core.host import Host

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CORPUS = FIXTURES / "skills"
INVALID = FIXTURES / "skills-invalid"
EXPECTED: dict[str, dict[str, str]] = json.loads((CORPUS / "expected.json").read_text("utf-8"))


def corpus_extension(folder: Path, name: str = "skill-corpus", only: list[str] | None = None) -> Path:
    """An extension shipping the corpus's skills as they are (bytes unchanged)."""
    skills = only or sorted(EXPECTED)
    for skill in skills:
        shutil.copytree(CORPUS / skill, folder / "skills" / skill)
    (folder / "loca.json").write_text(json.dumps({
        "name": name, "displayName": "Skill corpus", "description": "Skills in every form.",
        "memories": [{"kind": "skill", "path": f"skills/{skill}"} for skill in skills]}))
    return folder


def test_the_corpus_holds_every_form_and_is_byte_exact():
    assert len(EXPECTED) >= 20
    raw = {name: (CORPUS / name / "SKILL.md").read_bytes() for name in EXPECTED}
    assert raw["crlf"].count(b"\r\n") > 3 and raw["bom"].startswith(b"\xef\xbb\xbf")
    for marker in (b"description: >\n", b"description: >-\n", b"description: |\n",
                   b"description: |-\n", b"description: |+\n", b"description: '", b'description: "',
                   b"# ", b"metadata:\n", b"allowed-tools:\n"):
        assert any(marker in text for text in raw.values()), marker


@pytest.mark.usefixtures("home")
def test_every_skill_validates_installs_and_lists_with_its_exact_description(tmp_path: Path):
    source = corpus_extension(tmp_path / "src")
    checked = workbench("ext", "validate", str(source), "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    report = json.loads(checked.stdout)
    assert not [p for p in report.get("problems", []) if "SKILL.md" in json.dumps(p)], report
    installed = workbench("ext", "install", str(source), "--yes")
    assert installed.returncode == 0, installed.stderr
    listed = workbench("memories", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    found = {m["title"]: m["summary"] for m in json.loads(listed.stdout)}
    assert found == {e["name"]: e["description"] for e in EXPECTED.values()}


async def test_the_model_is_shown_and_loads_each_exact_description(tmp_path: Path, home: Home, workdir):
    source = corpus_extension(tmp_path / "src")
    installed = workbench("ext", "install", str(source), "--yes")
    assert installed.returncode == 0, installed.stderr
    async with Host.open(cwd=workdir, model="echo") as host:
        plan = host.memories.context()
        shown = {item.title: item.description for item in plan.skills}
        assert shown == {e["name"]: e["description"] for e in EXPECTED.values()}
        for name in EXPECTED:
            loaded = await host.tools.call("skill_load", {"name": name})
            assert loaded.ok, loaded.error
            raw = (CORPUS / name / "SKILL.md").read_bytes().decode("utf-8")
            assert loaded.result["content"] == raw
            assert "reference.md" in loaded.result["files"]


async def test_a_bundled_pdf_comes_as_base64_and_a_case_slip_is_resolved_with_a_note(
        tmp_path: Path, home: Home, workdir):
    source = corpus_extension(tmp_path / "src", only=["plain"])
    assert workbench("ext", "install", str(source), "--yes").returncode == 0
    pdf = (CORPUS / "plain" / "forms" / "Template.pdf").read_bytes()
    async with Host.open(cwd=workdir, model="echo") as host:
        got = await host.tools.call("skill_file", {"name": "plain", "file": "forms/Template.pdf"})
        assert got.ok, got.error
        assert (got.result["encoding"], got.result["mimeType"]) == ("base64", "application/pdf")
        assert base64.b64decode(got.result["content"]) == pdf and "\ufffd" not in got.result["content"]
        slipped = await host.tools.call("skill_file", {"name": "plain", "file": "FORMS/template.PDF"})
        assert slipped.ok, slipped.error
        assert slipped.result["file"] == "forms/Template.pdf"
        assert "differs only in case" in slipped.result["note"]
        assert base64.b64decode(slipped.result["content"]) == pdf
        text = await host.tools.call("skill_file", {"name": "plain", "file": "reference.md"})
        assert (text.result["encoding"], text.result["content"]) == ("text", "Reference for plain.\n")


@pytest.mark.usefixtures("home")
def test_invalid_front_matter_is_a_clear_error_naming_the_file_and_line(tmp_path: Path):
    errors: dict[str, str] = json.loads((INVALID / "expected.json").read_text())
    for name, expected in errors.items():
        folder = tmp_path / name
        shutil.copytree(INVALID / name, folder / "skills" / name)
        (folder / "loca.json").write_text(json.dumps({
            "name": "broken-skill", "displayName": "Broken", "description": "A broken skill.",
            "memories": [{"kind": "skill", "path": f"skills/{name}"}]}))
        checked = workbench("ext", "validate", str(folder))
        assert checked.returncode == 1, (name, checked.stdout)
        assert f"skills/{name}/SKILL.md" in checked.stdout + checked.stderr, name
        assert expected in checked.stdout + checked.stderr, (name, checked.stdout)
        assert "Traceback" not in checked.stderr
        added = workbench("memories", "add", name, "--kind", "skill",
                          "--file", str(INVALID / name / "SKILL.md"))
        assert added.returncode == 2 and expected in added.stderr, (name, added.stderr)
        assert "Traceback" not in added.stderr


@pytest.mark.usefixtures("home")
def test_a_persons_skill_folder_brings_its_reference_files(tmp_path: Path):
    folder = tmp_path / "pdf-forms"
    shutil.copytree(CORPUS / "plain", folder)
    (folder / ".hidden").write_text("left out")
    added = workbench("memories", "add", "pdf-forms", "--kind", "skill", "--folder", str(folder))
    assert added.returncode == 0, added.stderr
    assert "with 2 files" in added.stdout
    shown = json.loads(workbench("memories", "show", "pdf-forms", "--json").stdout)
    assert shown["summary"] == EXPECTED["plain"]["description"]
    assert shown["files"] == ["forms/Template.pdf", "reference.md"]
    shutil.rmtree(folder)  # the copy is the person's skill now, not the folder it came from
    with Host.open(cwd=tmp_path) as host:
        got = host.memories.read_skill_file("pdf-forms", "forms/template.pdf")
        assert base64.b64decode(got["content"]) == (CORPUS / "plain" / "forms" / "Template.pdf").read_bytes()
        assert "differs only in case" in got["note"]
    linked = tmp_path / "linked"
    shutil.copytree(CORPUS / "plain", linked)
    (linked / "secret.md").symlink_to(tmp_path / "outside.txt")
    (tmp_path / "outside.txt").write_text("not for the model")
    refused = workbench("memories", "add", "linked", "--kind", "skill", "--folder", str(linked))
    assert refused.returncode == 2 and "secret.md is a link" in refused.stderr
    assert "linked" not in workbench("memories", "list").stdout  # nothing half-added
    assert workbench("memories", "rm", "pdf-forms").returncode == 0
    with Host.open(cwd=tmp_path) as host:
        assert host.memories.library.skill_folder("pdf-forms") is None


@pytest.mark.usefixtures("home")
def test_two_skills_of_one_name_from_two_sources_are_a_conflict_in_the_status(tmp_path: Path):
    for name in ("first-skills", "second-skills"):
        source = corpus_extension(tmp_path / name, name=name, only=["plain"])
        assert workbench("ext", "install", str(source), "--yes").returncode == 0
    added = workbench("memories", "add", "bom", "--kind", "skill",
                      "--file", str(CORPUS / "bom" / "SKILL.md"))
    assert added.returncode == 0, added.stderr
    assert workbench("ext", "install", str(corpus_extension(tmp_path / "third", name="third-skills",
                                                              only=["bom"])), "--yes").returncode == 0
    status = workbench("ext", "status", "--json")
    assert status.returncode == 0, status.stderr
    conflicts = {c["title"]: c for c in json.loads(status.stdout)["memory_conflicts"]}
    assert set(conflicts) == {"plain", "bom"}
    assert conflicts["plain"]["winner"]["extension"] == "first-skills"
    assert [s["extension"] for s in conflicts["plain"]["shadowed"]] == ["second-skills"]
    assert conflicts["bom"]["winner"] == {"source": "user"}
    assert [s["extension"] for s in conflicts["bom"]["shadowed"]] == ["third-skills"]
    text = workbench("ext", "status").stdout
    assert "Memory conflicts: 2" in text and "skill 'plain': first-skills" in text
