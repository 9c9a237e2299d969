// The conversation as the console shows it, built by folding AG-UI events in
// journal order. The same fold serves the live stream, the rebuild after a
// reload and the time-travel slider (fold a prefix of the journal), so what
// the page shows at event n is exactly what it showed live at event n.
//
// A model is a timeline of items (user messages, assistant text, reasoning,
// tool calls, steps, files, sub-agents, run ends) plus the shared state, the
// pending interrupts and a debug log. Every mutation bumps the item's `v`, so
// the renderer redraws only what changed.

import { applyPatch } from './jsonpatch.js';
import { surfaceIdOf } from './a2ui.js';

export const SERVER_EXECUTION_KEY = 'ag-ui:tool-execution';
const TERMINAL = new Set(['RUN_FINISHED', 'RUN_ERROR']);
const MESSAGE_KINDS = new Set(['user', 'text', 'reasoning', 'tool', 'resume']);

export function newModel() {
  return {
    items: [],
    messages: new Map(), // message id → user/text/reasoning/file/activity item
    toolCalls: new Map(), // tool call id → tool item
    subagents: new Map(), // subagentRunId → {name, description, status}
    runs: new Map(), // runId → {status, startSeq, endSeq}
    activeRunId: null,
    interrupts: [], // pending: from the last run that ended with an interrupt
    pendingToolCallIds: [], // frontend tool calls the last run left to the page
    state: {},
    stateVersion: null,
    debug: [], // CUSTOM, RAW, patch failures, unknown events
    events: [], // {seq, type} of every event folded, for the event log
    lastSeq: 0,
    version: 0,
  };
}

const touch = (m, item) => {
  item.v = (item.v ?? 0) + 1;
  m.version++;
};

function push(m, item) {
  m.items.push(item);
  touch(m, item);
  return item;
}

// insertAfter places item right after `prev` and the non-message items of
// prev's run that follow it (its steps and run end), or first when prev is
// null. MESSAGES_SNAPSHOT uses it to put a message it brings where the
// conversation has it.
function insertAfter(m, prev, item) {
  let i = prev ? m.items.indexOf(prev) + 1 : 0;
  if (prev) {
    while (i < m.items.length && !MESSAGE_KINDS.has(m.items[i].kind) && m.items[i].runId === prev.runId) i++;
  }
  m.items.splice(i, 0, item);
  touch(m, item);
  return item;
}

function debug(m, seq, kind, name, value) {
  m.debug.push({ seq, kind, name, value });
  m.version++;
}

function textItem(m, id, role, extra = {}) {
  let item = m.messages.get(id);
  if (item) {
    // AG-UI appends to a message whose id is reused.
    item.open = true;
    touch(m, item);
    return item;
  }
  item = push(m, { kind: 'text', id, role: role ?? 'assistant', content: '', open: true, runId: m.activeRunId, toolCalls: [], ...extra });
  m.messages.set(id, item);
  return item;
}

function reasoningItem(m, id, extra = {}) {
  let item = m.messages.get(id);
  if (!item) {
    item = push(m, { kind: 'reasoning', id, content: '', open: true, runId: m.activeRunId, ...extra });
    m.messages.set(id, item);
  }
  return item;
}

function toolItem(m, id, fields) {
  let item = m.toolCalls.get(id);
  if (!item) {
    item = push(m, { kind: 'tool', id, name: '', args: '', result: null, open: true, execution: 'frontend', runId: m.activeRunId, ...fields });
    m.toolCalls.set(id, item);
    const parent = fields.parentMessageId && m.messages.get(fields.parentMessageId);
    if (parent?.kind === 'text') parent.toolCalls.push(id);
  }
  return item;
}

function userItem(m, msg, runId) {
  if (m.messages.has(msg.id)) return m.messages.get(msg.id);
  const item = push(m, { kind: 'user', id: msg.id, content: msg.content, runId });
  m.messages.set(msg.id, item);
  return item;
}

