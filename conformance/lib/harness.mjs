// The client side of the suite: drives one real @ag-ui/client HttpAgent run,
// records everything a frontend would notice (events, terminal outcome,
// messages, console noise, the raw SSE bytes), and judges it against a
// scenario's expectation.
//
// All three client generations share the subscriber API used here:
//   runAgent(params, {onEvent, onRunErrorEvent, onRunFinishedEvent, onRunFailed})
// * RUN_ERROR from the server → onRunErrorEvent({event}); runAgent() RESOLVES.
// * A verifier/schema error (the client rejects the stream) → onRunFailed({error}),
//   console.error("Agent execution failed: …") and runAgent() REJECTS.
// * onRunFinishedEvent gets {outcome: "success"|"interrupt"|"cancelled", interrupts}
//   on 1.0.0 and 0.0.59; on 0.0.36 it gets only {event, result} (the RUN_FINISHED
//   outcome field is stripped by its zod schema, so interrupts are invisible).
// * agent.pendingInterrupts exists on 1.0.0 and 0.0.59 only.
// * resume: runAgent({resume: [{interruptId, status, payload}]}) on 1.0.0 and 0.0.59.
// Runs are sequential: console capture and the fetch tap are process-global.

import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { format } from 'node:util';

import { Observable } from 'rxjs';
import WebSocket from 'ws';

import { runA2UI } from './a2ui.mjs';
import { runTeam } from './teams.mjs';

export const CLIENT_VERSIONS = ['1.0.0', '0.0.59', '0.0.36'];

/** Client generations that understand interrupt outcomes and resume. */
export const INTERRUPT_AWARE = new Set(['1.0.0', '0.0.59']);

const clients = new Map();

/** loadClient imports one aliased @ag-ui/client generation (ESM entry of each). */
export async function loadClient(version) {
  if (!clients.has(version)) {
    const mod = await import(`agui-client-${version}`);
    if (typeof mod.HttpAgent !== 'function') throw new Error(`agui-client-${version} exports no HttpAgent`);
    clients.set(version, mod);
  }
  return clients.get(version);
}

// ---- fetch tap: keeps a copy of each response body for failure reports ----

let tap = null; // {exchanges: [{url, status, contentType, raw}]} while a run is active
const realFetch = globalThis.fetch;
globalThis.fetch = async function tappedFetch(input, init) {
  const res = await realFetch(input, init);
  const current = tap;
  if (!current || !res.body) return res;
  const ex = { url: String(input?.url ?? input), status: res.status, contentType: res.headers.get('content-type') ?? '', raw: '' };
  current.exchanges.push(ex);
  const [mine, theirs] = res.body.tee();
  (async () => {
    const reader = theirs.getReader();
    const dec = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        ex.raw += dec.decode(value, { stream: true });
      }
    } catch {
      // aborted: keep what arrived
    }
  })();
  return new Response(mine, { status: res.status, statusText: res.statusText, headers: res.headers });
};

// ---- WebSocket transport ----

/** The transports a scenario runs over: SSE (HttpAgent) and the bridge's WebSocket framing. */
export const TRANSPORTS = ['sse', 'ws'];

const wsAgents = new Map();

/**
 * wsAgentClass is, for one client generation, an AbstractAgent whose run()
 * reads the bridge's WebSocket (docs/http.md: WebSocket) instead of POSTing for
 * SSE: it opens /agents/<name>/ws, sends {"type":"run","input":…} and
 * hands each envelope's event to the client, whose own pipeline (1.0.0:
 * enforcement, chunk expansion, verifier; 0.0.x: verifier) then judges the
 * stream exactly as for HttpAgent. On 0.0.x HttpAgent also parses every
 * frame with the generation's EventSchemas at the transport, so this does
 * too. Envelopes must belong to the run (threadId, runId) and carry
 * strictly increasing seqs (0 only on an unjournaled RUN_ERROR); anything
 * else fails the run. The envelopes land in the tap as one exchange.
 */
function wsAgentClass(version, mod) {
  if (wsAgents.has(version)) return wsAgents.get(version);
  let schemas;
  if (version !== '1.0.0') {
    const req = createRequire(createRequire(import.meta.url).resolve(`agui-client-${version}`));
    schemas = req('@ag-ui/core').EventSchemas;
  }
  class WsAgent extends mod.AbstractAgent {
    constructor({ wsUrl, ...rest }) {
      super(rest);
      this.wsUrl = wsUrl;
    }

    run(input) {
      return new Observable((subscriber) => {
        const ws = new WebSocket(this.wsUrl);
        this.socket = ws;
        const ex = { url: this.wsUrl, status: 101, contentType: 'websocket', raw: '' };
        tap?.exchanges.push(ex);
        let lastSeq = 0;
        let ended = false;
        const fail = (err) => {
          if (ended) return;
          ended = true;
          subscriber.error(err);
          ws.close();
        };
        ws.on('open', () => ws.send(JSON.stringify({ type: 'run', input })));
        ws.on('message', (data) => {
          if (ended) return;
          ex.raw += `${data}\n`;
          let env;
          try {
            env = JSON.parse(String(data));
          } catch (err) {
            return fail(new Error(`WebSocket message is not JSON: ${err.message}`));
          }
          const event = env.event;
          if (env.threadId !== input.threadId || env.runId !== input.runId) {
            return fail(new Error(`envelope for ${env.threadId}/${env.runId} on run ${input.threadId}/${input.runId}`));
          }
          if (env.seq === 0 ? event?.type !== 'RUN_ERROR' : !(env.seq > lastSeq)) {
            return fail(new Error(`envelope seq ${env.seq} after ${lastSeq} (${event?.type})`));
          }
          if (env.seq > 0) lastSeq = env.seq;
          let parsed = event;
          if (schemas) {
            try {
              parsed = schemas.parse(event);
            } catch (err) {
              return fail(err);
            }
          }
          subscriber.next(parsed);
          if (event.type === 'RUN_FINISHED' || event.type === 'RUN_ERROR') {
            ended = true;
            subscriber.complete();
            ws.close();
          }
        });
        ws.on('error', (err) => fail(err));
        ws.on('close', () => {
          if (!ended) {
            ended = true;
            subscriber.complete(); // the harness flags a missing terminal event
          }
        });
        return () => {
          ended = true;
          ws.close();
        };
      });
    }

    abortRun() {
      this.socket?.terminate();
    }
  }
  wsAgents.set(version, WsAgent);
  return WsAgent;
}

// ---- console capture ----

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'];
/** Lines on log/info/debug that still count as client complaints. */
const NOISY = /\[ag-ui\]|agent execution failed|AGUIError|subscriber error|failed to apply|no message found|not found with id/i;

function captureConsole() {
  const saved = {};
  const lines = [];
  for (const m of CONSOLE_METHODS) {
    saved[m] = console[m];
    console[m] = (...args) => lines.push({ level: m, text: format(...args) });
  }
  const onUnhandled = (err) => lines.push({ level: 'unhandledRejection', text: String(err?.stack ?? err) });
  process.on('unhandledRejection', onUnhandled);
  return {
    lines,
    restore() {
      Object.assign(console, saved);
      process.off('unhandledRejection', onUnhandled);
    },
  };
}

/** The console lines a frontend developer would see as a complaint. */
export function complaints(lines) {
  return lines.filter((l) => l.level === 'warn' || l.level === 'error' || l.level === 'unhandledRejection' || NOISY.test(l.text));
}

// ---- one run ----

/**
 * runOnce performs one runAgent() on `agent` and records what happened.
 * Returns {resolved, error, timedOut, events, terminal, finished, consoleLines, exchanges, ms}.
 * hooks.onEvent, if given, sees every event as the client applies it.
 */
