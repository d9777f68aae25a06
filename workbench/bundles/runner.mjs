// The runtime's own runner for a bundle's entrypoint, staged beside it (never part of a
// bundle). Run as `node .wb/runner.mjs` or `deno run ... .wb/runner.mjs` in the staging
// folder, inside a shell worker of the sandbox. It reads .wb/call.json, runs the call,
// and writes one line, MARK + JSON, as the last thing it prints: the host takes the last
// such line as the answer. Everything else printed is the call's log.
//
//   tool:     loads the entrypoint (.mjs as an ES module, .js/.cjs as CommonJS through
//             the staging folder's package.json) and awaits run(input) or its default
//             function; the result must be finite JSON.
//   mcp:      starts the entrypoint as a child process and speaks MCP over its stdio
//             (newline-delimited JSON-RPC): initialize, tools/list, then tools/call.
import { readFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import path from "node:path";

const call = JSON.parse(readFileSync(".wb/call.json", "utf8"));
const MARK = call.mark;

function finite(value, where = "result", seen = new Set()) {
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`${where} is ${value}: results must be finite JSON`);
    return;
  }
  if (typeof value !== "object") throw new Error(`${where} is a ${typeof value}: results must be JSON`);
  if (seen.has(value)) throw new Error(`${where} refers to itself: results must be finite JSON`);
  seen.add(value);
  if (Array.isArray(value)) value.forEach((v, i) => finite(v, `${where}[${i}]`, seen));
  else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw new Error(`${where} is ${Object.prototype.toString.call(value)}, not plain JSON`);
    for (const [k, v] of Object.entries(value)) finite(v, `${where}.${k}`, seen);
  }
  seen.delete(value);
}

function answer(body) {
  let line;
  try { line = JSON.stringify(body); } catch (e) { line = JSON.stringify({ ok: false, error: `the answer is not JSON: ${e.message}` }); }
  process.stdout.write(`\n${MARK}${line}\n`, () => process.exit(0));
}

async function runTool() {
  const entry = path.resolve("bundle", call.entrypoint);
  let mod;
  if (entry.endsWith(".mjs")) mod = await import(pathToFileURL(entry).href);
  else mod = createRequire(pathToFileURL(path.resolve("package.json")).href)(entry);
  let fn = null;
  if (mod && typeof mod.run === "function") fn = mod.run;
  else if (typeof mod === "function") fn = mod;
  else if (mod && typeof mod.default === "function") fn = mod.default;
  else if (mod && mod.default && typeof mod.default.run === "function") fn = mod.default.run;
  if (!fn) throw new Error(`${call.entrypoint} exports neither run(input) nor a default function`);
  const result = await fn(call.input);
  if (result === undefined) throw new Error("run(input) returned nothing: return a JSON value");
  finite(result);
  return result;
}

function mcp() {
  const child = spawn(call.child[0], [...call.child.slice(1), path.resolve("bundle", call.entrypoint)],
    { stdio: ["pipe", "pipe", "inherit"], cwd: path.resolve("bundle") });
  let buffer = "", total = 0, next = 1;
  const waiting = new Map();
  let failed = null;
  const fail = (why) => { failed = failed ?? why; for (const [, w] of waiting) w.reject(new Error(why)); waiting.clear(); };
  child.on("exit", (code, signal) => fail(`the MCP server exited (${signal ?? code}) before it answered`));
  child.on("error", (e) => fail(`the MCP server could not start: ${e.message}`));
  child.stdout.on("data", (chunk) => {
    total += chunk.length;
    if (total > call.maxProtocolBytes) { fail(`the MCP server sent more than ${call.maxProtocolBytes} bytes`); child.kill("SIGKILL"); return; }
    buffer += chunk.toString("utf8");
    let at;
    while ((at = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, at).trim();
      buffer = buffer.slice(at + 1);
      if (!line) continue;
      let message;
      try { message = JSON.parse(line); } catch { fail("the MCP server sent a line that is not JSON"); return; }
      if (message && message.id !== undefined && waiting.has(message.id) && (message.result !== undefined || message.error !== undefined)) {
        const w = waiting.get(message.id); waiting.delete(message.id);
        if (message.error) w.reject(new Error(`the MCP server answered an error: ${message.error.message ?? JSON.stringify(message.error)}`));
        else w.resolve(message.result);
      }
    }
    if (buffer.length > call.maxProtocolBytes) fail("the MCP server sent a message past the bound");
  });
  const request = (method, params) => new Promise((resolve, reject) => {
    if (failed) { reject(new Error(failed)); return; }
    const id = next++;
    waiting.set(id, { resolve, reject });
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  });
  const notify = (method, params) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method, params }) + "\n");
  return { request, notify, child };
}

async function runMcp() {
  const server = mcp();
  try {
    const init = await server.request("initialize", { protocolVersion: "2025-06-18", capabilities: {},
      clientInfo: { name: "workbench-bundles", version: "1" } });
    server.notify("notifications/initialized", {});
    const listed = await server.request("tools/list", {});
    const tools = Array.isArray(listed?.tools) ? listed.tools : [];
    if (call.mode === "inspect") {
      return { server: init?.serverInfo ?? null,
        tools: tools.map((t) => ({ name: String(t.name), description: String(t.description ?? ""), inputSchema: t.inputSchema ?? null })) };
    }
    if (!tools.some((t) => t.name === call.toolName)) {
      throw new Error(`the MCP server has no tool ${JSON.stringify(call.toolName)} (it lists: ${tools.map((t) => t.name).join(", ") || "none"})`);
    }
    const result = await server.request("tools/call", { name: call.toolName, arguments: call.input ?? {} });
    finite(result);
    return result;
  } finally {
    server.child.kill("SIGKILL");
  }
}

try {
  const result = call.mode === "tool" ? await runTool() : await runMcp();
  answer({ ok: true, result });
} catch (e) {
  answer({ ok: false, error: String(e && e.message ? e.message : e) });
}