// closeOpen marks whatever is still streaming as done (a run that ended or
// was cut leaves nothing "typing").
function closeOpen(m) {
  for (const item of m.items) {
    if (item.open) {
      item.open = false;
      touch(m, item);
    }
    if (item.kind === 'steps') {
      for (const s of item.steps) if (s.status === 'running') s.status = 'cut';
    }
  }
}

function fileFrom(content) {
  return { url: content?.url, mediaType: content?.mediaType ?? '', name: content?.name ?? '', size: content?.size, omitted: content?.omitted };
}

// apply folds one envelope {seq, runId, event} into m. `sent` answers what
// this browser sent in a run (sent(runId) → {user, resume, toolResults}), so
// a rebuilt conversation shows the user's side too.
export function apply(m, env, sent = () => null) {
  const e = env.event;
  const seq = env.seq ?? 0;
  if (seq > 0) {
    if (seq <= m.lastSeq) return false; // already folded (a replay overlapping the live stream)
    m.lastSeq = seq;
  }
  m.events.push({ seq, type: e.type });
  m.version++;
  const sub = e.subagentRunId;
  const attrib = sub ? { subagentRunId: sub } : {};
  if (e.type === 'RUN_STARTED' || e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR') {
    // A tool call's status (running, awaiting approval, left to the page)
    // depends on the run around it: redraw them all when a run starts or ends.
    for (const t of m.toolCalls.values()) touch(m, t);
  }
  switch (e.type) {
    case 'RUN_STARTED': {
      const runId = e.runId;
      m.runs.set(runId, { status: 'running', startSeq: seq });
      m.activeRunId = runId;
      const mine = sent(runId);
      for (const u of mine?.user ?? []) userItem(m, u, runId);
      if (mine?.resume?.length) push(m, { kind: 'resume', id: `resume:${runId}`, runId, entries: mine.resume, interrupts: m.interrupts });
      if (mine?.a2uiAction) push(m, { kind: 'a2ui-action', id: `a2ui-action:${runId}`, runId, action: mine.a2uiAction });
      for (const r of mine?.toolResults ?? []) {
        const t = m.toolCalls.get(r.toolCallId);
        if (t && t.result == null) {
          t.result = r.content;
          t.resultMessageId = r.id;
          t.resultBy = 'console';
          touch(m, t);
        }
      }
      break;
    }
    case 'RUN_FINISHED':
    case 'RUN_ERROR': {
      const runId = e.runId ?? m.activeRunId;
      const run = m.runs.get(runId) ?? {};
      let status;
      if (e.type === 'RUN_ERROR') status = e.code === 'cancelled' ? 'cancelled' : 'error';
      else status = e.outcome?.type === 'interrupt' ? 'interrupted' : e.outcome?.type === 'cancelled' ? 'cancelled' : 'finished';
      Object.assign(run, { status, endSeq: seq, code: e.code, message: e.message });
      m.runs.set(runId, run);
      closeOpen(m);
      if (status === 'interrupted') m.interrupts = e.outcome.interrupts ?? [];
      else if (e.type === 'RUN_FINISHED') m.interrupts = [];
      m.pendingToolCallIds = status === 'finished' ? pendingToolCalls(m, runId, e.outcome) : [];
      push(m, { kind: 'run-end', id: `end:${runId}:${seq}`, runId, status, code: e.code, message: e.message, interrupts: status === 'interrupted' ? m.interrupts : [] });
      m.activeRunId = null;
      break;
    }
    case 'STEP_STARTED': {
      const last = m.items[m.items.length - 1];
      const group = last?.kind === 'steps' && last.subagentRunId === sub && last.runId === m.activeRunId
        ? last
        : push(m, { kind: 'steps', steps: [], runId: m.activeRunId, ...attrib });
      group.steps.push({ name: e.stepName, status: 'running' });
      touch(m, group);
      break;
    }
    case 'STEP_FINISHED': {
      for (let i = m.items.length - 1; i >= 0; i--) {
        const it = m.items[i];
        const step = it.kind === 'steps' && it.subagentRunId === sub && it.steps.find((s) => s.name === e.stepName && s.status === 'running');
        if (step) {
          step.status = 'done';
          touch(m, it);
          break;
        }
      }
      break;
    }
    case 'TEXT_MESSAGE_START':
      textItem(m, e.messageId, e.role, { name: e.name, ...attrib });
      break;
    case 'TEXT_MESSAGE_CONTENT':
    case 'TEXT_MESSAGE_CHUNK': {
      if (!e.messageId) break;
      const item = m.messages.get(e.messageId) ?? textItem(m, e.messageId, e.role, { name: e.name, ...attrib });
      if (e.delta) item.content += e.delta;
      touch(m, item);
      break;
    }
    case 'TEXT_MESSAGE_END': {
      const item = m.messages.get(e.messageId);
      if (item) {
        item.open = false;
        touch(m, item);
      }
      break;
    }
    case 'TOOL_CALL_START':
    case 'TOOL_CALL_CHUNK': {
      if (!e.toolCallId) break;
      const item = toolItem(m, e.toolCallId, {
        name: e.toolCallName ?? '',
        parentMessageId: e.parentMessageId,
        execution: e.metadata?.[SERVER_EXECUTION_KEY] === 'server' ? 'server' : 'frontend',
        ...attrib,
      });
      if (e.type === 'TOOL_CALL_CHUNK' && e.delta) item.args += e.delta;
      touch(m, item);
      break;
    }
    case 'TOOL_CALL_ARGS': {
      const item = m.toolCalls.get(e.toolCallId);
      if (item) {
        item.args += e.delta ?? '';
        touch(m, item);
      }
      break;
    }
    case 'TOOL_CALL_END': {
      const item = m.toolCalls.get(e.toolCallId);
      if (item) {
        item.open = false;
        touch(m, item);
      }
      break;
    }
    case 'TOOL_CALL_RESULT': {
      const item = m.toolCalls.get(e.toolCallId) ?? toolItem(m, e.toolCallId, { name: '', open: false, ...attrib });
      item.result = typeof e.content === 'string' ? e.content : JSON.stringify(e.content);
      item.resultMessageId = e.messageId;
      item.resultBy = e.metadata?.[SERVER_EXECUTION_KEY] === 'server' ? 'server' : item.execution;
      item.open = false;
      touch(m, item);
      break;
    }
    case 'REASONING_MESSAGE_START':
      reasoningItem(m, e.messageId, attrib);
      break;
    case 'REASONING_MESSAGE_CONTENT':
    case 'REASONING_MESSAGE_CHUNK': {
      if (!e.messageId) break;
      const item = reasoningItem(m, e.messageId, attrib);
      if (e.delta) item.content += e.delta;
      touch(m, item);
      break;
    }
    case 'REASONING_MESSAGE_END': {
      const item = m.messages.get(e.messageId);
      if (item) {
        item.open = false;
        touch(m, item);
      }
      break;
    }
    case 'REASONING_START':
    case 'REASONING_END':
      break; // a span around reasoning messages: nothing of its own to show
    case 'STATE_SNAPSHOT':
      m.state = structuredClone(e.snapshot ?? null);
      m.stateVersion = e.metadata?.['a2a-bridge']?.stateVersion ?? m.stateVersion;
      break;
    case 'STATE_DELTA':
      try {
        m.state = applyPatch(m.state, e.delta);
        m.stateVersion = e.metadata?.['a2a-bridge']?.stateVersion ?? m.stateVersion;
      } catch (err) {
        // As AG-UI clients do: keep the old state and go on; the next
        // run's STATE_SNAPSHOT makes the state whole again.
        debug(m, seq, 'warning', 'STATE_DELTA not applied', { error: err.message, delta: e.delta });
      }
      break;
    case 'MESSAGES_SNAPSHOT':
      reconcile(m, e.messages ?? []);
      break;
    case 'ACTIVITY_SNAPSHOT':
      activity(m, e.messageId, e.activityType, e.content, e.replace !== false, attrib);
      break;
    case 'ACTIVITY_DELTA': {
      const item = m.messages.get(e.messageId);
      if (!item || (item.kind !== 'file' && item.kind !== 'activity')) break;
      try {
        item.content = applyPatch(item.content, e.patch);
        if (item.kind === 'file') item.file = fileFrom(item.content);
        if (item.activityType === A2UI_ACTIVITY) noteSurfaces(m, item);
        touch(m, item);
      } catch (err) {
        debug(m, seq, 'warning', 'ACTIVITY_DELTA not applied', { error: err.message, patch: e.patch });
      }
      break;
    }
    case 'CUSTOM':
      debug(m, seq, 'custom', e.name, e.value);
      if (e.name === 'a2a.route') {
        push(m, { kind: 'route', id: `route:${seq}`, runId: m.activeRunId, value: e.value ?? {}, ...attrib });
      } else if (e.name === 'a2ui' && e.value?.activityId) {
        // Clients before 1.0 get a surface's operations as CUSTOM a2ui
        // events; a thread started by one renders them too.
        const item = m.messages.get(e.value.activityId);
        const ops = Array.isArray(e.value.operations) ? e.value.operations : [];
        if (item?.activityType === A2UI_ACTIVITY) {
          item.content = { operations: [...(item.content.operations ?? []), ...ops] };
          noteSurfaces(m, item);
          touch(m, item);
        } else {
          activity(m, e.value.activityId, A2UI_ACTIVITY, { operations: ops }, true, attrib);
        }
      } else if (e.name === 'a2a.file') {
        // Older clients get files as CUSTOM; a thread started by one shows them too.
        activity(m, `file:${seq}`, 'a2a.file', e.value, true, attrib);
      } else if (e.name === 'a2a.reasoning' && e.value?.text) {
        const item = reasoningItem(m, `reasoning:${seq}`, attrib);
        item.content = e.value.text;
        item.open = false;
        touch(m, item);
      }
      break;
    case 'RAW':
      debug(m, seq, 'raw', e.source ?? 'RAW', e.event);
      break;
    case 'SUBAGENT_STARTED': {
      m.subagents.set(e.subagentRunId, { name: e.name, description: e.description, status: 'running' });
      push(m, { kind: 'subagent', id: `sub:${e.subagentRunId}`, runId: m.activeRunId, subagentRunId: e.subagentRunId, name: e.name, description: e.description, status: 'running', parentSubagentRunId: e.parentSubagentRunId });
      break;
    }
    case 'SUBAGENT_FINISHED':
    case 'SUBAGENT_ERROR': {
      const info = m.subagents.get(e.subagentRunId) ?? { name: e.subagentRunId };
      info.status = e.type === 'SUBAGENT_ERROR' ? 'error' : e.outcome?.type === 'suspended' ? 'suspended' : 'finished';
      m.subagents.set(e.subagentRunId, info);
      const item = m.items.find((it) => it.kind === 'subagent' && it.subagentRunId === e.subagentRunId);
      const fields = { status: info.status, message: e.message, code: e.code };
      if (item) {
        Object.assign(item, fields);
        touch(m, item);
      } else {
        push(m, { kind: 'subagent', id: `sub:${e.subagentRunId}`, runId: m.activeRunId, subagentRunId: e.subagentRunId, name: info.name, ...fields });
      }
      break;
    }
    default:
      debug(m, seq, 'unknown', e.type, e);
  }
  return true;
}