export async function runOnce(agent, params, timeoutMs, hooks = {}) {
  const rec = {
    resolved: false,
    error: undefined,
    timedOut: false,
    events: [], // the events as the client applied them
    terminal: undefined, // {type, code, message, outcome, interrupts}
    finished: undefined, // what onRunFinishedEvent received
    failed: undefined, // what onRunFailed received
    consoleLines: [],
    exchanges: [],
    ms: 0,
  };
  const subscriber = {
    onEvent: ({ event }) => {
      rec.events.push(event);
      hooks.onEvent?.(event);
    },
    onRunErrorEvent: ({ event }) => {
      rec.terminal = { type: 'RUN_ERROR', code: event.code, message: event.message };
    },
    onRunFinishedEvent: (p) => {
      rec.finished = { outcome: p.outcome, interrupts: p.interrupts, result: p.result, pendingToolCallIds: p.pendingToolCallIds };
      rec.terminal = { type: 'RUN_FINISHED', outcome: p.outcome, interrupts: p.interrupts };
    },
    onRunFailed: ({ error }) => {
      rec.failed = error;
    },
  };
  tap = { exchanges: rec.exchanges };
  const cons = captureConsole();
  const started = Date.now();
  let timer;
  try {
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => {
        rec.timedOut = true;
        try {
          agent.abortRun();
        } catch {
          // nothing to abort
        }
        resolve();
      }, timeoutMs);
    });
    await Promise.race([
      agent.runAgent(params, subscriber).then(
        () => {
          rec.resolved = true;
        },
        (err) => {
          rec.error = err;
        },
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
    rec.ms = Date.now() - started;
    // Let the tee'd copy of the body drain and late console lines land.
    await new Promise((r) => setTimeout(r, 20));
    cons.restore();
    tap = null;
  }
  rec.consoleLines = cons.lines;
  return rec;
}

/** Concatenated text of assistant messages, one message per line. */
export function assistantText(messages) {
  return messages
    .filter((m) => m.role === 'assistant')
    .map((m) => (typeof m.content === 'string' ? m.content : ''))
    .join('\n');
}

export function countOccurrences(haystack, needle) {
  if (!needle) return 0;
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) n++;
  return n;
}

const oneLine = (s) => String(s).replace(/\s+/g, ' ').trim().slice(0, 600);

/** Problems every run must be free of, whatever the scenario expects. */
export function genericProblems(rec) {
  const p = [];
  if (rec.timedOut) p.push(`timed out after ${rec.ms} ms (no terminal event)`);
  if (rec.error) p.push(`runAgent() rejected: ${oneLine(rec.error?.message ?? rec.error)}`);
  else if (rec.failed) p.push(`onRunFailed: ${oneLine(rec.failed?.message ?? rec.failed)}`);
  for (const ex of rec.exchanges) {
    if (ex.contentType !== 'websocket' && (ex.status < 200 || ex.status > 299)) p.push(`HTTP ${ex.status} from ${ex.url}: ${ex.raw.slice(0, 300)}`);
  }
  for (const l of complaints(rec.consoleLines)) p.push(`console.${l.level}: ${l.text.split('\n')[0].slice(0, 400)}`);
  if (!rec.timedOut && !rec.error) {
    const types = rec.events.map((e) => e.type);
    const terminals = types.filter((t) => t === 'RUN_FINISHED' || t === 'RUN_ERROR');
    if (types[0] !== 'RUN_STARTED') p.push(`first event is ${types[0] ?? 'missing'}, not RUN_STARTED`);
    if (terminals.length === 0) p.push('stream ended without RUN_FINISHED or RUN_ERROR (the client accepts that silently)');
    else if (terminals.length > 1) p.push(`${terminals.length} terminal events: ${terminals.join(', ')}`);
    else if (types.at(-1) !== terminals[0]) p.push(`events after ${terminals[0]}: ${types.slice(types.indexOf(terminals[0]) + 1).join(', ')}`);
    p.push(...toolCardProblems(rec));
  }
  return p;
}

/**
 * toolCardProblems: one tool-call card per tool call (issue 17). In the run,
 * at most one TOOL_CALL_START per toolCallId (an agent that repeats a call —
 * ADK sends a long-running call twice — must still show one card), and in
 * every MESSAGES_SNAPSHOT at most one toolCalls entry per id across the
 * thread's assistant messages.
 */
export function toolCardProblems(rec) {
  const p = [];
  const starts = countBy(rec.events.filter((e) => e.type === 'TOOL_CALL_START').map((e) => e.toolCallId));
  for (const [id, n] of starts) if (n > 1) p.push(`${n} TOOL_CALL_START for toolCallId ${JSON.stringify(id)} in one run, want 1`);
  rec.events.forEach((e, i) => {
    if (e.type !== 'MESSAGES_SNAPSHOT') return;
    for (const [id, n] of toolCallCounts(e.messages ?? [])) {
      if (n > 1) p.push(`MESSAGES_SNAPSHOT (event ${i}) holds tool call ${JSON.stringify(id)} ${n} times, want 1`);
    }
  });
  return p;
}

/** threadToolCardProblems: the client's thread holds each tool call once, across all assistant messages. */
export function threadToolCardProblems(messages) {
  const p = [];
  for (const [id, n] of toolCallCounts(messages)) if (n > 1) p.push(`the thread's messages hold tool call ${JSON.stringify(id)} ${n} times, want 1`);
  return p;
}

/**
 * threadViewToolProblems reads the thread as a reconnecting client or
 * another tab would (GET <agent URL>/threads/<threadId>, outside the fetch
 * tap) and holds it to the same rule: each tool call once across the
 * assistant messages, and at most one tool message (result) per call.
 */
export async function threadViewToolProblems(url, threadId, timeoutMs) {
  const threadURL = `${url}/threads/${encodeURIComponent(threadId)}`;
  const view = await sideRequest('GET', threadURL, Date.now() + timeoutMs);
  if (view.status !== 200) return [`GET ${threadURL}: ${view.status ?? view.error} ${oneLine(view.text ?? '')}`];
  const messages = view.json?.messages ?? [];
  const p = threadToolCardProblems(messages).map((x) => `thread view: ${x}`);
  for (const [id, n] of countBy(messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId))) {
    if (n > 1) p.push(`thread view: ${n} tool messages (results) for tool call ${JSON.stringify(id)}, want at most 1`);
  }
  return p;
}

function countBy(values) {
  const m = new Map();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return m;
}

/** How many toolCalls entries each id has across the assistant messages. */
function toolCallCounts(messages) {
  return countBy(messages.filter((m) => m.role === 'assistant').flatMap((m) => (m.toolCalls ?? []).map((tc) => tc.id)));
}

export function describeTerminal(t) {
  if (!t) return 'no terminal event';
  if (t.type === 'RUN_ERROR') return `RUN_ERROR code=${JSON.stringify(t.code)} message=${JSON.stringify(t.message)}`;
  return `RUN_FINISHED outcome=${JSON.stringify(t.outcome ?? null)}`;
}

/** sameJSON compares two JSON values, ignoring object key order. */
export function sameJSON(a, b) {
  const canon = (v) =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]))
        : v;
  return JSON.stringify(canon(a)) === JSON.stringify(canon(b));
}

const TOOL_CALL_STREAM = new Set(['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_CHUNK']);

/** The tool calls (toolCalls entries) of the assistant messages, by id. */
function toolCallsById(messages) {
  const out = new Map();
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const tc of m.toolCalls ?? []) out.set(tc.id, tc);
  }
  return out;
}

/**
 * toolApprovalProblems checks interrupts with reason "tool_call" (the proposal
 * run): each carries a toolCallId that the run streamed (TOOL_CALL_START or
 * CHUNK) and that an assistant message of the thread holds as a tool call of
 * `expect.tool` (with arguments `expect.args`, if given), with no tool result
 * yet, and an approve-with-edits responseSchema.
 */
export function toolApprovalProblems(ints, rec, messages, expect) {
  const p = [];
  const calls = toolCallsById(messages);
  for (const i of ints) {
    const id = i.toolCallId;
    if (typeof id !== 'string' || id === '') {
      p.push(`tool_call interrupt without a toolCallId: ${JSON.stringify(i)}`);
      continue;
    }
    if (!rec.events.some((e) => (e.type === 'TOOL_CALL_START' || e.type === 'TOOL_CALL_CHUNK') && e.toolCallId === id)) {
      p.push(`no TOOL_CALL_START for the interrupt's toolCallId ${JSON.stringify(id)}`);
    }
    const tc = calls.get(id);
    if (!tc) {
      p.push(`no assistant message holds tool call ${JSON.stringify(id)}: ${JSON.stringify(messages)}`);
    } else {
      if (expect.tool && tc.function?.name !== expect.tool) p.push(`tool call ${id} is ${JSON.stringify(tc.function?.name)}, want ${JSON.stringify(expect.tool)}`);
      if (expect.args) {
        let args;
        try {
          args = JSON.parse(tc.function?.arguments ?? '');
        } catch {
          args = tc.function?.arguments;
        }
        if (!sameJSON(args, expect.args)) p.push(`tool call ${id} arguments ${JSON.stringify(tc.function?.arguments)}, want ${JSON.stringify(expect.args)}`);
      }
    }
    if (messages.some((m) => m.role === 'tool' && m.toolCallId === id)) p.push(`tool call ${id} already has a result before approval`);
    const props = i.responseSchema?.properties;
    if (!props?.approved || !props?.editedArgs) p.push(`tool_call interrupt has no approve-with-edits responseSchema: ${JSON.stringify(i.responseSchema)}`);
  }
  return p;
}

