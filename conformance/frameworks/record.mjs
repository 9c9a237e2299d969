// Records what the framework agents (adk.mjs, mastra.mjs) send on the wire,
// talking to them directly as an A2A client would (no bridge), one file per
// scenario:
//
//   node conformance/frameworks/record.mjs [--out DIR]   (default conformance/agents/recordings)
//
// Each <framework>-<scenario>.jsonl holds, one JSON value per line:
//   {"agentCard": …, "cardHeaders": {…}}         the card as fetched, first
//   {"request": {"method", "headers", "params"}}  before every streaming call
//   {…}                                           each SSE data: line's `result`
//   {"error": …}                                  a JSON-RPC error instead
//   {"response": …}                               a non-streaming call's result
//                                                 (Mastra: GetTask after the stream,
//                                                 where metadata.execution lives)
// A resume is a second request line followed by its events. IDs and
// timestamps are whatever the frameworks generated in that run.
//
// ADK speaks A2A v0.3 only (message/stream); Mastra serves v0.3 and v1.0 on
// one URL, chosen by the A2A-Version header: mastra-* files are v1.0
// (SendStreamingMessage — the bridge asks for 1.0), mastra03-* the same
// scenarios in v0.3.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { startAdk } from './adk.mjs';
import { startMastra } from './mastra.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: opts } = parseArgs({ options: { out: { type: 'string', default: path.join(here, '..', 'agents', 'recordings') } } });
fs.mkdirSync(opts.out, { recursive: true });

// The frameworks log through console; keep this tool's output to its summary.
const log = console.log;
console.log = console.info = console.warn = () => {};

/** sse parses a text/event-stream body into the JSON of its data: lines. */
function sse(body) {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)));
}

class Recorder {
  constructor(file) {
    this.file = file;
    this.lines = [];
  }

  async card(url, headers = {}) {
    const res = await fetch(url, { headers });
    const card = await res.json();
    this.lines.push({ agentCard: card, cardHeaders: headers });
    return card;
  }

  /** stream makes one streaming call and records its events; resolves to the results. */
  async stream(endpoint, method, params, headers = {}) {
    const h = { 'content-type': 'application/json', accept: 'text/event-stream', ...headers };
    this.lines.push({ request: { method, headers, params } });
    const res = await fetch(endpoint, { method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const text = await res.text();
    const events = res.headers.get('content-type')?.includes('event-stream') ? sse(text) : [JSON.parse(text)];
    const results = [];
    for (const e of events) {
      if (e.error) this.lines.push({ error: e.error });
      else {
        this.lines.push(e.result);
        results.push(e.result);
      }
    }
    return results;
  }

  /** call makes one non-streaming call (GetTask) and records {"response": result}. */
  async call(endpoint, method, params, headers = {}) {
    this.lines.push({ request: { method, headers, params } });
    const res = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method, params }) });
    const body = await res.json();
    this.lines.push(body.error ? { error: body.error } : { response: body.result });
    return body.result;
  }

  save() {
    fs.writeFileSync(this.file, this.lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    log(`wrote ${path.relative(process.cwd(), this.file)} (${this.lines.length} lines)`);
  }
}

const userText03 = (text, ids = {}) => ({ kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text }], ...ids });
const userText1 = (text, ids = {}) => ({ messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...ids });

/** taskOf finds the task and context ids of a stream (v0.3 or v1.0 shapes). */
function taskOf(results) {
  for (const r of results) {
    const t = r.kind === 'task' ? r : r.task ?? (r.kind ? null : r.statusUpdate ?? r.artifactUpdate);
    if (t?.id && t.contextId) return { taskId: t.id, contextId: t.contextId };
    if (t?.taskId) return { taskId: t.taskId, contextId: t.contextId };
    if (r.taskId) return { taskId: r.taskId, contextId: r.contextId };
  }
  throw new Error(`no task in ${JSON.stringify(results).slice(0, 300)}`);
}

/** longRunningCall finds ADK's long-running function call (v0.3 data part) in a stream. */
function longRunningCall(results) {
  for (const r of results) {
    const parts = r.artifact?.parts ?? r.status?.message?.parts ?? [];
    for (const p of parts) if (p.kind === 'data' && p.metadata?.adk_is_long_running) return p.data;
  }
  throw new Error('no long-running call in the stream');
}

