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

/**
 * judge returns the list of problems of one run against expectation `expect`:
 *   {answer: "text"}                       RUN_FINISHED (not an interrupt), text exactly once
 *   {error: "code", message?: "substring"} RUN_ERROR with that code
 *   {interrupt: true, question?: "text"}   interrupt outcome with reason input_required
 *                                          (0.0.36: a clean RUN_FINISHED)
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
      const ints = t.interrupts ?? [];
      if (t.outcome !== 'interrupt') p.push(`expected outcome "interrupt", got ${describeTerminal(t)}`);
      else if (!ints.some((i) => i.reason === 'input_required')) {
        p.push(`no interrupt with reason "input_required" in ${JSON.stringify(ints)}`);
      } else if (expect.question && !ints.some((i) => String(i.message ?? '').includes(expect.question))) {
        p.push(`no interrupt message contains ${JSON.stringify(expect.question)}: ${JSON.stringify(ints)}`);
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
 * runScenario runs scenario `s` with client `version` against `url` and
 * returns {ok, problems, runs: [rec…], messages}. A scenario with `resume`
 * runs twice on the same thread: the first run must end in an interrupt,
 * the second answers it with resume[] and must produce `resume.answer`.
 */
export async function runScenario(s, version, url, timeoutMs) {
  const agent = await newAgent(version, url, s.text);
  const runs = [];
  const first = await runOnce(agent, {}, timeoutMs);
  runs.push(first);
  const firstExpect = s.resume ? { interrupt: true, question: s.expect.question } : s.expect;
  let problems = judge(firstExpect, first, agent.messages, version);
  if (s.resume && problems.length === 0) {
    const pending = agent.pendingInterrupts ?? first.terminal?.interrupts ?? [];
    const resume = pending.map((i) => ({ interruptId: i.id, status: 'resolved', payload: s.resume.payload }));
    const before = assistantText(agent.messages);
    const second = await runOnce(agent, { resume }, timeoutMs);
    runs.push(second);
    // Count the answer in what the resumed run added (the thread keeps run 1's messages).
    const after = assistantText(agent.messages);
    const added = after.startsWith(before) ? after.slice(before.length) : after;
    problems = judge({ answer: s.resume.answer }, second, [{ role: 'assistant', content: added }], version).map(
      (x) => `resumed run: ${x}`,
    );
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
