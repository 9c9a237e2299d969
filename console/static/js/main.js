// The console's controller: picks agents and threads, starts runs, follows
// them, and keeps the page drawn from one model per thread.
//
// Where the events come from: a run's own SSE stream (POST /agents/{name});
// the thread's journal (long poll, page until done) when a thread is opened
// or the page reloads; and the journal's SSE route, which replays after the
// last id seen and then follows the run in progress live. All three feed one
// function, onEnvelope, which drops what it already has by sequence number,
// so nothing is ever shown twice however the streams overlap.

import * as api from './api.js';
import * as store from './store.js';
import { apply, conversation, fold, newModel, userMessagesByRun } from './model.js';
import { renderDebugPanel, renderJSON, safeURL, Timeline } from './render.js';
import { interruptsForm } from './forms.js';
import { ThreadList } from './threadlist.js';
import { uuid } from './threads.js';
import { applyBackground, FRONTEND_TOOLS, toolHandlers } from './frontendtools.js';
import { renderAgentHeading as drawAgentHeading, renderAgentList } from './agents.js';

const $ = (id) => document.getElementById(id);

// How often follow() tries again while the bridge does not answer: about a
// minute, long enough for a restart.
const MAX_RECONNECTS = 25;

const app = {
  agents: [],
  agent: null, // selected agent's name
  threadId: null,
  model: newModel(),
  journal: [], // every journaled envelope of the open thread, in order
  sent: {}, // runId → what this browser sent in that run (store.runs)
  derived: new Map(), // runId → user messages placed from the thread snapshot
  live: null, // AbortController of the stream being read
  busy: false, // a run of the open thread is in progress
  travel: null, // the sequence number shown, or null for live
  travelModel: null,
  note: '', // a passing message under the composer
  loading: false, // a thread is being read from the bridge
  deleted: false, // the open thread was deleted (a stream ended with thread_deleted)
  openToken: 0, // bumped per thread opened: late answers for an older one are dropped
  executedTools: new Set(),
  shownInterrupts: '',
  stateShown: undefined,
  collapsed: new Set(),
  debugShown: -1,
};

// The thread list is the bridge's: the caller's threads with the agent.
const threadList = new ThreadList({ list: $('threads'), empty: $('threads-empty'), more: $('threads-more') }, {
  open: (threadId) => openThread(threadId),
  deleted: (threadId) => {
    if (threadId !== app.threadId) return;
    newThread();
    app.note = 'Deleted the thread. This is a new one.';
  },
});

const timeline = new Timeline($('timeline'), {
  agentName: null,
  // A button on an A2UI surface: the action goes to the agent in the next
  // run (forwardedProps.a2uiAction), in the form of the surface's version.
  onA2UIAction: (action, version) => {
    if (app.busy || !app.threadId) return;
    startRun({ a2uiAction: version === 'v0.8' ? { userAction: action } : { version, action } });
  },
});

const sentIn = (runId) => {
  const mine = app.sent[runId];
  const derived = app.derived.get(runId);
  if (!derived) return mine;
  const known = new Set((mine?.user ?? []).map((u) => u.id));
  return { ...mine, user: [...(mine?.user ?? []), ...derived.filter((u) => !known.has(u.id))] };
};

// ---------- drawing ----------

let frame = 0;
function scheduleRender() {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    render();
  });
}

function lastRunStatus(m) {
  let last = null;
  for (const r of m.runs.values()) last = r;
  return last;
}

