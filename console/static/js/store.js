// What the console remembers in the browser. The bridge has no "list my
// threads" route, so the threads this browser started are kept here, per
// agent, with what each run sent (the journal holds what the agent said, not
// the user's words); the tab's open thread and the last event id it saw are
// kept in sessionStorage so a reload picks up where the page was.

const THREADS = 'a2a-console:threads';
const SESSION = 'a2a-console:session';
const runsKey = (agent, threadId) => `a2a-console:runs:${agent}:${threadId}`;
const MAX_THREADS_PER_AGENT = 50;

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

// threads returns this browser's threads with agent, newest first.
export function threads(agent) {
  return read(localStorage, THREADS, {})[agent] ?? [];
}

// rememberThread adds (or refreshes) a thread in the agent's list.
export function rememberThread(agent, threadId, title) {
  const all = read(localStorage, THREADS, {});
  const list = (all[agent] ?? []).filter((t) => t.id !== threadId);
  const old = (all[agent] ?? []).find((t) => t.id === threadId);
  list.unshift({ id: threadId, title: old?.title || title, createdAt: old?.createdAt ?? Date.now(), updatedAt: Date.now() });
  for (const dropped of list.splice(MAX_THREADS_PER_AGENT)) localStorage.removeItem(runsKey(agent, dropped.id));
  all[agent] = list;
  write(localStorage, THREADS, all);
}

// runs returns what this browser sent in each run of a thread:
// {runId: {user: [message], resume: [entry], toolResults: [message]}}.
export function runs(agent, threadId) {
  return read(localStorage, runsKey(agent, threadId), {});
}

export function rememberRun(agent, threadId, runId, sent) {
  const all = runs(agent, threadId);
  all[runId] = sent;
  write(localStorage, runsKey(agent, threadId), all);
}

// forgetRun drops the record of a run the bridge refused (nothing of it
// reached the thread), and the thread itself when that was its only run.
export function forgetRun(agent, threadId, runId) {
  const all = runs(agent, threadId);
  delete all[runId];
  if (Object.keys(all).length > 0) {
    write(localStorage, runsKey(agent, threadId), all);
    return;
  }
  localStorage.removeItem(runsKey(agent, threadId));
  const list = read(localStorage, THREADS, {});
  list[agent] = (list[agent] ?? []).filter((t) => t.id !== threadId);
  write(localStorage, THREADS, list);
}

// session is the tab's open agent and thread and the last event id it saw.
export function session() {
  return read(sessionStorage, SESSION, {});
}

export function saveSession(s) {
  write(sessionStorage, SESSION, s);
}