// ---- JSON patterns: expected documents with a few placeholders ----

const MATCHER = Symbol('matcher');

/** match is a placeholder that accepts any value for which `test` is true. */
export const match = (description, test) => ({ [MATCHER]: true, description, test });
export const anyString = match('a non-empty string', (v) => typeof v === 'string' && v !== '');
/** optional(p): the key may be absent; if present its value must match p. */
export const optional = (pattern) => ({ [MATCHER]: true, optional: true, pattern });
/** dataURL(text): a data: URL (base64 or percent-encoded) whose payload is exactly `text`. */
export const dataURL = (text) => match(`a data: URL holding ${JSON.stringify(text)}`, (v) => decodeDataURL(v) === text);

export function decodeDataURL(v) {
  const m = typeof v === 'string' ? /^data:([^,]*),(.*)$/s.exec(v) : null;
  if (!m) return undefined;
  try {
    return /;base64$/i.test(m[1]) ? Buffer.from(m[2], 'base64').toString('utf8') : decodeURIComponent(m[2]);
  } catch {
    return undefined;
  }
}

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * matchJSON compares `value` with `pattern` and returns one problem per
 * difference, each naming its JSON pointer. Objects must have exactly the
 * pattern's keys (optional() ones may be absent), arrays the same length and
 * elements; match() placeholders decide for themselves; anything else must be
 * identical.
 */
export function matchJSON(pattern, value, path = '') {
  const where = path || '/';
  if (pattern?.[MATCHER]) {
    if (pattern.optional) return matchJSON(pattern.pattern, value, path);
    return pattern.test(value) ? [] : [`${where}: ${JSON.stringify(value)} is not ${pattern.description}`];
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(value)) return [`${where}: ${JSON.stringify(value)}, want an array ${JSON.stringify(pattern)}`];
    if (value.length !== pattern.length) return [`${where}: ${JSON.stringify(value)} has ${value.length} elements, want ${pattern.length}`];
    return pattern.flatMap((p, i) => matchJSON(p, value[i], `${path}/${i}`));
  }
  if (isPlainObject(pattern)) {
    if (!isPlainObject(value)) return [`${where}: ${JSON.stringify(value)}, want an object`];
    const p = [];
    for (const [k, sub] of Object.entries(pattern)) {
      if (!Object.hasOwn(value, k)) {
        if (!sub?.[MATCHER] || !sub.optional) p.push(`${path}/${k}: missing`);
        continue;
      }
      p.push(...matchJSON(sub, value[k], `${path}/${k}`));
    }
    for (const k of Object.keys(value)) if (!Object.hasOwn(pattern, k)) p.push(`${path}/${k}: unexpected key (value ${JSON.stringify(value[k])})`);
    return p;
  }
  return value === pattern ? [] : [`${where}: ${JSON.stringify(value)}, want ${JSON.stringify(pattern)}`];
}

/**
 * stateProblems checks the final shared state against `expect.state` (a
 * pattern) and how it got there: the first state event is a STATE_SNAPSHOT
 * and every STATE_DELTA op (path and from) stays under /<stateKey>.
 */
function stateProblems(expect, rec, state) {
  const key = expect.stateKey ?? 'a2a';
  const p = matchJSON(expect.state, state).map((x) => `state ${x}`);
  const stateEvents = rec.events.filter((e) => e.type === 'STATE_SNAPSHOT' || e.type === 'STATE_DELTA');
  if (stateEvents.length === 0) p.push('no STATE_SNAPSHOT or STATE_DELTA');
  else if (stateEvents[0].type !== 'STATE_SNAPSHOT') p.push(`first state event is ${stateEvents[0].type}, not STATE_SNAPSHOT`);
  const under = (ptr) => ptr === `/${key}` || ptr.startsWith(`/${key}/`);
  for (const e of stateEvents.filter((x) => x.type === 'STATE_DELTA')) {
    for (const op of e.delta ?? []) {
      if (!under(String(op.path)) || (op.from !== undefined && !under(String(op.from)))) {
        p.push(`STATE_DELTA op outside /${key}: ${JSON.stringify(op)}`);
      }
    }
  }
  return p;
}

/** Every JSON value of the CUSTOM events named `name`. */
const customValues = (rec, name) => rec.events.filter((e) => e.type === 'CUSTOM' && e.name === name).map((e) => e.value);

/**
 * reasoningProblems: the `texts` the agent marked as thoughts never appear in
 * assistant messages. 1.0.0 (REASONING_* events) holds each exactly once
 * across role "reasoning" messages; older clients get no reasoning message
 * and each text in a CUSTOM "a2a.reasoning" event.
 */
function reasoningProblems(texts, rec, messages, version) {
  const p = [];
  const answer = assistantText(messages);
  for (const t of texts) if (answer.includes(t)) p.push(`reasoning ${JSON.stringify(t)} shown as assistant text ${JSON.stringify(answer)}`);
  const reasoning = messages.filter((m) => m.role === 'reasoning');
  if (version === '1.0.0') {
    const all = reasoning.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
    for (const t of texts) {
      const n = countOccurrences(all, t);
      if (n !== 1) p.push(`reasoning ${JSON.stringify(t)} appears ${n} times in the reasoning messages ${JSON.stringify(all)}`);
    }
  } else {
    if (reasoning.length > 0) p.push(`reasoning messages on a ${version} client: ${JSON.stringify(reasoning)}`);
    const custom = JSON.stringify(customValues(rec, 'a2a.reasoning'));
    for (const t of texts) if (!custom.includes(JSON.stringify(t).slice(1, -1))) p.push(`reasoning ${JSON.stringify(t)} in no CUSTOM a2a.reasoning event (values ${custom})`);
  }
  return p;
}

/**
 * progressProblems: the agent's progress `texts` (status texts an answer
 * artifact followed) are shown as progress, never as assistant text: on
 * 1.0.0 in the run's "a2a.status" activity message, on older clients in
 * CUSTOM "a2a.status" events (they reject activities).
 */
function progressProblems(texts, rec, messages, version) {
  const p = [];
  const answer = assistantText(messages);
  for (const t of texts) if (answer.includes(t)) p.push(`progress ${JSON.stringify(t)} shown as assistant text ${JSON.stringify(answer)}`);
  const shown =
    version === '1.0.0'
      ? JSON.stringify(messages.filter((m) => m.role === 'activity' && m.activityType === 'a2a.status').map((m) => m.content))
      : JSON.stringify(customValues(rec, 'a2a.status'));
  const how = version === '1.0.0' ? 'a2a.status activity' : 'CUSTOM a2a.status event';
  for (const t of texts) if (!shown.includes(JSON.stringify(t).slice(1, -1))) p.push(`progress ${JSON.stringify(t)} in no ${how} (${shown})`);
  return p;
}

/**
 * fileProblems: the files, in order, match `patterns` — as the content of
 * ACTIVITY_SNAPSHOT activities of type "a2a.file" on 1.0.0, as the values of
 * CUSTOM "a2a.file" events on older clients — and state a2a.files matches
 * `statePatterns` (the state describes inline files without their bytes).
 */
function fileProblems(patterns, statePatterns, rec, messages, state, version) {
  const p = [];
  const shown =
    version === '1.0.0'
      ? messages.filter((m) => m.role === 'activity' && m.activityType === 'a2a.file').map((m) => m.content)
      : customValues(rec, 'a2a.file');
  const how = version === '1.0.0' ? 'a2a.file activities' : 'CUSTOM a2a.file values';
  p.push(...matchJSON(patterns, shown).map((x) => `${how} ${x}`));
  p.push(...matchJSON(statePatterns, state?.a2a?.files, '/a2a/files').map((x) => `state ${x}`));
  return p;
}

/**
 * authDetailsProblems checks sign-in interrupts (reason "a2a:auth_required"):
 * each names its A2A task in metadata.a2a.taskId (the task the client's state
 * shows under a2a.task.id, when it shows one), and metadata.a2a.auth — the
 * agent's sign-in details — matches the pattern `auth(taskId)` (matchJSON).
 */
function authDetailsProblems(ints, auth, state) {
  const p = [];
  for (const i of ints) {
    const a2a = i.metadata?.a2a;
    const taskId = a2a?.taskId;
    if (typeof taskId !== 'string' || taskId === '') {
      p.push(`auth interrupt without metadata.a2a.taskId: ${JSON.stringify(i)}`);
      continue;
    }
    const shown = state?.a2a?.task?.id;
    if (shown !== undefined && shown !== taskId) p.push(`auth interrupt names task ${JSON.stringify(taskId)}, the state shows task ${JSON.stringify(shown)}`);
    p.push(...matchJSON(auth(taskId), a2a.auth, '/metadata/a2a/auth').map((x) => `auth interrupt ${x}`));
  }
  return p;
}