function activity(m, id, activityType, content, replace, attrib) {
  let item = m.messages.get(id);
  if (item && !replace) return;
  const kind = activityType === 'a2a.file' ? 'file' : 'activity';
  if (!item) {
    item = push(m, { kind, id, runId: m.activeRunId, ...attrib });
    m.messages.set(id, item);
  }
  Object.assign(item, { kind, activityType, content: structuredClone(content ?? {}) });
  if (kind === 'file') item.file = fileFrom(item.content);
  if (activityType === A2UI_ACTIVITY) noteSurfaces(m, item);
  touch(m, item);
}

export const A2UI_ACTIVITY = 'a2ui-surface';

// noteSurfaces records the surfaces an A2UI activity addresses; an earlier
// activity of one of them (a surface an agent continues in a later run) is
// superseded: it still shows, but only the latest takes actions.
function noteSurfaces(m, item) {
  item.surfaceIds = [...new Set((item.content?.operations ?? []).map(surfaceIdOf).filter(Boolean))];
  for (const other of m.items) {
    if (other === item || other.activityType !== A2UI_ACTIVITY || other.supersededBy) continue;
    if (m.items.indexOf(other) > m.items.indexOf(item)) continue;
    if ((other.surfaceIds ?? []).some((id) => item.surfaceIds.includes(id))) {
      other.supersededBy = item.id;
      touch(m, other);
    }
  }
}

