"""A Loca extension written the way its author writes it — a deno.json entry, a
capability permission listed as a read entry and a write entry, a host with any port,
a run tool with the openers of three systems — validates, installs and runs, as a
person would drive it from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from commands import workbench

MANIFEST = {
    "$schema": "https://get.loca.rzkyif.com/schemas/loca-v1.json",
    "name": "loca-extension-fern-notes",
    "displayName": "Fern Notes",
    "description": "Keep notes about your ferns.",
    "tools": [
        {"name": "save_note",
         "description": "Save a note about a fern. Use when the user tells you how a fern is doing.",
         "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"]},
         "function": "saveNote",
         "permissions": {
             "memories": [{"access": "read", "reason": "Read the notes you kept."},
                          {"access": "write", "reason": "Keep the new note."}],
             "net": [{"host": "ferns.example", "ports": "*", "reason": "Sync the notes.",
                      "optional": True}]}},
        {"name": "list_notes",
         "description": "List the fern notes. Use when the user asks what was noted.",
         "parameters": {"type": "object"},
         "function": "listNotes",
         "permissions": {
             "memories": [{"access": "write", "reason": "Tidy the notes.", "optional": True},
                          {"access": "read", "reason": "Read the notes."}]}},
        {"name": "open_guide",
         "description": "Open the fern care guide. Use when the user wants to read it.",
         "parameters": {"type": "object"},
         "function": "openGuide",
         "permissions": {"run": [{"binary": "open", "reason": "Open it on macOS."},
                                 {"binary": "xdg-open", "reason": "Open it on Linux."},
                                 {"binary": "rundll32", "reason": "Open it on Windows."}]}},
    ],
}

MOD = '''
export async function saveNote(args: { text: string }, ctx: any) {
  await ctx.memories.write("fern notes", args.text);
  const kept = await ctx.memories.get("fern notes");
  ctx.setProgress(1);
  return { kept: kept.content };
}

export async function listNotes(args: unknown, ctx: any) {
  return { titles: (await ctx.memories.list()).map((m: { title: string }) => m.title) };
}

export async function openGuide() {
  const opener = Deno.build.os === "darwin" ? "open" : Deno.build.os === "windows" ? "rundll32" : "xdg-open";
  const done = await new Deno.Command(opener, { args: ["https://ferns.example/guide"] }).output();
  return { opened: new TextDecoder().decode(done.stdout).trim() };
}
'''


def test_validates_installs_and_runs(tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "fern-notes"
    (folder / "src").mkdir(parents=True)
    (folder / "loca.json").write_text(json.dumps(MANIFEST, indent=2))
    (folder / "deno.json").write_text(json.dumps({"exports": "./src/mod.ts"}, indent=2))
    (folder / "src" / "mod.ts").write_text(MOD)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "xdg-open").write_text("#!/bin/sh\necho \"opened $1\"\n")
    (bin_dir / "xdg-open").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))

    validated = workbench("ext", "validate", str(folder))
    assert validated.returncode == 0, validated.stdout + validated.stderr
    installed = workbench("ext", "install", str(folder), "--yes")
    assert installed.returncode == 0, installed.stderr
    assert "memories read: Read the notes you kept." in installed.stdout
    assert "memories write: Keep the new note." in installed.stdout
    assert "net ferns.example, any port (optional): Sync the notes." in installed.stdout
    assert "run rundll32 (not on this system: skipped)" in installed.stdout

    saved = workbench("call", "save_note", "--args", json.dumps({"text": "The maidenhair is thirsty."}),
                      "--grant", "memories", "--json")
    assert saved.returncode == 0, saved.stdout + saved.stderr
    assert json.loads(saved.stdout) == {"ok": True, "result": {"kept": "The maidenhair is thirsty."}}

    listed = workbench("call", "list_notes", "--grant", "memories:read", "--json")
    assert listed.returncode == 0, listed.stdout + listed.stderr  # the read entry, not the write one
    assert "fern notes" in json.loads(listed.stdout)["result"]["titles"]
    explained = workbench("grants", "explain", "save_note")
    assert "net ferns.example, any port (optional)" in explained.stdout

    opened = workbench("call", "open_guide", "--grant", "run:xdg-open", "--json")
    assert opened.returncode == 0, opened.stdout + opened.stderr
    assert json.loads(opened.stdout)["result"] == {"opened": "opened https://ferns.example/guide"}