/**
 * streamedProblems: the answer arrived streaming — the message holding it
 * got at least two TEXT_MESSAGE_CONTENT deltas — not as one block at the end.
 */
function streamedProblems(answer, rec) {
  const deltas = new Map();
  for (const e of rec.events) {
    if (e.type === 'TEXT_MESSAGE_CONTENT') deltas.set(e.messageId, [...(deltas.get(e.messageId) ?? []), e.delta]);
  }
  const holding = [...deltas.values()].filter((d) => d.join('').includes(answer));
  if (holding.length === 0) return [`no streamed message holds the answer ${JSON.stringify(answer)}`];
  return holding.some((d) => d.length >= 2) ? [] : [`the answer came in one TEXT_MESSAGE_CONTENT, not streamed: ${JSON.stringify(holding)}`];
}

/**
 * serverToolProblems checks tool calls the remote agent executed itself
 * (`want`: [{name, args, result}]): each shows up exactly once in the run —
 * one TOOL_CALL_START of `name` marked as executed by the server (in the raw
 * stream: 0.0.36's schema strips metadata), its ARGS and END, exactly one
 * TOOL_CALL_RESULT containing `result` — no other tool call starts, and the
 * thread holds the call (arguments `args`) and exactly one tool message for it.
 */
function serverToolProblems(want, rec, messages) {
  const p = [];
  const starts = rec.events.filter((e) => e.type === 'TOOL_CALL_START');
  const names = want.map((w) => w.name);
  for (const e of starts) if (!names.includes(e.toolCallName)) p.push(`unexpected tool call ${JSON.stringify(e.toolCallName)} (${e.toolCallId})`);
  const calls = toolCallsById(messages);
  const raw = rawEvents(rec);
  for (const w of want) {
    const mine = starts.filter((e) => e.toolCallName === w.name);
    if (mine.length !== 1) {
      p.push(`${mine.length} TOOL_CALL_START of ${w.name}, want 1 (events: ${rec.events.map((e) => e.type).join(' ')})`);
      continue;
    }
    const id = mine[0].toolCallId;
    const sent = raw.find((e) => e.type === 'TOOL_CALL_START' && e.toolCallId === id) ?? mine[0];
    if (sent.metadata?.['ag-ui:tool-execution'] !== 'server') p.push(`tool call ${id} not marked as executed by the server: metadata ${JSON.stringify(sent.metadata)}`);
    for (const type of ['TOOL_CALL_ARGS', 'TOOL_CALL_END']) {
      if (!rec.events.some((e) => e.type === type && e.toolCallId === id)) p.push(`no ${type} for ${w.name} (${id})`);
    }
    const results = rec.events.filter((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === id);
    if (results.length !== 1) p.push(`${results.length} TOOL_CALL_RESULT for ${w.name} (${id}), want 1`);
    for (const e of results) {
      const content = typeof e.content === 'string' ? e.content : JSON.stringify(e.content);
      if (w.result && !content.includes(w.result)) p.push(`TOOL_CALL_RESULT of ${w.name} is ${JSON.stringify(content)}, want it to contain ${JSON.stringify(w.result)}`);
    }
    const tc = calls.get(id);
    if (!tc) p.push(`no assistant message holds tool call ${w.name} (${id})`);
    else if (w.args) {
      let args;
      try {
        args = JSON.parse(tc.function?.arguments ?? '');
      } catch {
        args = tc.function?.arguments;
      }
      if (!sameJSON(args, w.args)) p.push(`tool call ${w.name} arguments ${JSON.stringify(tc.function?.arguments)}, want ${JSON.stringify(w.args)}`);
    }
    const toolMsgs = messages.filter((m) => m.role === 'tool' && m.toolCallId === id).length;
    if (toolMsgs !== 1) p.push(`${toolMsgs} tool messages for ${w.name} (${id}) in the thread, want 1`);
  }
  return p;
}

/**
 * neverShownProblems: none of `texts` (an agent's progress notes, such as
 * Mastra's "Generating response...") appears in an assistant message or an
 * interrupt's message.
 */
function neverShownProblems(texts, rec, messages) {
  const p = [];
  const text = assistantText(messages);
  const ints = JSON.stringify((rec.terminal?.interrupts ?? []).map((i) => i.message ?? ''));
  for (const t of texts) {
    if (text.includes(t)) p.push(`${JSON.stringify(t)} shown as assistant text: ${JSON.stringify(text)}`);
    if (ints.includes(t)) p.push(`${JSON.stringify(t)} in an interrupt's message: ${ints}`);
  }
  return p;
}

/**
 * judge returns the list of problems of one run against expectation `expect`:
 *   {answer: "text"}                       RUN_FINISHED (not an interrupt), text exactly once
 *   {error: "code", message?: "substring"} RUN_ERROR with that code
 *   {interrupt: true, question?: "text",   interrupt outcome with an interrupt of reason `reason`
 *    reason?: "input_required",            (default input_required) whose message contains
 *    responseSchema?: {…},                 `question` and, if given, whose responseSchema is
 *    tool?: "name", args?: {…},            exactly `responseSchema`; reason "tool_call" also
 *    auth?: (taskId) => pattern}           needs toolApprovalProblems() to find nothing; with
 *                                          `auth`, authDetailsProblems() must find nothing.
 *                                          0.0.36: a clean RUN_FINISHED.
 * Any of them may add
 *   streamed: true                         the answer came in several deltas (streamedProblems)
 *   serverTools: [{name, args, result}]    calls the agent ran itself (serverToolProblems)
 *   never: ["text", …]                     texts never shown (neverShownProblems)
 *   progress: ["text", …]                  shown as progress, not as answer (progressProblems)
 *   state: pattern                         the final shared state matches (matchJSON), the
 *                                          first state event is a snapshot, deltas stay
 *                                          under /a2a (stateProblems)
 *   reasoning: ["text", …]                 reasoningProblems()
 *   files: [pattern, …],                   fileProblems(); state a2a.files must match
 *   stateFiles?: [pattern, …]              stateFiles (default: files)
 * `messages` is the agent's message list after the run, `state` its state,
 * `version` the client generation.
 */
export function judge(expect, rec, messages, version, state) {
  const p = genericProblems(rec);
  if (rec.timedOut || rec.error) return p;
  const t = rec.terminal;
  const text = assistantText(messages);
  if (expect.cancelled) {
    // 1.0 has the cancelled outcome; older clients get RUN_ERROR "cancelled".
    if (version === '1.0.0') {
      if (t?.type !== 'RUN_FINISHED' || t.outcome !== 'cancelled') p.push(`expected RUN_FINISHED with the cancelled outcome, got ${describeTerminal(t)}`);
    } else if (t?.type !== 'RUN_ERROR' || t.code !== 'cancelled') {
      p.push(`expected RUN_ERROR code "cancelled", got ${describeTerminal(t)}`);
    }
  } else if (expect.answer !== undefined) {
    if (t?.type !== 'RUN_FINISHED') p.push(`expected RUN_FINISHED, got ${describeTerminal(t)}`);
    else if (INTERRUPT_AWARE.has(version) && t.outcome !== 'success') p.push(`expected a success outcome, got ${describeTerminal(t)}`);
    const n = countOccurrences(text, expect.answer);
    if (n !== 1) p.push(`answer ${JSON.stringify(expect.answer)} appears ${n} times in the assistant messages ${JSON.stringify(text)}`);
  } else if (expect.error !== undefined) {
    if (t?.type !== 'RUN_ERROR') p.push(`expected RUN_ERROR code=${expect.error}, got ${describeTerminal(t)}`);
    else {
      if (t.code !== expect.error) p.push(`expected RUN_ERROR code ${JSON.stringify(expect.error)}, got ${describeTerminal(t)}`);
      if (expect.message && !String(t.message ?? '').includes(expect.message)) {
        p.push(`RUN_ERROR message ${JSON.stringify(t.message)} does not contain ${JSON.stringify(expect.message)}`);
      }
    }
  } else if (expect.interrupt) {
    if (t?.type !== 'RUN_FINISHED') p.push(`expected RUN_FINISHED with an interrupt, got ${describeTerminal(t)}`);
    else if (INTERRUPT_AWARE.has(version)) {
      const reason = expect.reason ?? 'input_required';
      const ints = (t.interrupts ?? []).filter((i) => i.reason === reason);
      if (t.outcome !== 'interrupt') p.push(`expected outcome "interrupt", got ${describeTerminal(t)}`);
      else if (ints.length === 0) {
        p.push(`no interrupt with reason ${JSON.stringify(reason)} in ${JSON.stringify(t.interrupts)}`);
      } else {
        if (expect.question && !ints.some((i) => String(i.message ?? '').includes(expect.question))) {
          p.push(`no interrupt message contains ${JSON.stringify(expect.question)}: ${JSON.stringify(ints)}`);
        }
        if (expect.responseSchema && !ints.some((i) => sameJSON(i.responseSchema, expect.responseSchema))) {
          p.push(`no interrupt has responseSchema ${JSON.stringify(expect.responseSchema)}: ${JSON.stringify(ints)}`);
        }
        if (reason === 'tool_call') p.push(...toolApprovalProblems(ints, rec, messages, expect));
        if (expect.auth) p.push(...authDetailsProblems(ints, expect.auth, state));
      }
    }
    if (expect.question) {
      const n = countOccurrences(text, expect.question);
      if (n > 1) p.push(`question ${JSON.stringify(expect.question)} appears ${n} times in the assistant messages ${JSON.stringify(text)}`);
    }
  }
  if (expect.state !== undefined) p.push(...stateProblems(expect, rec, state));
  if (expect.streamed) p.push(...streamedProblems(expect.answer, rec));
  if (expect.serverTools) p.push(...serverToolProblems(expect.serverTools, rec, messages));
  if (expect.never) p.push(...neverShownProblems(expect.never, rec, messages));
  if (expect.progress) p.push(...progressProblems(expect.progress, rec, messages, version));
  if (expect.reasoning) p.push(...reasoningProblems(expect.reasoning, rec, messages, version));
  if (expect.files) p.push(...fileProblems(expect.files, expect.stateFiles ?? expect.files, rec, messages, state, version));
  return p;
}

/**
 * A fresh agent on a fresh thread (with `initialState`, if given), with the
 * user's message added: an HttpAgent, or for transport "ws" the WebSocket
 * agent of the same client generation.
 */
export async function newAgent(version, url, userText, initialState, transport = 'sse') {
  const mod = await loadClient(version);
  const opts = { threadId: randomUUID(), ...(initialState !== undefined && { initialState: structuredClone(initialState) }) };
  const agent = transport === 'ws' ? new (wsAgentClass(version, mod))({ ...opts, wsUrl: `${url.replace(/^http/, 'ws')}/ws` }) : new mod.HttpAgent({ url, ...opts });
  agent.addMessage({ id: randomUUID(), role: 'user', content: userText });
  return agent;
}

/**
 * resumeToolProblems checks the resumed run of a tool approval against the
 * tool_call interrupts it answered: no TOOL_CALL_START/ARGS/END/CHUNK again;
 * with `toolResult` true exactly one TOOL_CALL_RESULT per interrupted call (a
 * denial is a result too), on its toolCallId, before the first text of the
 * answer, containing `resultContains` if given, none for any other id, and
 * exactly one tool message for it in the thread; with `toolResult` false no
 * TOOL_CALL_RESULT at all. With `toolMessage` (the client sent the call's
 * tool message beside the resume, as CopilotKit does) that message is the
 * call's one result: no TOOL_CALL_RESULT for it, one tool message.
 */
export function resumeToolProblems(r, rec, messages, answered) {
  const p = [];
  const ids = answered.filter((i) => i.reason === 'tool_call').map((i) => i.toolCallId);
  const again = rec.events.filter((e) => TOOL_CALL_STREAM.has(e.type));
  if (again.length > 0) p.push(`tool call re-emitted: ${again.map((e) => `${e.type}(${e.toolCallId})`).join(', ')}`);
  const results = rec.events.filter((e) => e.type === 'TOOL_CALL_RESULT');
  if (!r.toolResult) {
    if (results.length > 0) p.push(`TOOL_CALL_RESULT after a denial: ${JSON.stringify(results)}`);
    return p;
  }
  const firstText = rec.events.findIndex((e) => e.type === 'TEXT_MESSAGE_START' || e.type === 'TEXT_MESSAGE_CHUNK');
  if (r.toolMessage) {
    for (const id of ids) {
      const mine = results.filter((e) => e.toolCallId === id);
      if (mine.length > 0) p.push(`${mine.length} TOOL_CALL_RESULT for ${JSON.stringify(id)} beside the client's own tool message, want 0: ${JSON.stringify(mine)}`);
      const toolMsgs = messages.filter((m) => m.role === 'tool' && m.toolCallId === id).length;
      if (toolMsgs !== 1) p.push(`${toolMsgs} tool messages for ${JSON.stringify(id)} in the thread, want 1 (the client's)`);
    }
    const stray = results.filter((e) => !ids.includes(e.toolCallId));
    if (stray.length > 0) p.push(`TOOL_CALL_RESULT for unknown toolCallIds: ${stray.map((e) => e.toolCallId).join(', ')}`);
    return p;
  }
  for (const id of ids) {
    const mine = results.filter((e) => e.toolCallId === id);
    if (mine.length !== 1) p.push(`${mine.length} TOOL_CALL_RESULT for toolCallId ${JSON.stringify(id)}, want 1`);
    const at = rec.events.findIndex((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === id);
    if (at >= 0 && firstText >= 0 && at > firstText) p.push(`TOOL_CALL_RESULT for ${JSON.stringify(id)} comes after the answer's text starts`);
    for (const e of mine) {
      const content = typeof e.content === 'string' ? e.content : JSON.stringify(e.content);
      if (r.resultContains && !content.includes(r.resultContains)) {
        p.push(`TOOL_CALL_RESULT content ${JSON.stringify(content)} does not contain ${JSON.stringify(r.resultContains)}`);
      }
    }
    const toolMsgs = messages.filter((m) => m.role === 'tool' && m.toolCallId === id).length;
    if (toolMsgs !== 1) p.push(`${toolMsgs} tool messages for ${JSON.stringify(id)} in the thread, want 1`);
  }
  const stray = results.filter((e) => !ids.includes(e.toolCallId));
  if (stray.length > 0) p.push(`TOOL_CALL_RESULT for unknown toolCallIds: ${stray.map((e) => e.toolCallId).join(', ')}`);
  return p;
}

// The task state the bridge's key must show after a run, by expectation.
const finalTaskState = (expect) => {
  if (expect.cancelled) return ['canceled'];
  if (expect.interrupt) return ['input_required', 'auth_required'];
  if (expect.error === 'a2a_failed') return ['failed'];
  if (expect.error === 'a2a_rejected') return ['rejected'];
  if (expect.answer !== undefined) return ['completed'];
  return null;
};

/**
 * bridgeStateProblems holds EVERY scenario to the shared-state contract, on
 * every client generation: the run sent state events the client applied
 * (no warnings are allowed, so a delta that does not apply fails the run
 * already), the client's own initial keys are untouched, and the bridge's
 * key names the agent and — when the agent made a task — the task's final
 * state.
 */
function bridgeStateProblems(s, expect, rec, state) {
  // Only rows that go through the bridge (they name its agent); the
  // harness self-test replays canned streams without state.
  if (!s.agent || rec.timedOut || rec.error) return [];
  const p = [];
  const key = s.expect?.stateKey ?? 'a2a';
  const view = state?.[key];
  if (typeof view !== 'object' || view === null) return [`state: no "${key}" key after the run (${JSON.stringify(state)})`];
  if (view.agent !== s.agent) p.push(`state ${key}.agent ${JSON.stringify(view.agent)}, want ${JSON.stringify(s.agent)}`);
  for (const [k, v] of Object.entries(s.initialState ?? {})) {
    if (JSON.stringify(state[k]) !== JSON.stringify(v)) p.push(`state: the client's key ${k} changed to ${JSON.stringify(state[k])}`);
  }
  const want = finalTaskState(expect);
  if (want && view.task !== undefined && !want.includes(view.task.state)) {
    p.push(`state ${key}.task.state ${JSON.stringify(view.task.state)}, want one of ${want.join(', ')}`);
  }
  return p;
}

// ---- out-of-band sign-in (AUTH_REQUIRED) ----

/** The interrupt reason of a sign-in (docs/mapping.md: Human in the loop). */
export const AUTH_REASON = 'a2a:auth_required';
const AUTHORIZE_WHEN = ['before-resume', 'during-resume'];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * withAuthorizeURL returns row `s` with resume.authorize.url set to
 * `<agentBase>authorize` (agentBase: the signing-in agent's own base URL, with
 * its trailing slash), the endpoint the harness POSTs `?task=<taskId>` to.
 * Rows without resume.authorize come back unchanged.
 */
export function withAuthorizeURL(s, agentBase) {
  const a = s.resume?.authorize;
  if (!a) return s;
  if (!agentBase) throw new Error(`no base URL for agent ${JSON.stringify(a.agent)}, which the row signs in to out of band`);
  return { ...s, resume: { ...s.resume, authorize: { ...a, url: new URL('authorize', agentBase).href } } };
}

/**
 * authorizeOutOfBand signs in the way the user would outside the chat: POST
 * `<authorize.url>?task=<taskId>` to the agent's server (not through the
 * fetch tap: it is no part of a run), which must answer 204 before
 * `deadline` (ms since the epoch). Returns the problems.
 */
async function authorizeOutOfBand(authorize, taskId, deadline) {
  const u = `${authorize.url}?task=${encodeURIComponent(taskId)}`;
  try {
    const res = await realFetch(u, { method: 'POST', signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) });
    const body = await res.text();
    return res.status === 204 ? [] : [`out-of-band sign-in POST ${u}: HTTP ${res.status} ${oneLine(body)}, want 204`];
  } catch (err) {
    return [`out-of-band sign-in POST ${u}: ${err?.message ?? err}`];
  }
}

/**
 * waitActiveRun polls GET `threadURL` (the bridge's thread view) until its
 * activeRunId is `runId`, i.e. the bridge has taken the run. Resolves to []
 * then, or to a problem when `ended()` turns true or `deadline` passes first.
 */
async function waitActiveRun(threadURL, runId, ended, deadline) {
  let last = 'no answer yet';
  while (!ended()) {
    if (Date.now() >= deadline) return [`GET ${threadURL} did not show activeRunId ${JSON.stringify(runId)} in time (last: ${last})`];
    try {
      const res = await realFetch(threadURL, { signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) });
      const body = await res.text();
      if (!res.ok) last = `HTTP ${res.status} ${oneLine(body)}`;
      else {
        const view = JSON.parse(body);
        if (view.activeRunId === runId) return [];
        last = `activeRunId ${JSON.stringify(view.activeRunId)}`;
      }
    } catch (err) {
      last = String(err?.message ?? err);
    }
    await sleep(10);
  }
  return [`the run ended before GET ${threadURL} showed it active (last: ${last}): no sign-in happened during it`];
}