// surfaceOperations are the operations an A2UI activity renders: its own,
// after those of the earlier activities of the same surface when it
// continues one (an update in a later run, without createSurface).
export function surfaceOperations(m, item) {
  const own = item.content?.operations ?? [];
  const opens = (op) => op?.createSurface || op?.beginRendering;
  const ids = item.surfaceIds ?? [];
  if (ids.length === 0 || own.some(opens)) return own;
  const before = [];
  for (const other of m.items) {
    if (other === item) break;
    if (other.activityType !== A2UI_ACTIVITY) continue;
    for (const op of other.content?.operations ?? []) {
      if (!ids.includes(surfaceIdOf(op))) continue;
      if (op.deleteSurface) before.length = 0;
      else before.push(op);
    }
  }
  return [...before, ...own];
}

// pendingToolCalls is what a finished run left for the page to execute:
// the outcome's list (1.0), or, as clients derive it, the frontend tool
// calls of the run without a result.
function pendingToolCalls(m, runId, outcome) {
  if (outcome?.pendingToolCallIds?.length) return [...outcome.pendingToolCallIds];
  return m.items.filter((it) => it.kind === 'tool' && it.runId === runId && it.execution === 'frontend' && it.result == null).map((it) => it.id);
}

// reconcile merges a MESSAGES_SNAPSHOT: messages the model lacks are put
// where the snapshot has them; text the model holds is corrected if it
// differs (the snapshot is the bridge's record). Unlike the AG-UI client the
// console never deletes what it showed: it is a debugger, and the journal is
// the whole truth.
function reconcile(m, messages) {
  let prev = null;
  for (const msg of messages) {
    if (msg.role === 'activity' || msg.role === 'reasoning') continue;
    if (msg.role === 'tool') {
      let t = m.toolCalls.get(msg.toolCallId);
      if (!t) {
        t = insertAfter(m, prev, { kind: 'tool', id: msg.toolCallId, name: '', args: '', result: null, open: false, execution: 'frontend', runId: prev?.runId });
        m.toolCalls.set(msg.toolCallId, t);
      }
      if (t.result == null) {
        t.result = typeof msg.content === 'string' ? msg.content : JSON.stringify(msg.content);
        t.resultMessageId = msg.id;
        touch(m, t);
      }
      prev = t;
      continue;
    }
    let item = m.messages.get(msg.id);
    const content = typeof msg.content === 'string' ? msg.content : contentText(msg.content);
    if (!item) {
      const kind = msg.role === 'user' ? 'user' : 'text';
      // A member's message keeps its attribution (name, 1.0 subagentRunId).
      const attrib = { ...(msg.name && { name: msg.name }), ...(msg.subagentRunId && { subagentRunId: msg.subagentRunId }) };
      item = insertAfter(m, prev, { kind, id: msg.id, role: msg.role, content: content ?? '', open: false, runId: prev?.runId, toolCalls: [], ...attrib });
      m.messages.set(msg.id, item);
    } else if (item.kind === 'text' && !item.open && content != null && item.content !== content) {
      item.content = content;
      touch(m, item);
    }
    prev = item;
    for (const tc of msg.toolCalls ?? []) {
      let t = m.toolCalls.get(tc.id);
      if (!t) {
        t = insertAfter(m, prev, { kind: 'tool', id: tc.id, name: tc.function?.name ?? '', args: tc.function?.arguments ?? '', result: null, open: false, execution: 'frontend', parentMessageId: msg.id, runId: item.runId });
        m.toolCalls.set(tc.id, t);
        if (item.kind === 'text' && !item.toolCalls.includes(tc.id)) item.toolCalls.push(tc.id);
      }
      prev = t;
    }
  }
}

