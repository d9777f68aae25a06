// The Deno side of a worker: wait for its one call, import the tool, run it, exit.
// No code of the tool runs before its call arrives: a worker started ahead reports
// ready with only this shim loaded, and imports the entry module when the call comes.
// Speaks the worker protocol (JSON-RPC 2.0, one message per line) on stdin and
// stdout; everything the tool prints goes to stderr, which the host captures.
// A function that is a generator (`function*` or `async function*`) streams its answer:
// `ctx/reply.open` once, then `ctx/reply.piece` {piece} for each item as it is yielded,
// and the call answers null when the generator ends (the host refuses it but from a
// model provider, and bounds what is streamed).

const [entryUrl, functionName] = Deno.args;
const encoder = new TextEncoder();

function writeAll(stream: { writeSync(p: Uint8Array): number }, data: Uint8Array): void {
  let offset = 0;
  while (offset < data.length) offset += stream.writeSync(data.subarray(offset));
}

function send(message: unknown): void {
  writeAll(Deno.stdout, encoder.encode(JSON.stringify(message) + "\n"));
}

function printer(..._args: unknown[]): void {
  const text = _args.map((a) => typeof a === "string" ? a : Deno.inspect(a)).join(" ");
  writeAll(Deno.stderr, encoder.encode(text + "\n"));
}
for (const level of ["log", "info", "debug", "warn", "error", "trace"] as const) {
  (console as unknown as Record<string, unknown>)[level] = printer;
}

const notify = (method: string, params: unknown) => send({ jsonrpc: "2.0", method, params });
const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
let nextId = 100;

class CtxError extends Error {
  constructor(public kind: string, message: string) {
    super(message);
    this.name = kind === "permission" ? "PermissionDenied" : "CtxError";
  }
}

function ask(method: string, params: unknown): Promise<any> {
  const id = ++nextId;
  send({ jsonrpc: "2.0", id, method, params });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

const controller = new AbortController();
let chat: Record<string, unknown> = {};

// The members that ask the host come with the call (the host's ctx_spec.wire()): each
// names its group ("" for ctx itself), its TypeScript name, the request it sends, its
// parameters in order, and what a parameter left out is sent as.
type MemberSpec = {
  group: string;
  js: string;
  method: string;
  params: string[];
  defaults: Record<string, unknown>;
};

function member(spec: MemberSpec) {
  return (...args: unknown[]) => {
    const params: Record<string, unknown> = { ...spec.defaults };
    spec.params.forEach((name, index) => {
      if (args[index] !== undefined) params[name] = args[index];
    });
    return ask(spec.method, params);
  };
}

function build(members: MemberSpec[]): void {
  const target = ctx as Record<string, any>;
  for (const spec of members) {
    if (spec.group) {
      target[spec.group] ??= {};
      target[spec.group][spec.js] = member(spec);
    } else {
      target[spec.js] = member(spec);
    }
  }
}

const ctx = {
  setProgress(progress: number, label?: string, description?: string) {
    notify("ctx/progress", { progress, label: label ?? null, description: description ?? null });
  },
  log(level: string, message: string) {
    if (!["debug", "info", "warn", "error"].includes(level)) {
      throw new TypeError(`log level must be debug, info, warn or error, not ${level}`);
    }
    notify("ctx/log", { level, message: String(message) });
  },
  signal: controller.signal,
  getChatContext: () => ({ ...chat }),
  display: {
    markdown: (text: string) => notify("ctx/display", { display: "markdown", payload: { text: String(text) } }),
    image: (dataB64: string, mime: string, alt?: string) =>
      notify("ctx/display", { display: "image", payload: { dataB64, mime, alt: alt ?? null } }),
    table: (columns: string[], rows: unknown[][]) =>
      notify("ctx/display", {
        display: "table",
        payload: { columns: columns.map(String), rows: rows.map((r) => r.map(String)) },
      }),
    diff: (before: string, after: string, title?: string) =>
      notify("ctx/display", { display: "diff", payload: { before, after, title: title ?? null } }),
  },
};

function failure(error: unknown): { kind: string; message: string } {
  if (error instanceof CtxError) return { kind: error.kind, message: error.message };
  if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
    return { kind: "permission", message: `${(error as Error).message}` };
  }
  if (error instanceof Error) {
    if (error.name === "AbortError") return { kind: "cancelled", message: "the call was cancelled" };
    return { kind: "tool", message: `${error.name}: ${error.message}` };
  }
  return { kind: "tool", message: String(error) };
}