function render() {
  const m = app.travel === null ? app.model : app.travelModel;
  timeline.ctx.agentName = app.agent;
  timeline.render(m);
  $('timeline').setAttribute('aria-busy', String(app.busy));
  $('empty').hidden = m.items.length > 0;
  $('empty').textContent = !app.agent
    ? 'Pick an agent on the left to start.'
    : app.loading
      ? 'Loading the thread from the bridge…'
      : `New thread with ${app.agent}. Say something to start.`;

  // State, redrawn only when it changed.
  const stateText = JSON.stringify(m.state);
  if (stateText !== app.stateShown) {
    app.stateShown = stateText;
    renderJSON($('state'), m.state, app.collapsed);
    $('state-version').textContent = m.stateVersion == null ? '' : `version ${m.stateVersion}`;
  }
  renderDebug(m);
  renderInterrupts();
  renderTravel();

  // Status line and controls.
  const status = $('run-status');
  const run = lastRunStatus(m);
  let state = 'idle';
  let text = '';
  if (app.travel !== null) {
    state = 'travel';
    text = `Viewing event #${app.travel}`;
  } else if (app.busy || m.activeRunId) {
    state = 'running';
    text = 'Running…';
  } else if (run) {
    state = run.status;
    text = run.code === 'thread_deleted'
      ? 'Thread deleted'
      : { finished: 'Finished', interrupted: 'Waiting for your answer', cancelled: 'Cancelled', error: `Failed: ${run.code ?? 'error'}` }[run.status] ?? run.status;
  }
  status.dataset.state = state;
  status.textContent = text;
  $('note').textContent = app.note;
  $('thread-id').textContent = app.threadId ?? '—';

  const canType = app.agent && app.travel === null && !app.busy && !app.deleted && app.model.interrupts.length === 0;
  $('message').disabled = !canType;
  $('send').disabled = !canType;
  $('message').placeholder = !app.agent
    ? 'Pick an agent first'
    : app.deleted
      ? 'This thread was deleted: start a new thread'
      : app.travel !== null
      ? 'Back to live to write'
      : app.model.interrupts.length > 0
        ? 'Answer the request above first (or cancel it)'
        : 'Message the agent — Enter to send, Shift+Enter for a new line';
  $('cancel-run').disabled = !(app.busy || app.model.activeRunId) || app.travel !== null;
  $('new-thread').disabled = !app.agent;
  applyBackground($('timeline'), m);
}

function renderDebug(m) {
  if (app.debugShown === m.version) return;
  app.debugShown = m.version;
  renderDebugPanel(m);
}

function renderInterrupts() {
  const box = $('interrupts');
  const m = app.model;
  const show = app.travel === null && !app.busy && m.interrupts.length > 0;
  const key = show ? m.interrupts.map((i) => i.id).join(',') : '';
  if (key === app.shownInterrupts) return;
  app.shownInterrupts = key;
  box.replaceChildren();
  if (!show) return;
  box.append(
    interruptsForm(m.interrupts, {
      toolCall: (id) => m.toolCalls.get(id),
      // A team's interrupts name the member that asks (1.0: subagentRunId).
      member: (it) => (it.subagentRunId ? m.subagents.get(it.subagentRunId)?.name ?? it.metadata?.a2a?.agent ?? null : null),
      onAnswer: (entries) => startRun({ resume: entries }),
      onCancel: () => startRun({ resume: m.interrupts.map((i) => ({ interruptId: i.id, status: 'cancelled' })) }),
    }),
  );
  box.querySelector('button, input, textarea, select')?.focus({ preventScroll: true });
}

function renderTravel() {
  const slider = $('travel');
  const max = app.journal.length ? app.journal[app.journal.length - 1].seq : 0;
  slider.max = String(max);
  slider.disabled = max === 0;
  const at = app.travel ?? max;
  if (Number(slider.value) !== at) slider.value = String(at);
  const env = app.journal.find((e) => e.seq === at);
  $('travel-label').textContent = max === 0 ? 'No events yet' : `#${at} of ${max}${env ? ` · ${env.event.type}` : ''}${app.travel === null ? ' · live' : ''}`;
  $('travel-banner').hidden = app.travel === null;
  $('travel-banner-text').textContent = app.travel === null ? '' : `You are looking at this thread as of event #${app.travel} of ${max}.`;
  $('travel-back').disabled = at <= 1;
  $('travel-forward').disabled = app.travel === null;
  $('travel-live').disabled = app.travel === null;
}

const renderAgents = () => renderAgentList($('agents'), app.agents, $('agent-filter').value, app.agent, selectAgent);
const renderAgentHeading = (info) => drawAgentHeading($('agent-heading'), info);

// ---------- events ----------