/**
 * resumeAfterSignIn runs the resume of a sign-in row (resume.authorize =
 * {url, when}) and returns {rec, problems, taskId}. The answered interrupts
 * must name exactly one A2A task (metadata.a2a.taskId of the a2a:auth_required
 * ones). when "before-resume": sign in (204), then resume. when
 * "during-resume": start the resume with a known runId, wait until the
 * bridge's thread view shows that run active, then sign in while it runs.
 * The sign-in (polling included) and the run are each bounded by timeoutMs.
 */
async function resumeAfterSignIn(authorize, agent, url, pending, resume, timeoutMs) {
  if (!AUTHORIZE_WHEN.includes(authorize.when)) throw new Error(`resume.authorize.when ${JSON.stringify(authorize.when)}, want one of ${AUTHORIZE_WHEN.join(', ')}`);
  if (!authorize.url) throw new Error('resume.authorize.url missing (withAuthorizeURL)');
  const ids = [...new Set(pending.filter((i) => i.reason === AUTH_REASON).map((i) => i.metadata?.a2a?.taskId))];
  if (ids.length !== 1 || typeof ids[0] !== 'string' || ids[0] === '') {
    return { problems: [`want one task to sign in to (metadata.a2a.taskId of the ${AUTH_REASON} interrupts), got ${JSON.stringify(ids)}`] };
  }
  const taskId = ids[0];
  const deadline = Date.now() + timeoutMs;
  if (authorize.when === 'before-resume') {
    const problems = await authorizeOutOfBand(authorize, taskId, deadline);
    if (problems.length > 0) return { problems, taskId };
    return { rec: await runOnce(agent, { resume }, timeoutMs), problems, taskId };
  }
  const runId = randomUUID();
  let ended = false;
  const running = runOnce(agent, { resume, runId }, timeoutMs).finally(() => {
    ended = true;
  });
  const signIn = (async () => {
    const threadURL = `${url}/threads/${encodeURIComponent(agent.threadId)}`;
    const waited = await waitActiveRun(threadURL, runId, () => ended, deadline);
    return waited.length > 0 ? waited : authorizeOutOfBand(authorize, taskId, deadline);
  })();
  const [rec, problems] = await Promise.all([running, signIn]);
  return { rec, problems, taskId };
}