function isGenerator(value: unknown): value is AsyncIterable<unknown> | Iterable<unknown> {
  const tag = Object.prototype.toString.call(value);
  return tag === "[object AsyncGenerator]" || tag === "[object Generator]";
}

async function stream(pieces: AsyncIterable<unknown> | Iterable<unknown>): Promise<void> {
  notify("ctx/reply.open", {});
  for await (const piece of pieces) {
    controller.signal.throwIfAborted();
    notify("ctx/reply.piece", { piece: piece === undefined ? null : piece });
  }
}

async function load(): Promise<Function> {
  let module;
  try {
    module = await import(entryUrl);
  } catch (error) {
    throw new CtxError("tool", `importing the tool failed: ${failure(error).message}`);
  }
  const tool = module[functionName];
  if (typeof tool !== "function") {
    throw new CtxError("tool", `importing the tool failed: the entry module has no function ${functionName}`);
  }
  return tool;
}

async function run(
  id: number,
  params: { arguments: unknown; chat: Record<string, unknown>; ctx?: MemberSpec[] },
) {
  chat = params.chat ?? {};
  build(params.ctx ?? []);
  try {
    const fn = await load();
    const value = await fn(params.arguments ?? {}, ctx);
    let result = value === undefined ? null : value;
    if (isGenerator(value)) {
      await stream(value);
      result = null;
    }
    send({ jsonrpc: "2.0", id, result });
  } catch (error) {
    const { kind, message } = failure(error);
    if (kind === "tool" && error instanceof Error && error.stack) printer(error.stack);
    send({ jsonrpc: "2.0", id, error: { code: 1, message, data: { kind } } });
  }
  Deno.exit(0);
}

// Deno opens its module caches at the first dynamic import: done now, on a module of
// the shim's own, so that the call's import of the tool finds them open.
await import(new URL("./deno_warm.ts", import.meta.url).href);
notify("worker/ready", {});

// The host's messages are bounded like the worker's (protocol.MAX_LINE); one that is
// too long or not JSON ends the worker, and the host fails the call.
const MAX_LINE = 8 << 20;
const decoder = new TextDecoder();
let running = false;
let buffer = "";
function broken(why: string): never {
  printer(`the host's message broke the protocol: ${why}`);
  Deno.exit(3);
}
for await (const chunk of Deno.stdin.readable) {
  buffer += decoder.decode(chunk, { stream: true });
  let newline;
  while ((newline = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    if (!line.trim()) continue;
    if (line.length > MAX_LINE) broken(`a message longer than ${MAX_LINE} characters`);
    let message;
    try {
      message = JSON.parse(line);
    } catch (error) {
      broken(`not JSON (${(error as Error).message})`);
    }
    if (message === null || typeof message !== "object") broken("a message that is not an object");
    if (message.method === "tool/call") {
      running = true;
      run(message.id, message.params);
    } else if (message.method === "tool/cancel") {
      controller.abort();
    } else if (message.id !== undefined && pending.has(message.id)) {
      const waiter = pending.get(message.id)!;
      pending.delete(message.id);
      if (message.error) {
        waiter.reject(new CtxError(message.error.data?.kind ?? "tool", String(message.error.message)));
      } else {
        waiter.resolve(message.result);
      }
    }
  }
  if (buffer.length > MAX_LINE) broken(`a message longer than ${MAX_LINE} characters`);
}
// The host closed its end: stop the call if one runs (the host kills us anyway).
controller.abort();
if (!running) Deno.exit(0);