function onEnvelope(env) {
  if (api.isShutdownCut(env)) {
    // The run goes on in the next bridge process; follow() reconnects.
    app.note = 'The bridge is restarting: the run goes on, and this page reconnects when the bridge is back.';
    scheduleRender();
    return;
  }
  if (env.seq > 0 && env.seq <= app.model.lastSeq) return; // already have it
  if (env.seq > 0) app.journal.push(env);
  apply(app.model, env, sentIn);
  const e = env.event;
  // A thread's first run creates it on the bridge: list it.
  if (e.type === 'RUN_STARTED' && !threadList.has(app.threadId)) threadList.refresh();
  if (e.type === 'RUN_ERROR' && e.code === 'thread_deleted') {
    // Deleted while this page followed it (another tab, another browser):
    // the bridge has nothing of it any more, so nothing can be sent on it.
    app.deleted = true;
    app.note = 'This thread was deleted (in another tab or browser). Start a new thread to go on.';
    store.forgetThread(app.agent, app.threadId);
    threadList.remove(app.threadId);
  }
  if (env.seq > 0) saveSession();
  scheduleRender();
}

function saveSession() {
  store.saveSession({ agent: app.agent, threadId: app.threadId, lastSeq: app.model.lastSeq });
}

function setBusy(busy) {
  app.busy = busy;
  scheduleRender();
}

function stopLive() {
  app.live?.abort();
  app.live = null;
}

// follow reads the thread's journal after the last event shown, then the run
// in progress live, until the run ends. A stream cut before the run's end (a
// dropped connection, a bridge restart) is picked up again after the last id.
async function follow(token) {
  const ctrl = new AbortController();
  app.live = ctrl;
  setBusy(true);
  let failures = 0;
  try {
    while (token === app.openToken) {
      try {
        const { terminated } = await api.followThread(app.agent, app.threadId, app.model.lastSeq, onEnvelope, ctrl.signal);
        if (terminated || !app.model.activeRunId) {
          if (app.note.startsWith('The bridge is restarting')) app.note = 'Reconnected after the bridge restarted.';
          return;
        }
        failures = 0;
        // The journal ended without the run's end. If the bridge has no run
        // in progress any more, that end was never journaled (the bridge
        // said so only on the stream it cut): stop waiting for it.
        const view = await api.getThread(app.agent, app.threadId);
        if (token === app.openToken && view && !view.activeRunId) {
          apply(app.model, { seq: 0, event: { type: 'RUN_ERROR', code: 'internal', message: 'the run ended without a final event in the journal' } });
          app.note = 'The run ended without a final event in the journal.';
          return;
        }
      } catch (err) {
        if (err.name === 'AbortError') return;
        // A 4xx will not change by asking again; anything else may be a
        // bridge on its way back up.
        if ((err.status >= 400 && err.status < 500) || ++failures > MAX_RECONNECTS) {
          app.note = `Lost the run's stream: ${err.message}`;
          return;
        }
      }
      // Back off before reconnecting, so a bridge that is restarting is not hammered.
      await new Promise((r) => setTimeout(r, Math.min(500 * Math.max(failures, 1), 3000)));
    }
  } finally {
    if (token === app.openToken) {
      app.live = null;
      setBusy(false);
      afterRun(token);
    }
  }
}

// startRun sends one run on the open thread: a user message, answers to the
// pending interrupts, or the results of frontend tools.
async function startRun({ text, resume, toolResults, a2uiAction }) {
  const token = app.openToken;
  const runId = uuid();
  const user = text ? { id: uuid(), role: 'user', content: text } : null;
  const sent = { user: user ? [user] : [], resume: resume ?? [], toolResults: toolResults ?? [], ...(a2uiAction && { a2uiAction }) };
  const input = {
    threadId: app.threadId,
    runId,
    protocolVersion: '1.0',
    state: app.model.state ?? {},
    messages: [...conversation(app.model), ...(user ? [user] : []), ...sent.toolResults],
    tools: FRONTEND_TOOLS,
    context: [],
    forwardedProps: a2uiAction ? { a2uiAction } : {},
  };
  if (resume) input.resume = resume;
  app.sent[runId] = sent;
  store.rememberRun(app.agent, app.threadId, runId, sent);
  app.note = '';
  stopLive();
  const ctrl = new AbortController();
  app.live = ctrl;
  setBusy(true);
  let cut = false;
  try {
    const { terminated } = await api.startRun(app.agent, input, onEnvelope, ctrl.signal);
    cut = !terminated;
  } catch (err) {
    if (err.name === 'AbortError') return;
    if (err.code === 'thread_busy') {
      // Another tab (or client) has a run going on this thread: show it.
      delete app.sent[runId];
      store.forgetRun(app.agent, app.threadId, runId);
      app.note = 'A run is already in progress on this thread; following it.';
      if (text) $('message').value = text;
      cut = true;
    } else if (err.status > 0) {
      // Refused before the stream started: nothing reached the thread.
      delete app.sent[runId];
      store.forgetRun(app.agent, app.threadId, runId);
      app.note = `The bridge refused the run: ${err.code} — ${err.message}`;
      if (text) $('message').value = text;
    } else {
      cut = true; // the stream broke: the run goes on in the bridge
    }
  } finally {
    if (token === app.openToken && app.live === ctrl) {
      app.live = null;
      setBusy(false);
    }
  }
  if (token !== app.openToken) return;
  if (cut) {
    await follow(token);
    return;
  }
  afterRun(token);
}

