// The bridge's public HTTP routes, and nothing else: the console is a client
// like any other. URLs are relative to the page, so the console keeps working
// when the bridge sits under a path prefix behind a proxy.

import { readSSE } from './sse.js';

// BridgeError is an answer in the bridge's error shape {"error":{code,message}}
// (or a network failure, with status 0).
export class BridgeError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'BridgeError';
    this.status = status;
    this.code = code;
  }
}

const url = (...parts) => new URL(parts.map(encodeURIComponent).join('/'), document.baseURI);
const agentURL = (agent, ...rest) => url('agents', agent, ...rest);
const threadURL = (agent, threadId, ...rest) => agentURL(agent, 'threads', threadId, ...rest);

async function errorFrom(res) {
  let code = `http_${res.status}`;
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    if (body?.error) ({ code, message } = body.error);
  } catch {
    // not the bridge's JSON: keep the status line
  }
  return new BridgeError(res.status, code, message);
}

// The bearer credential (API key or JWT) for a bridge with auth on. It lives
// in sessionStorage: gone with the tab, never in a URL or a cookie.
const TOKEN_KEY = 'a2a-bridge.token';
// Where storage is disabled the key is kept here, until the page reloads.
let tokenInMemory = '';

export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? '';
  } catch {
    return tokenInMemory;
  }
}

export function setToken(token) {
  tokenInMemory = token;
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // storage disabled: tokenInMemory serves until the page reloads
  }
}

function withToken(init) {
  const token = getToken();
  return token ? { ...init, headers: { ...init.headers, Authorization: `Bearer ${token}` } } : init;
}

async function request(u, init = {}) {
  let res;
  try {
    res = await fetch(u, withToken(init));
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new BridgeError(0, 'network', `the bridge did not answer (${err.message})`);
  }
  if (!res.ok) throw await errorFrom(res);
  return res;
}

const getJSON = async (u, init) => (await request(u, { ...init, headers: { Accept: 'application/json', ...init?.headers } })).json();

// listAgents: GET /agents.
export async function listAgents() {
  return (await getJSON(url('agents'))).agents ?? [];
}

// getAgent: GET /agents/{name}, the agent's AG-UI capabilities.
export function getAgent(name) {
  return getJSON(agentURL(name));
}

// getThread: GET /agents/{name}/threads/{id}; null for a thread the bridge
// has not seen (it is created by its first run).
export async function getThread(agent, threadId) {
  try {
    return await getJSON(threadURL(agent, threadId));
  } catch (err) {
    if (err.status === 404 && err.code === 'unknown_thread') return null;
    throw err;
  }
}

// listThreads: GET /agents/{name}/threads, one page of the caller's own
// threads with the agent, newest activity first ({threads, nextCursor}).
export function listThreads(agent, { limit, cursor } = {}) {
  const u = agentURL(agent, 'threads');
  if (limit) u.searchParams.set('limit', String(limit));
  if (cursor) u.searchParams.set('cursor', cursor);
  return getJSON(u);
}

// deleteThread: DELETE /agents/{name}/threads/{id}. The bridge cancels a
// run in progress and answers 204, for a thread it no longer has too.
export async function deleteThread(agent, threadId) {
  await request(threadURL(agent, threadId), { method: 'DELETE' });
}

// cancelThread: POST /agents/{name}/threads/{id}/cancel.
export async function cancelThread(agent, threadId) {
  return (await request(threadURL(agent, threadId, 'cancel'), { method: 'POST' })).json();
}

// pollJournal: one long-poll answer {events: [envelope…], next, done}.
export function pollJournal(agent, threadId, after, wait = 0) {
  const u = threadURL(agent, threadId, 'events');
  u.searchParams.set('after', String(after));
  if (wait > 0) u.searchParams.set('wait', String(wait));
  return getJSON(u);
}

// readJournal pages through the journal after `after` with the long poll
// until the thread is at rest (done) or a run in progress has nothing more
// yet; it returns the envelopes and whether the thread is at rest.
export async function readJournal(agent, threadId, after = 0) {
  const events = [];
  for (;;) {
    const page = await pollJournal(agent, threadId, after);
    events.push(...page.events);
    if (page.done || page.events.length === 0) return { events, done: page.done, next: page.next };
    after = page.next;
  }
}

// isShutdownCut tells the RUN_ERROR a stopping bridge ends open streams
// with: it is not journaled (no id), and the run is not over — the next
// bridge process takes it over, and its journal has the rest.
export function isShutdownCut(env) {
  return env.seq === 0 && env.event.type === 'RUN_ERROR' && env.event.code === 'server_shutdown';
}

// streamEnvelopes reads an SSE response of the bridge into envelopes
// {seq, runId, event}: seq is the frame's id (0 for the few events the
// journal does not hold), runId the run the event belongs to.
async function streamEnvelopes(res, onEnvelope) {
  let runId = null;
  let terminated = false;
  await readSSE(res.body, (frame) => {
    let event;
    try {
      event = JSON.parse(frame.data);
    } catch {
      return; // not JSON: nothing a client can apply
    }
    const seq = frame.id ? Number(frame.id) : 0;
    if (event.type === 'RUN_STARTED') runId = event.runId;
    terminated = (event.type === 'RUN_FINISHED' || event.type === 'RUN_ERROR') && !isShutdownCut({ seq, event });
    onEnvelope({ seq, runId, event });
  });
  return { terminated };
}

// startRun POSTs a RunAgentInput and reads the run's SSE stream. It resolves
// {terminated}: whether the stream ended with its terminal event (a stream
// cut before it is to be resumed from the journal).
export async function startRun(agent, input, onEnvelope, signal) {
  const res = await request(agentURL(agent), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(input),
    signal,
  });
  return streamEnvelopes(res, onEnvelope);
}

// followThread reads the thread's journal after `after` as SSE, then the run
// in progress live until it ends.
export async function followThread(agent, threadId, after, onEnvelope, signal) {
  const res = await request(threadURL(agent, threadId, 'events'), {
    headers: { Accept: 'text/event-stream', 'Last-Event-ID': String(after) },
    signal,
  });
  return streamEnvelopes(res, onEnvelope);
}
