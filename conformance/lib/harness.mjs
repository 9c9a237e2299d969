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
import { format } from 'node:util';

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
 */
export async function runOnce(agent, params, timeoutMs) {
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
    },
    onRunErrorEvent: ({ event }) => {
      rec.terminal = { type: 'RUN_ERROR', code: event.code, message: event.message };
    },
    onRunFinishedEvent: (p) => {
      rec.finished = { outcome: p.outcome, interrupts: p.interrupts, result: p.result };
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
function genericProblems(rec) {
  const p = [];
  if (rec.timedOut) p.push(`timed out after ${rec.ms} ms (no terminal event)`);
  if (rec.error) p.push(`runAgent() rejected: ${oneLine(rec.error?.message ?? rec.error)}`);
  else if (rec.failed) p.push(`onRunFailed: ${oneLine(rec.failed?.message ?? rec.failed)}`);
  for (const ex of rec.exchanges) {
    if (ex.status < 200 || ex.status > 299) p.push(`HTTP ${ex.status} from ${ex.url}: ${ex.raw.slice(0, 300)}`);
  }
  for (const l of complaints(rec.consoleLines)) p.push(`console.${l.level}: ${l.text.split('\n')[0].slice(0, 400)}`);
  if (!rec.timedOut && !rec.error) {
    const types = rec.events.map((e) => e.type);
    const terminals = types.filter((t) => t === 'RUN_FINISHED' || t === 'RUN_ERROR');
    if (types[0] !== 'RUN_STARTED') p.push(`first event is ${types[0] ?? 'missing'}, not RUN_STARTED`);
    if (terminals.length === 0) p.push('stream ended without RUN_FINISHED or RUN_ERROR (the client accepts that silently)');
    else if (terminals.length > 1) p.push(`${terminals.length} terminal events: ${terminals.join(', ')}`);
    else if (types.at(-1) !== terminals[0]) p.push(`events after ${terminals[0]}: ${types.slice(types.indexOf(terminals[0]) + 1).join(', ')}`);
  }
  return p;
}

function describeTerminal(t) {
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
function toolApprovalProblems(ints, rec, messages, expect) {
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

/**
 * judge returns the list of problems of one run against expectation `expect`:
 *   {answer: "text"}                       RUN_FINISHED (not an interrupt), text exactly once
 *   {error: "code", message?: "substring"} RUN_ERROR with that code
 *   {interrupt: true, question?: "text",   interrupt outcome with an interrupt of reason `reason`
 *    reason?: "input_required",            (default input_required) whose message contains
 *    responseSchema?: {…},                 `question` and, if given, whose responseSchema is
 *    tool?: "name", args?: {…}}            exactly `responseSchema`; reason "tool_call" also
 *                                          needs toolApprovalProblems() to find nothing.
 *                                          0.0.36: a clean RUN_FINISHED.
 * `messages` is the agent's message list after the run, `version` the client generation.
 */
export function judge(expect, rec, messages, version) {
  const p = genericProblems(rec);
  if (rec.timedOut || rec.error) return p;
  const t = rec.terminal;
  const text = assistantText(messages);
  if (expect.answer !== undefined) {
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
      }
    }
    if (expect.question) {
      const n = countOccurrences(text, expect.question);
      if (n > 1) p.push(`question ${JSON.stringify(expect.question)} appears ${n} times in the assistant messages ${JSON.stringify(text)}`);
    }
  }
  return p;
}

/** A fresh HttpAgent on a fresh thread, with the user's message added. */
export async function newAgent(version, url, userText) {
  const { HttpAgent } = await loadClient(version);
  const agent = new HttpAgent({ url, threadId: randomUUID() });
  agent.addMessage({ id: randomUUID(), role: 'user', content: userText });
  return agent;
}

/**
 * resumeToolProblems checks the resumed run of a tool approval against the
 * tool_call interrupts it answered: no TOOL_CALL_START/ARGS/END/CHUNK again;
 * with `toolResult` true exactly one TOOL_CALL_RESULT per interrupted call, on
 * its toolCallId, containing `resultContains` if given, none for any other id,
 * and a tool message for it in the thread; with `toolResult` false (a denial)
 * no TOOL_CALL_RESULT at all.
 */
function resumeToolProblems(r, rec, messages, answered) {
  const p = [];
  const ids = answered.filter((i) => i.reason === 'tool_call').map((i) => i.toolCallId);
  const again = rec.events.filter((e) => TOOL_CALL_STREAM.has(e.type));
  if (again.length > 0) p.push(`tool call re-emitted: ${again.map((e) => `${e.type}(${e.toolCallId})`).join(', ')}`);
  const results = rec.events.filter((e) => e.type === 'TOOL_CALL_RESULT');
  if (!r.toolResult) {
    if (results.length > 0) p.push(`TOOL_CALL_RESULT after a denial: ${JSON.stringify(results)}`);
    return p;
  }
  for (const id of ids) {
    const mine = results.filter((e) => e.toolCallId === id);
    if (mine.length !== 1) p.push(`${mine.length} TOOL_CALL_RESULT for toolCallId ${JSON.stringify(id)}, want 1`);
    for (const e of mine) {
      const content = typeof e.content === 'string' ? e.content : JSON.stringify(e.content);
      if (r.resultContains && !content.includes(r.resultContains)) {
        p.push(`TOOL_CALL_RESULT content ${JSON.stringify(content)} does not contain ${JSON.stringify(r.resultContains)}`);
      }
    }
    if (!messages.some((m) => m.role === 'tool' && m.toolCallId === id)) p.push(`no tool message for ${JSON.stringify(id)} in the thread`);
  }
  const stray = results.filter((e) => !ids.includes(e.toolCallId));
  if (stray.length > 0) p.push(`TOOL_CALL_RESULT for unknown toolCallIds: ${stray.map((e) => e.toolCallId).join(', ')}`);
  return p;
}

/**
 * runScenario runs scenario `s` with client `version` against `url` and
 * returns {ok, problems, runs: [rec…], messages}. A scenario with `resume`
 * runs twice on the same thread: the first run must end in an interrupt
 * (judged as {interrupt: true, ...s.expect}), the second answers it with
 * resume[{interruptId, status: "resolved", payload}] and must produce
 * `resume.answer` exactly once; with `resume.toolResult` set it is also held
 * to resumeToolProblems().
 */
export async function runScenario(s, version, url, timeoutMs) {
  const agent = await newAgent(version, url, s.text);
  const runs = [];
  const first = await runOnce(agent, {}, timeoutMs);
  runs.push(first);
  const firstExpect = s.resume ? { interrupt: true, ...s.expect } : s.expect;
  let problems = judge(firstExpect, first, agent.messages, version);
  if (s.resume && problems.length === 0) {
    const pending = [...(agent.pendingInterrupts ?? first.terminal?.interrupts ?? [])];
    const resume = pending.map((i) => ({ interruptId: i.id, status: 'resolved', payload: s.resume.payload }));
    const before = assistantText(agent.messages);
    const second = await runOnce(agent, { resume }, timeoutMs);
    runs.push(second);
    // Count the answer in what the resumed run added (the thread keeps run 1's messages).
    const after = assistantText(agent.messages);
    const added = after.startsWith(before) ? after.slice(before.length) : after;
    problems = judge({ answer: s.resume.answer }, second, [{ role: 'assistant', content: added }], version);
    if (s.resume.toolResult !== undefined && !second.timedOut && !second.error) {
      problems.push(...resumeToolProblems(s.resume, second, agent.messages, pending));
    }
    problems = problems.map((x) => `resumed run: ${x}`);
    if ((agent.pendingInterrupts ?? []).length > 0) problems.push(`resumed run: pendingInterrupts still ${JSON.stringify(agent.pendingInterrupts)}`);
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