// afterRun runs the frontend tools a finished run left to the page and sends
// their results in a new run, as an AG-UI client would.
function afterRun(token) {
  // The run changed the thread's status, message count and place in the list.
  threadList.refresh();
  const m = app.model;
  if (token !== app.openToken || app.busy || m.activeRunId || m.pendingToolCallIds.length === 0) return;
  const results = [];
  for (const id of m.pendingToolCallIds) {
    if (app.executedTools.has(id)) return;
    const call = m.toolCalls.get(id);
    const run = toolHandlers[call?.name];
    if (!run) {
      app.note = `The agent asked this page to run "${call?.name}", which it does not have.`;
      scheduleRender();
      return;
    }
    let args = {};
    try {
      args = JSON.parse(call.args || '{}');
    } catch {
      // a tool gets what it can
    }
    app.executedTools.add(id);
    results.push({ id: uuid(), role: 'tool', toolCallId: id, content: JSON.stringify(run(args)) });
  }
  startRun({ toolResults: results });
}

// ---------- agents and threads ----------

async function loadAgents() {
  try {
    app.agents = (await api.listAgents()).sort((a, b) => a.name.localeCompare(b.name));
    $('agents-error').hidden = true;
  } catch (err) {
    $('agents-error').hidden = false;
    $('agents-error-text').textContent = `Could not list the agents: ${err.message}`;
    app.agents = [];
  }
  renderAgents();
}

async function selectAgent(name, threadId = null) {
  if (app.agent === name && !threadId) return;
  if (app.agent !== name) threadList.setAgent(name);
  app.agent = name;
  store.saveLastAgent(name);
  renderAgents();
  renderAgentHeading(app.agents.find((a) => a.name === name) ?? { name });
  api.getAgent(name).then(
    (info) => app.agent === name && renderAgentHeading(info),
    () => {},
  );
  if (threadId) await openThread(threadId);
  else newThread();
}

function resetThread(threadId) {
  stopLive();
  app.openToken++;
  Object.assign(app, {
    threadId,
    model: newModel(),
    journal: [],
    sent: store.runs(app.agent, threadId),
    derived: new Map(),
    busy: false,
    loading: false,
    deleted: false,
    travel: null,
    travelModel: null,
    note: '',
    shownInterrupts: null,
    stateShown: undefined,
    debugShown: -1,
  });
  timeline.refresh(app.model);
  threadList.setCurrent(threadId);
}

function newThread() {
  const before = store.session();
  resetThread(`thread-${uuid()}`);
  store.saveSession({ ...before, agent: app.agent, threadId: app.threadId, lastSeq: 0 });
  scheduleRender();
  $('message').focus();
}

// openThread shows a thread from its journal: the snapshot for the user's
// messages, every journaled event (long poll, paged until done), then the
// run in progress, if any, followed live.
async function openThread(threadId) {
  const before = store.session();
  const seen = before.threadId === threadId ? before.lastSeq ?? 0 : 0;
  resetThread(threadId);
  const token = app.openToken;
  app.loading = true;
  saveSession();
  scheduleRender();
  try {
    const snapshot = await api.getThread(app.agent, threadId);
    if (token !== app.openToken) return;
    if (!snapshot) {
      // A new thread the tab had open before a reload says nothing; one
      // from the list that the bridge no longer has was deleted meanwhile.
      if (threadList.has(threadId)) {
        app.note = 'This thread is no longer on the bridge (deleted elsewhere?). This is a new thread.';
        threadList.remove(threadId);
        resetThread(`thread-${uuid()}`);
        saveSession();
      }
      scheduleRender();
      return;
    }
    const { events } = await api.readJournal(app.agent, threadId, 0);
    if (token !== app.openToken) return;
    app.derived = userMessagesByRun(snapshot.messages, events);
    for (const env of events) onEnvelope(env);
    app.loading = false;
    const head = app.model.lastSeq;
    if (seen > 0 && seen < head) app.note = `Reconnected: replayed the thread's ${head} events (this tab had seen up to #${seen}).`;
    else if (seen > 0) app.note = `Reconnected: replayed the thread's ${head} events.`;
    if (snapshot.activeRunId || app.model.activeRunId) await follow(token);
  } catch (err) {
    if (token === app.openToken) app.note = `Could not open the thread: ${err.message}`;
  } finally {
    if (token === app.openToken) app.loading = false;
  }
  scheduleRender();
}

