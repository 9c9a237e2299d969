// What the console remembers in the browser. The list of threads is the
// bridge's (GET /agents/{name}/threads, per principal, so it follows the user
// to any browser); kept here are only what the bridge cannot say:
//  - what this browser sent in each run of a thread (the journal holds what
//    the agent said, not the user's words verbatim; without this record the
//    console places the user's messages from the thread's snapshot instead),
//    for at most MAX_RECORDED_THREADS threads, the least recently used
//    dropped first;
//  - the agent picked last, so a new tab opens on it;
//  - in sessionStorage, the tab's open thread and the last event id it saw,
//    so a reload picks up where the page was.

const SESSION = 'a2a-console:session';
const LAST_AGENT = 'a2a-console:agent';
const RECORDED = 'a2a-console:recorded'; // [[agent, threadId]…], most recent first
const runsKey = (agent, threadId) => `a2a-console:runs:${agent}:${threadId}`;
export const MAX_RECORDED_THREADS = 100;

// The list this console kept before the bridge had a thread list: no longer read.
const LEGACY_THREADS = 'a2a-console:threads';

function read(storage, key, fallback) {
  try {
    const v = JSON.parse(storage.getItem(key));
    return v ?? fallback;
  } catch {
    return fallback;
  }
}

function write(storage, key, value) {
  try {
    storage.setItem(key, JSON.stringify(value));
  } catch {
    // storage full or disabled: the console still works, it just forgets
  }
}

function remove(storage, key) {
  try {
    storage.removeItem(key);
  } catch {
    // storage disabled: nothing was kept
  }
}

// A record read back from storage is a plain object keyed by run id; JSON
// keys such as "__proto__" become own properties of it, never the
// prototype, and only values that are objects are used.
function isRecord(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// runs returns what this browser sent in each run of a thread:
// {runId: {user: [message], resume: [entry], toolResults: [message]}}.
export function runs(agent, threadId) {
  const all = read(localStorage, runsKey(agent, threadId), {});
  if (!isRecord(all)) return {};
  const out = Object.create(null);
  for (const [runId, sent] of Object.entries(all)) if (isRecord(sent)) out[runId] = sent;
  return out;
}

// touch puts the thread first among those with a record, and drops the
// records past MAX_RECORDED_THREADS.
function touch(agent, threadId) {
  const list = read(localStorage, RECORDED, []);
  const kept = (Array.isArray(list) ? list : []).filter((e) => Array.isArray(e) && e.length === 2 && !(e[0] === agent && e[1] === threadId));
  kept.unshift([agent, threadId]);
  for (const [a, t] of kept.splice(MAX_RECORDED_THREADS)) remove(localStorage, runsKey(a, t));
  write(localStorage, RECORDED, kept);
}

export function rememberRun(agent, threadId, runId, sent) {
  const all = { ...runs(agent, threadId), [runId]: sent };
  write(localStorage, runsKey(agent, threadId), all);
  touch(agent, threadId);
}

// forgetRun drops the record of a run the bridge refused (nothing of it
// reached the thread).
export function forgetRun(agent, threadId, runId) {
  const all = runs(agent, threadId);
  delete all[runId];
  if (Object.keys(all).length > 0) write(localStorage, runsKey(agent, threadId), all);
  else forgetThread(agent, threadId);
}

// forgetThread drops everything kept about a thread (it was deleted).
export function forgetThread(agent, threadId) {
  remove(localStorage, runsKey(agent, threadId));
  const list = read(localStorage, RECORDED, []);
  if (Array.isArray(list)) write(localStorage, RECORDED, list.filter((e) => !(Array.isArray(e) && e[0] === agent && e[1] === threadId)));
}

// lastAgent is the agent picked last in this browser ('' for none).
export function lastAgent() {
  const a = read(localStorage, LAST_AGENT, '');
  return typeof a === 'string' ? a : '';
}

export function saveLastAgent(agent) {
  write(localStorage, LAST_AGENT, agent);
}

// session is the tab's open agent and thread and the last event id it saw.
export function session() {
  const s = read(sessionStorage, SESSION, {});
  return isRecord(s) ? s : {};
}

export function saveSession(s) {
  write(sessionStorage, SESSION, s);
}

// dropLegacy removes the thread list older consoles kept here; the records
// of its threads' runs join the bounded list of records, so none is left
// behind unbounded.
export function dropLegacy() {
  const legacy = read(localStorage, LEGACY_THREADS, null);
  if (!isRecord(legacy)) return;
  const list = read(localStorage, RECORDED, []);
  const kept = Array.isArray(list) ? list : [];
  for (const [agent, threads] of Object.entries(legacy)) {
    for (const t of Array.isArray(threads) ? threads : []) {
      if (typeof t?.id === 'string' && !kept.some((e) => Array.isArray(e) && e[0] === agent && e[1] === t.id)) kept.push([agent, t.id]);
    }
  }
  for (const [a, t] of kept.splice(MAX_RECORDED_THREADS)) remove(localStorage, runsKey(a, t));
  write(localStorage, RECORDED, kept);
  remove(localStorage, LEGACY_THREADS);
}