// contentText is the text of a content-part array (user messages may carry
// parts); media parts are named, not shown.
export function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  return content.map((p) => (p.type === 'text' ? p.text : `[${p.type}]`)).join('\n');
}

export const isTerminal = (type) => TERMINAL.has(type);

// conversation is the model as AG-UI messages, for the next run's input:
// what an AG-UI client holds, minus activity and reasoning messages (the
// bridge keeps neither in the thread).
export function conversation(m) {
  const out = [];
  const assistants = new Map();
  const assistantFor = (id) => {
    let a = assistants.get(id);
    if (!a) {
      a = { id, role: 'assistant' };
      assistants.set(id, a);
      out.push(a);
    }
    return a;
  };
  for (const it of m.items) {
    if (it.kind === 'user') {
      out.push({ id: it.id, role: 'user', content: it.content });
    } else if (it.kind === 'text') {
      const a = assistantFor(it.id);
      if (it.role && it.role !== 'assistant') a.role = it.role;
      if (it.content) a.content = it.content;
      // A team member's message goes back attributed, as a 1.0 client keeps it.
      if (it.name) a.name = it.name;
      if (it.subagentRunId) a.subagentRunId = it.subagentRunId;
    } else if (it.kind === 'tool' && it.name) {
      const a = assistantFor(it.parentMessageId ?? it.id);
      (a.toolCalls ??= []).push({ id: it.id, type: 'function', function: { name: it.name, arguments: it.args || '{}' } });
      if (it.result != null && it.resultMessageId) out.push({ id: it.resultMessageId, role: 'tool', toolCallId: it.id, content: it.result });
    }
  }
  return out;
}