// ---------- time travel ----------

// refreshJournal makes sure the slider covers the whole journal: anything
// journaled after the last event the page has (another tab's run, say) is
// fetched with the long poll and folded in.
async function refreshJournal() {
  if (!app.agent || !app.threadId || app.busy) return;
  const token = app.openToken;
  try {
    const { events } = await api.readJournal(app.agent, app.threadId, app.model.lastSeq);
    if (token === app.openToken) for (const env of events) onEnvelope(env);
  } catch {
    // a thread the bridge has not seen yet: nothing to fetch
  }
}

function travelTo(seq) {
  const max = app.journal.length ? app.journal[app.journal.length - 1].seq : 0;
  if (seq >= max || max === 0) {
    app.travel = null;
    app.travelModel = null;
  } else {
    app.travel = Math.max(0, seq);
    app.travelModel = fold(app.journal, sentIn, app.travel);
  }
  app.stateShown = undefined;
  timeline.refresh(app.travel === null ? app.model : app.travelModel);
  render();
}

// ---------- wiring ----------

$('composer').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const text = $('message').value.trim();
  if (!text || $('send').disabled) return;
  $('message').value = '';
  startRun({ text });
});
$('message').addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    $('composer').requestSubmit();
  }
});
$('cancel-run').addEventListener('click', async () => {
  $('cancel-run').disabled = true;
  try {
    const view = await api.cancelThread(app.agent, app.threadId);
    const c = view.cancel ?? {};
    app.note = c.refused
      ? `The agent refused to cancel: ${c.refused.code} — ${c.refused.message}`
      : c.waitingForTask
        ? 'Cancel requested; the bridge sends it as soon as the agent names its task.'
        : c.requested
          ? 'Cancel requested.'
          : 'Nothing left to cancel.';
  } catch (err) {
    app.note = `Cancel failed: ${err.message}`;
  }
  scheduleRender();
});
$('new-thread').addEventListener('click', () => newThread());
$('event-log').addEventListener('toggle', () => {
  app.debugShown = -1;
  scheduleRender();
});
$('agent-filter').addEventListener('input', renderAgents);
$('agents-retry').addEventListener('click', loadAgents);
// A bridge with auth answers 401 until the user gives a key: keep it for
// the tab and list the agents again with it.
$('token').value = api.getToken();
$('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  api.setToken($('token').value.trim());
  loadAgents();
  threadList.refresh();
});

const slider = $('travel');
slider.addEventListener('pointerdown', refreshJournal);
slider.addEventListener('focus', refreshJournal);
slider.addEventListener('input', () => travelTo(Number(slider.value)));
$('travel-back').addEventListener('click', () => travelTo((app.travel ?? Number(slider.max)) - 1));
$('travel-forward').addEventListener('click', () => travelTo((app.travel ?? Number(slider.max)) + 1));
$('travel-live').addEventListener('click', () => travelTo(Infinity));
$('travel-banner-live').addEventListener('click', () => travelTo(Infinity));

// A link an agent sent is only followed when its scheme is safe (render.js
// never writes others); this guards links inside the debug JSON too.
document.addEventListener('click', (ev) => {
  const a = ev.target.closest?.('a[href]');
  if (a && !safeURL(a.getAttribute('href')) && !a.getAttribute('href').startsWith('#')) ev.preventDefault();
});

async function main() {
  store.dropLegacy();
  await loadAgents();
  const s = store.session();
  const last = store.lastAgent();
  if (s.agent && app.agents.some((a) => a.name === s.agent)) {
    await selectAgent(s.agent, s.threadId || null);
  } else if (last && app.agents.some((a) => a.name === last)) {
    await selectAgent(last);
  } else {
    render();
  }
}

main();
