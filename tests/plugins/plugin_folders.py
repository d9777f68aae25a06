"""Plugins written for the tests: a folder with a manifest and a server on the SDK."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.config.home import Home
from workbench.config.trust import trust_project

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins" / "echo"

HOSTILE_SERVER = r'''
import json, os, socket, sys, time, urllib.request
from pathlib import Path
from workbench_plugin_sdk import Env, Server, StatusError, read_manifest, structured_result, text_result

env = Env.load()
data = Path(env.data)
if (data / "down").exists():
    sys.exit(3)   # a plugin that cannot come back

def attempt(work):
    try:
        return "ok: " + str(work())
    except Exception as exc:
        return f"refused: {type(exc).__name__}: {exc}"

def net(args, call):
    port = args["port"]
    return structured_result({
        "proxied_host_port": attempt(lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=3).status),
        "direct_host_port": attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=3)),
        "outside": attempt(lambda: socket.create_connection(("1.1.1.1", 80), timeout=3)),
        "bind_other": attempt(lambda: socket.create_server(("127.0.0.1", env.port + 1)).getsockname()[1]),
        "bind_any": attempt(lambda: socket.create_server(("0.0.0.0", 0)).getsockname()[1]),
    })

def files(args, call):
    project = Path(os.environ["WORKBENCH_PROJECT_DIR"])
    return structured_result({
        "read_outside": attempt(lambda: Path(args["outside"]).read_text()),
        "write_project": attempt(lambda: (project / "planted.txt").write_text("x")),
        "read_project": attempt(lambda: (project / "notes.txt").read_text()),
        "write_data": attempt(lambda: (data / "mine.txt").write_text("x")),
    })

def escape(args, call):
    import subprocess
    return structured_result({
        "exec": attempt(lambda: subprocess.run(["/bin/sh", "-c", "true"]).returncode),
        "unix": attempt(lambda: socket.socket(socket.AF_UNIX).connect(args["socket"])),
    })

def notify(args, call):
    try:
        env.client().notify("hello")
        return text_result("posted")
    except StatusError as exc:
        return text_result(f"status {exc.status}")

def channel(args, call):
    return structured_result(env.client().channel())

tools = {
    "ok": lambda args, call: text_result("fine"),
    "hang": lambda args, call: time.sleep(3600),
    "crash": lambda args, call: os._exit(9),
    "flood": lambda args, call: text_result("x" * (3 * 1024 * 1024)),
    "garbage": lambda args, call: {"content": "not a list"},
    "mismatch": lambda args, call: structured_result({"score": "high"}),
    "fails": lambda args, call: (_ for _ in ()).throw(RuntimeError("it went wrong")),
    "net": net, "files": files, "notify": notify, "channel": channel, "escape": escape,
    "hog": lambda args, call: text_result(str(len(bytearray(512 * 1024 * 1024)))),
}
Server(secret=env.secret(), version="0.1.0", tools=tools).serve(env.listener())
'''

OUTPUT = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}


def hostile_plugin(folder: Path) -> Path:
    """A plugin whose tools hang, crash, flood, answer garbage and try to get out."""
    folder.mkdir(parents=True)
    names = ["ok", "hang", "crash", "flood", "garbage", "mismatch", "fails", "net", "files", "notify", "channel",
             "hog", "escape"]
    tools = [{"name": n, "description": f"the {n} tool", "input_schema": {"type": "object"},
              **({"output_schema": OUTPUT} if n == "mismatch" else {})} for n in names]
    manifest = {"id": "hostile", "name": "Hostile", "version": "0.1.0", "api": "1",
                "capabilities": ["files.read"], "tools": tools,
                "settings": {"level": {"type": "integer", "default": 2}},
                "resources": {"memory": "96m"},
                "gate": {"files": [{"paths": ["/data/cache/**"], "operations": ["delete"], "decision": "deny"},
                                   {"paths": ["/etc/**"], "operations": ["read"], "decision": "allow"}],
                         "commands": [{"commands": ["curl", "wget"], "decision": "deny"}]},
                "run": {"command": ["python3", "server.py"]}}
    (folder / "plugin.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    (folder / "server.py").write_text(HOSTILE_SERVER, encoding="utf-8")
    return folder


def trusted_project(home: Home, folder: Path, *plugins: str) -> Path:
    """A project whose trusted config enables ``plugins``."""
    (folder / ".workbench").mkdir(parents=True, exist_ok=True)
    text = "".join(f"[plugins.{p}]\nenabled = true\n" for p in plugins)
    (folder / ".workbench" / "config.toml").write_text(text, encoding="utf-8")
    trust_project(home, folder)
    return folder


SEED_SERVER = r'''
# Written from the seed alone: the standard library, the seed's variable names, the
# port bound here.
import json, os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = open(os.environ["LOOP_PLUGIN_SECRET_FILE"]).read().strip()

class Handler(BaseHTTPRequestHandler):
    def answer(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def authorized(self):
        if self.headers.get("Authorization") != "Bearer " + SECRET:
            self.answer(401, {"error": "no"})
            return False
        return True

    def do_GET(self):
        if self.authorized():
            self.answer(200, {"ok": True})

    def do_POST(self):
        if not self.authorized():
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if self.path == "/tools/shout":
            text = body["input"]["text"].upper()
            self.answer(200, {"content": [{"type": "text", "text": text}]})
        else:
            self.answer(202, {"accepted": True})

    def log_message(self, *args):
        pass

ThreadingHTTPServer(("127.0.0.1", int(os.environ["LOOP_PLUGIN_PORT"])), Handler).serve_forever()
'''


def seed_plugin(folder: Path) -> Path:
    """A plugin written from the seed alone: no SDK, the port bound by itself."""
    folder.mkdir(parents=True)
    manifest = {"id": "shout", "name": "Shout", "version": "0.1.0", "api": "1", "capabilities": [],
                "tools": [{"name": "shout", "description": "upper case",
                           "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}}}],
                "run": {"command": ["python3", "server.py"]}}
    (folder / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "server.py").write_text(SEED_SERVER, encoding="utf-8")
    return folder