/**
 * runScenario runs scenario `s` with client `version` against `url` and
 * returns {ok, problems, runs: [rec…], messages}. A scenario with `resume`
 * runs twice on the same thread: the first run must end in an interrupt
 * (judged as {interrupt: true, ...s.expect}), the second answers it with
 * resume[{interruptId, status: "resolved", payload}] and must produce
 * `resume.answer` exactly once; with `resume.toolResult` set it is also held
 * to resumeToolProblems(). With `resume.authorize` ({url, when}, a sign-in)
 * the harness signs in out of band around the resume (resumeAfterSignIn), and
 * the resumed run must leave the state on the task it signed in to.
 */
export async function runScenario(s, version, url, timeoutMs, transport = 'sse') {
  if (s.team) return runTeam(s, version, url, timeoutMs, transport);
  if (s.a2ui) return runA2UI(s, version, url, timeoutMs, transport);
  if (s.frontendTool) return runFrontendTool(s, version, url, timeoutMs, transport);
  if (s.cancel) return runCancel(s, version, url, timeoutMs, transport);
  const agent = await newAgent(version, url, s.text, s.initialState, transport);
  const runs = [];
  const first = await runOnce(agent, s.tools ? { tools: s.tools } : {}, timeoutMs);
  runs.push(first);
  const firstExpect = s.resume ? { interrupt: true, ...s.expect } : s.expect;
  let problems = judge(firstExpect, first, agent.messages, version, agent.state);
  problems.push(...bridgeStateProblems(s, firstExpect, first, agent.state));
  problems.push(...threadToolCardProblems(agent.messages));
  if (s.followUp && problems.length === 0) return runFollowUp(s, agent, url, runs, version, timeoutMs);
  if (s.resume && problems.length === 0) {
    const pending = [...(agent.pendingInterrupts ?? first.terminal?.interrupts ?? [])];
    const resume = pending.map((i) => ({ interruptId: i.id, status: 'resolved', payload: s.resume.payload }));
    if (s.resume.toolMessage) {
      // CopilotKit's useInterrupt also appends the answer as the call's tool message (PEERS.md §13).
      for (const i of pending.filter((x) => x.reason === 'tool_call')) {
        agent.addMessage({ id: randomUUID(), role: 'tool', toolCallId: i.toolCallId, content: JSON.stringify(s.resume.payload) });
      }
    }
    const before = assistantText(agent.messages);
    const auth = s.resume.authorize;
    const signed = auth ? await resumeAfterSignIn(auth, agent, url, pending, resume, timeoutMs) : { rec: await runOnce(agent, { resume }, timeoutMs), problems: [] };
    if (!signed.rec) return { ok: false, problems: signed.problems.map((x) => `resumed run: ${x}`), runs, messages: agent.messages };
    const second = signed.rec;
    runs.push(second);
    // Count the answer in what the resumed run added (the thread keeps run 1's messages).
    const after = assistantText(agent.messages);
    const added = after.startsWith(before) ? after.slice(before.length) : after;
    problems = [...signed.problems, ...judge({ answer: s.resume.answer, never: s.expect?.never }, second, [{ role: 'assistant', content: added }], version)];
    if (auth && !second.timedOut && !second.error && agent.state?.a2a?.task?.id !== signed.taskId) {
      problems.push(`state a2a.task.id ${JSON.stringify(agent.state?.a2a?.task?.id)}, want the task signed in to (${JSON.stringify(signed.taskId)})`);
    }
    if (s.resume.toolResult !== undefined && !second.timedOut && !second.error) {
      problems.push(...resumeToolProblems(s.resume, second, agent.messages, pending));
    }
    problems.push(...bridgeStateProblems(s, { answer: s.resume.answer }, second, agent.state));
    problems.push(...threadToolCardProblems(agent.messages));
    problems = problems.map((x) => `resumed run: ${x}`);
    if ((agent.pendingInterrupts ?? []).length > 0) problems.push(`resumed run: pendingInterrupts still ${JSON.stringify(agent.pendingInterrupts)}`);
  }
  // Rows through the bridge (they name its agent; the self-test's fakes serve no thread view).
  if (s.agent && problems.length === 0) problems.push(...(await threadViewToolProblems(url, agent.threadId, timeoutMs)));
  return { ok: problems.length === 0, problems, runs, messages: agent.messages };
}