async function recordAdk() {
  const adk = await startAdk();
  const endpoint = `${adk.url}jsonrpc`;
  const begin = async (name) => {
    const r = new Recorder(path.join(opts.out, `adk-${name}.jsonl`));
    await r.card(`${adk.url}.well-known/agent-card.json`);
    return r;
  };
  try {
    for (const [name, text] of [
      ['stream', 'Hello'],
      ['tool', 'weather in Paris?'],
      ['error', 'fail now'],
    ]) {
      const r = await begin(name);
      await r.stream(endpoint, 'message/stream', { message: userText03(text) });
      r.save();
    }
    // The function_response the bridge sends for an approval (tasks/resume.go
    // answerParts): {approved, args} with the approved or edited arguments in full.
    for (const [name, response] of [
      ['approval-approve', { approved: true, args: { destination: 'Lisbon', nights: 3 } }],
      ['approval-deny', { approved: false, args: { destination: 'Lisbon', nights: 3 } }],
      ['approval-edit', { approved: true, args: { destination: 'Lisbon', nights: 5 } }],
    ]) {
      const r = await begin(name);
      const first = await r.stream(endpoint, 'message/stream', { message: userText03('book a trip to Lisbon') });
      const call = longRunningCall(first);
      const ids = taskOf(first);
      // ADK reads the answer as a function_response data part for the call's id and name.
      await r.stream(endpoint, 'message/stream', {
        message: {
          kind: 'message',
          role: 'user',
          messageId: crypto.randomUUID(),
          ...ids,
          parts: [{ kind: 'data', data: { id: call.id, name: call.name, response }, metadata: { adk_type: 'function_response' } }],
        },
      });
      r.save();
    }
  } finally {
    await adk.close();
  }
}

async function recordMastra(version) {
  const mastra = await startMastra();
  const v1 = version === '1.0';
  const headers = v1 ? { 'A2A-Version': '1.0' } : {};
  const method = v1 ? 'SendStreamingMessage' : 'message/stream';
  const user = v1 ? userText1 : userText03;
  const dataPart = (data) => (v1 ? { data } : { kind: 'data', data });
  const prefix = v1 ? 'mastra' : 'mastra03';
  // Mastra reports a finished task's tool calls only in the stored task's
  // metadata.execution, not in the stream: read it back as a client would.
  const getTask = (r, endpoint, ids) => r.call(endpoint, v1 ? 'GetTask' : 'tasks/get', { id: ids.taskId }, headers);
  const begin = async (name) => {
    const r = new Recorder(path.join(opts.out, `${prefix}-${name}.jsonl`));
    const card = await r.card(mastra.card, headers);
    const endpoint = v1 ? card.supportedInterfaces.find((i) => i.protocolVersion === '1.0').url : card.url;
    return { r, endpoint };
  };
  try {
    for (const [name, text] of [
      ['stream', 'Hello'],
      ['tool', 'weather in Oslo?'],
      ['error', 'fail now'],
    ]) {
      const { r, endpoint } = await begin(name);
      const events = await r.stream(endpoint, method, { message: user(text) }, headers);
      await getTask(r, endpoint, taskOf(events));
      r.save();
    }
    for (const [name, resume] of [
      ['approval-approve', { approved: true }],
      ['approval-deny', { approved: false }],
      ['approval-edit', { approved: true, editedArgs: { destination: 'Rome', nights: 4 } }],
    ]) {
      const { r, endpoint } = await begin(name);
      const first = await r.stream(endpoint, method, { message: user('book a trip to Rome') }, headers);
      const ids = taskOf(first);
      // Mastra resumes with the first data part of the follow-up message on the same task.
      await r.stream(endpoint, method, { message: { ...user('', ids), parts: [dataPart(resume)] } }, headers);
      await getTask(r, endpoint, ids);
      r.save();
    }
    {
      const { r, endpoint } = await begin('memory');
      const contextId = crypto.randomUUID();
      await r.stream(endpoint, method, { message: user('My name is Ada', { contextId }) }, headers);
      const second = await r.stream(endpoint, method, { message: user('What is my name?', { contextId }) }, headers);
      await getTask(r, endpoint, taskOf(second));
      r.save();
    }
  } finally {
    await mastra.close();
  }
}

await recordAdk();
await recordMastra('1.0');
await recordMastra('0.3');
process.exit(0);