// userMessagesByRun works out which run each user message of a thread
// snapshot started, for a thread this browser did not start (or whose record
// it lost): a user message belongs to the run that produced the next message
// the journal shows; the rest belong to the last run.
export function userMessagesByRun(snapshotMessages, envelopes) {
  const runOf = new Map();
  let lastRun = null;
  for (const env of envelopes) {
    const e = env.event;
    if (e.type === 'RUN_STARTED') lastRun = e.runId;
    const id = e.messageId ?? e.toolCallId;
    if (id && !runOf.has(id)) runOf.set(id, env.runId ?? lastRun);
  }
  const byRun = new Map();
  let pending = [];
  const attach = (runId) => {
    if (!runId || pending.length === 0) return;
    byRun.set(runId, [...(byRun.get(runId) ?? []), ...pending]);
    pending = [];
  };
  for (const msg of snapshotMessages ?? []) {
    if (msg.role === 'user') {
      pending.push({ id: msg.id, role: 'user', content: contentText(msg.content) ?? '' });
      continue;
    }
    attach(runOf.get(msg.id) ?? runOf.get(msg.toolCallId) ?? (msg.toolCalls ?? []).map((tc) => runOf.get(tc.id)).find(Boolean));
  }
  attach(lastRun);
  return byRun;
}

// fold builds a model from envelopes, up to and including sequence number
// `upTo` (all of them when it is omitted).
export function fold(envelopes, sent, upTo = Infinity) {
  const m = newModel();
  for (const env of envelopes) {
    if (env.seq > upTo) break;
    apply(m, env, sent);
  }
  return m;
}