/**
 * runFollowUp is the second turn of a row with `followUp` ({text, answer}):
 * after run 1 passed, the user says `text` on the same thread (a new A2A
 * task in the same context) and run 2 must answer `answer` exactly once in
 * what it added — an answer that depends on run 1 (memory) shows the
 * context reached the agent.
 */
async function runFollowUp(s, agent, url, runs, version, timeoutMs) {
  agent.addMessage({ id: randomUUID(), role: 'user', content: s.followUp.text });
  const before = assistantText(agent.messages);
  const second = await runOnce(agent, {}, timeoutMs);
  runs.push(second);
  const after = assistantText(agent.messages);
  const added = after.startsWith(before) ? after.slice(before.length) : after;
  const expect = { answer: s.followUp.answer, never: s.expect?.never };
  const problems = [
    ...judge(expect, second, [{ role: 'assistant', content: added }], version),
    ...bridgeStateProblems(s, expect, second, agent.state),
    ...threadToolCardProblems(agent.messages),
  ].map((x) => `second turn: ${x}`);
  if (s.agent && problems.length === 0) problems.push(...(await threadViewToolProblems(url, agent.threadId, timeoutMs)));
  return { ok: problems.length === 0, problems, runs, messages: agent.messages };
}

// ---- cancel of a running run ----

const CANCEL_WHEN = ['mid-stream', 'before-first-event'];

/**
 * withCancelsURL gives a cancel row the URL of its agent's CancelTask log
 * (`<agent base URL>cancels`, served by the Go demo agents and the JS
 * agents), which the runner knows from the agents' announcements.
 */
export function withCancelsURL(s, agentBase) {
  if (!s.cancel) return s;
  if (!agentBase) throw new Error(`no base URL for agent ${JSON.stringify(s.agent)}, whose CancelTask log the row reads`);
  return { ...s, cancel: { ...s.cancel, cancelsURL: new URL('cancels', agentBase).href } };
}

/** GET or POST `url` outside the fetch tap (no part of a run); resolves to {status, json, text} or {error}. */
export async function sideRequest(method, url, deadline, headers = {}) {
  try {
    const res = await realFetch(url, { method, headers, signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text };
  } catch (err) {
    return { error: String(err?.message ?? err) };
  }
}

/**
 * runCancel cancels a run while it streams, as a user pressing "stop" in a
 * UI would: POST <agent URL>/threads/<threadId>/cancel — after the first
 * text chunk (`cancel.when` "mid-stream") or once the bridge shows the run
 * active but before the agent has said anything (`"before-first-event"`).
 * The run must end cancelled (1.0.0: RUN_FINISHED with the cancelled
 * outcome; older clients: RUN_ERROR "cancelled") with no client complaint;
 * the cancel answer is 200 with cancel.requested (and waitingForTask when
 * the task was not known yet); the thread view afterwards shows no active run
 * and the task CANCELED; the agent's own log shows exactly one CancelTask for
 * that task; a second cancel is answered 200, sends nothing, and the log
 * still holds one.
 *   s.cancel = {when, cancelsURL (withCancelsURL)}
 */
async function runCancel(s, version, url, timeoutMs, transport) {
  const c = s.cancel;
  if (!CANCEL_WHEN.includes(c.when)) throw new Error(`cancel.when ${JSON.stringify(c.when)}, want one of ${CANCEL_WHEN.join(', ')}`);
  if (!c.cancelsURL) throw new Error('cancel.cancelsURL missing (withCancelsURL)');
  const agent = await newAgent(version, url, s.text, s.initialState, transport);
  const threadURL = `${url}/threads/${encodeURIComponent(agent.threadId)}`;
  const deadline = Date.now() + timeoutMs;
  const runId = randomUUID();
  let answer;
  const cancel = () => (answer ??= sideRequest('POST', `${threadURL}/cancel`, deadline));
  let ended = false;
  const hooks = c.when === 'mid-stream' ? { onEvent: (e) => e.type === 'TEXT_MESSAGE_CONTENT' && cancel() } : {};
  const running = runOnce(agent, { runId }, timeoutMs, hooks).finally(() => {
    ended = true;
  });
  const problems = [];
  if (c.when === 'before-first-event') {
    const waited = await waitActiveRun(threadURL, runId, () => ended, deadline);
    problems.push(...waited);
    if (waited.length === 0) cancel();
  }
  const rec = await running;
  problems.push(...judge({ cancelled: true }, rec, agent.messages, version, agent.state));
  problems.push(...bridgeStateProblems(s, { cancelled: true }, rec, agent.state));
  if (!answer) return { ok: false, problems: [...problems, 'the run ended before the cancel was sent'], runs: [rec], messages: agent.messages };
  const a = await answer;
  const sent = a.json?.cancel;
  if (a.status !== 200) problems.push(`cancel answered ${a.status ?? a.error}: ${oneLine(a.text ?? '')}`);
  else if (sent?.requested !== true) problems.push(`cancel answer ${JSON.stringify(sent)}, want requested: true`);
  else if (c.when === 'before-first-event' && sent.waitingForTask !== true) problems.push(`cancel answer ${JSON.stringify(sent)}, want waitingForTask: true (the agent had not named its task)`);
  const view = await sideRequest('GET', threadURL, deadline);
  const taskId = view.json?.task?.id;
  if (view.status !== 200) problems.push(`GET ${threadURL}: ${view.status ?? view.error}`);
  else {
    if (view.json.activeRunId) problems.push(`the thread still has an active run: ${view.json.activeRunId}`);
    if (view.json.task?.state !== 'canceled') problems.push(`the thread's task is ${JSON.stringify(view.json.task)}, want canceled`);
  }
  const received = async () => ((await sideRequest('GET', c.cancelsURL, deadline)).json?.taskIds ?? []).filter((id) => id === taskId).length;
  const n = await received();
  if (n !== 1) problems.push(`the agent received ${n} CancelTask for task ${taskId}, want 1`);
  const again = await sideRequest('POST', `${threadURL}/cancel`, deadline);
  if (again.status !== 200) problems.push(`a second cancel answered ${again.status ?? again.error}`);
  else if (again.json?.cancel?.requested !== false) problems.push(`a second cancel after the end: ${JSON.stringify(again.json?.cancel)}, want requested: false`);
  const m = await received();
  if (m !== 1) problems.push(`after a second cancel the agent has received ${m} CancelTask for task ${taskId}, want still 1`);
  return { ok: problems.length === 0, problems, runs: [rec], messages: agent.messages };
}

/** The events of a run as the server sent them (the data: lines of the SSE bodies, the WebSocket envelopes). */
export function rawEvents(rec) {
  const out = [];
  for (const ex of rec.exchanges) {
    for (const line of ex.raw.split('\n')) {
      const ws = ex.contentType === 'websocket';
      if (!ws && !line.startsWith('data:')) continue;
      try {
        out.push(ws ? JSON.parse(line).event : JSON.parse(line.slice(5)));
      } catch {
        // not JSON: the client would have failed the run already
      }
    }
  }
  return out;
}

/** Events whose number depends on when a polled agent was looked at, not on the transport. */
export const TIMING = new Set(['STEP_STARTED', 'STEP_FINISHED', 'STATE_SNAPSHOT', 'STATE_DELTA']);

/**
 * shape is what two runs of the same scenario over different transports
 * must share: the events the client applied, with text deltas, tool names,
 * error codes and outcomes (ids and timestamps differ by thread). Steps and
 * state updates are left out: how many a run has depends on when an agent
 * without streaming was polled (its final state is checked on every run).
 * cutText: the run was cancelled mid-stream, so how much text came before
 * the cancel is timing too: only that text came is compared.
 */
export function shape(result, { cutText = false } = {}) {
  if (result.shape !== undefined) return result.shape; // a team's: per member (lib/teams.mjs)
  return result.runs
    .map((rec) =>
      joinTextDeltas(rec.events.filter((e) => !TIMING.has(e.type)))
        .map((e) => (cutText && e.type === 'TEXT_MESSAGE_CONTENT' ? { ...e, delta: '…' } : e))
        .map(eventShape)
        .join('\n'),
    )
    .join('\n--- next run ---\n');
}

/**
 * joinTextDeltas folds consecutive TEXT_MESSAGE_CONTENT events of one
 * message into one: the bridge merges the deltas that queued behind a slow
 * journal append (issue 36), so where one transport's run got "2 nights in "
 * the other's may have got "2 ", "nights ", "in " — the same text, cut
 * where the store happened to be busy.
 */
export function joinTextDeltas(events) {
  const out = [];
  for (const e of events) {
    const last = out[out.length - 1];
    if (e.type === 'TEXT_MESSAGE_CONTENT' && last?.type === 'TEXT_MESSAGE_CONTENT' && last.messageId === e.messageId) {
      out[out.length - 1] = { ...last, delta: last.delta + e.delta };
      continue;
    }
    out.push(e);
  }
  return out;
}

/** eventShape is one event in a shape: its type and its text delta, tool name, code, outcome or name. */
export function eventShape(e) {
  const text = typeof e.delta === 'string' ? e.delta : undefined;
  const detail = text ?? e.toolCallName ?? e.code ?? (e.type === 'RUN_FINISHED' ? e.outcome?.type : undefined) ?? e.name ?? '';
  return `${e.type}${detail === '' ? '' : ` ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`}`;
}

/** The RUN_FINISHED event of a run, as the client applied it. */
const finishedEvent = (rec) => rec.events.find((e) => e.type === 'RUN_FINISHED');

/**
 * frontendCallProblems checks run 1 of a frontend tool round trip: a clean
 * success (not an interrupt, none pending), exactly one streamed call of
 * `ft.tool` (START, ARGS, END; not marked as executed by the server) with
 * arguments `ft.args`, held by an assistant message with no result yet, no
 * TOOL_CALL_RESULT, and on 1.0.0 the call in RUN_FINISHED
 * outcome.pendingToolCallIds. Returns {problems, callId}.
 */
function frontendCallProblems(ft, rec, agent, version) {
  const p = genericProblems(rec);
  if (rec.timedOut || rec.error) return { problems: p };
  const t = rec.terminal;
  if (t?.type !== 'RUN_FINISHED') p.push(`expected RUN_FINISHED with the call pending, got ${describeTerminal(t)}`);
  else if (INTERRUPT_AWARE.has(version) && t.outcome !== 'success') p.push(`expected a success outcome with the call pending, got ${describeTerminal(t)}`);
  if ((agent.pendingInterrupts ?? []).length > 0) p.push(`pendingInterrupts ${JSON.stringify(agent.pendingInterrupts)} for a frontend tool`);
  const starts = rec.events.filter((e) => e.type === 'TOOL_CALL_START');
  const mine = starts.filter((e) => e.toolCallName === ft.tool);
  if (mine.length !== 1 || starts.length !== 1) {
    p.push(`want exactly one TOOL_CALL_START, of ${ft.tool}; got ${JSON.stringify(starts)}`);
    return { problems: p };
  }
  const start = mine[0];
  const callId = start.toolCallId;
  // From the raw SSE: 0.0.36's schema strips event metadata before applying.
  const sent = rawEvents(rec).find((e) => e.type === 'TOOL_CALL_START' && e.toolCallId === callId) ?? start;
  const marker = JSON.stringify(sent.metadata ?? {});
  if (/"server"/.test(marker)) p.push(`frontend tool call marked as executed by the server: metadata ${marker}`);
  for (const type of ['TOOL_CALL_ARGS', 'TOOL_CALL_END']) {
    if (!rec.events.some((e) => e.type === type && e.toolCallId === callId)) p.push(`no ${type} for ${callId}`);
  }
  const results = rec.events.filter((e) => e.type === 'TOOL_CALL_RESULT');
  if (results.length > 0) p.push(`TOOL_CALL_RESULT for a frontend tool: ${JSON.stringify(results)}`);
  const tc = toolCallsById(agent.messages).get(callId);
  if (!tc) p.push(`no assistant message holds tool call ${callId}: ${JSON.stringify(agent.messages)}`);
  else {
    if (tc.function?.name !== ft.tool) p.push(`tool call ${callId} is ${JSON.stringify(tc.function?.name)}, want ${ft.tool}`);
    let args;
    try {
      args = JSON.parse(tc.function?.arguments ?? '');
    } catch {
      args = tc.function?.arguments;
    }
    if (!sameJSON(args, ft.args)) p.push(`tool call ${callId} arguments ${JSON.stringify(tc.function?.arguments)}, want ${JSON.stringify(ft.args)}`);
  }
  if (agent.messages.some((m) => m.role === 'tool' && m.toolCallId === callId)) p.push(`tool call ${callId} already has a result`);
  if (version === '1.0.0') {
    const pending = finishedEvent(rec)?.outcome?.pendingToolCallIds;
    if (!Array.isArray(pending) || !pending.includes(callId)) {
      p.push(`RUN_FINISHED outcome ${JSON.stringify(finishedEvent(rec)?.outcome)} does not list ${callId} in pendingToolCallIds`);
    }
    if (!(rec.finished?.pendingToolCallIds ?? []).includes(callId)) p.push(`onRunFinishedEvent pendingToolCallIds ${JSON.stringify(rec.finished?.pendingToolCallIds)} lacks ${callId}`);
  }
  return { problems: p, callId };
}

/**
 * runFrontendTool runs a frontend tool round trip (AGUI-PROTOCOL.md §4.5):
 * run 1 with `s.tools` must end with one pending call (frontendCallProblems);
 * the client then adds the tool message {role: "tool", toolCallId, content:
 * ft.result} and runs again with the same tools, which must produce
 * `ft.answer` exactly once, stream no tool call or result, leave exactly one
 * tool message for the call and, on 1.0.0, nothing pending. With `ft.state`
 * the state after run 2 must match it (stateProblems) and name the same A2A
 * task as after run 1.
 *   s.frontendTool = {tool, args, result, answer, state?}
 */
async function runFrontendTool(s, version, url, timeoutMs, transport) {
  const ft = s.frontendTool;
  const agent = await newAgent(version, url, s.text, s.initialState, transport);
  const params = s.tools ? { tools: s.tools } : {};
  const runs = [];
  const first = await runOnce(agent, params, timeoutMs);
  runs.push(first);
  const { problems: p1, callId } = frontendCallProblems(ft, first, agent, version);
  let problems = p1.map((x) => `run 1: ${x}`);
  const taskBefore = agent.state?.a2a?.task?.id;
  if (problems.length === 0) {
    agent.addMessage({ id: randomUUID(), role: 'tool', toolCallId: callId, content: ft.result });
    const before = assistantText(agent.messages);
    const second = await runOnce(agent, params, timeoutMs);
    runs.push(second);
    const after = assistantText(agent.messages);
    const added = after.startsWith(before) ? after.slice(before.length) : after;
    const p2 = judge({ answer: ft.answer }, second, [{ role: 'assistant', content: added }], version);
    if (!second.timedOut && !second.error) {
      const again = second.events.filter((e) => TOOL_CALL_STREAM.has(e.type) || e.type === 'TOOL_CALL_RESULT');
      if (again.length > 0) p2.push(`tool events in the answering run: ${again.map((e) => `${e.type}(${e.toolCallId})`).join(', ')}`);
      const toolMsgs = agent.messages.filter((m) => m.role === 'tool' && m.toolCallId === callId);
      if (toolMsgs.length !== 1) p2.push(`${toolMsgs.length} tool messages for ${callId}, want 1: ${JSON.stringify(toolMsgs)}`);
      const pending = finishedEvent(second)?.outcome?.pendingToolCallIds;
      if (version === '1.0.0' && pending?.length > 0) p2.push(`pendingToolCallIds ${JSON.stringify(pending)} after the answer`);
      if ((agent.pendingInterrupts ?? []).length > 0) p2.push(`pendingInterrupts ${JSON.stringify(agent.pendingInterrupts)}`);
      if (ft.state !== undefined) {
        p2.push(...stateProblems({ state: ft.state }, second, agent.state));
        const taskAfter = agent.state?.a2a?.task?.id;
        if (taskAfter !== taskBefore) p2.push(`state a2a.task.id ${JSON.stringify(taskAfter)} after the answer, want the same task as run 1 (${JSON.stringify(taskBefore)})`);
      }
    }
    problems = p2.map((x) => `run 2: ${x}`);
  }
  return { ok: problems.length === 0, problems, runs, messages: agent.messages };
}

/** Human-readable evidence for a failed scenario: event types and the raw SSE. */
export function evidence(result, maxLines = 60) {
  const out = [];
  result.runs.forEach((rec, i) => {
    const label = result.runs.length > 1 ? `run ${i + 1}: ` : '';
    out.push(`${label}events: ${rec.events.map((e) => e.type).join(' ') || '(none)'}`);
    for (const ex of rec.exchanges) {
      out.push(`${label}HTTP ${ex.status} ${ex.contentType} ${ex.url}`);
      const lines = ex.raw.split('\n').filter((l) => l.trim() !== '');
      for (const l of lines.slice(0, maxLines)) out.push(`  ${l.length > 500 ? l.slice(0, 500) + '…' : l}`);
      if (lines.length > maxLines) out.push(`  … ${lines.length - maxLines} more lines`);
    }
  });
  return out;
}
