// The load reader made of the client most AG-UI frontends use: @ag-ui/client
// 1.0.0. cmd/bridge-bench starts it for -reader httpagent, so that what a
// real client costs on the reading side is in the measurement, and drives it
// the way it drives its "limit": commands on stdin, one JSON line per
// command on stdout.
//
//   node bench/aguireader/reader.mjs --url URL --kind bridge|peer|a2a --chunks N
//        --runs N --concurrency C --warmup N --ttfe N
//
// Commands (one per line): warmup (--warmup runs at --concurrency), run
// (--runs runs at --concurrency), ttfe (--ttfe runs one at a time). Each is
// answered with {"command": ..., "result": {runs, failed, chunks, events,
// wallNs, errorSample?, ttfeNs?, latencyUs?}}, the shape of the Go side's
// loadResult. It exits when stdin ends.
//
// --kind bridge and peer: one new HttpAgent per run (an agent object holds
// one conversation), runAgent() with a subscriber; every event goes through
// the client's whole pipeline (SSE parsing, event verification, message
// building) before onEvent sees it. A run must end with RUN_FINISHED after
// exactly --chunks chunk events: TEXT_MESSAGE_CONTENT for the bridge, RAW
// artifact-update for the peer (@ag-ui/a2a 0.0.6 wraps every A2A chunk in RAW).
//
// --kind a2a (the relay: the agent's own A2A stream through a byte proxy):
// no AG-UI events to verify, so the run uses the transport HttpAgent is
// built on, runHttpRequest + parseSSEStream from @ag-ui/client, to post an
// A2A v1.0 SendStreamingMessage and parse the stream. It must end
// TASK_STATE_COMPLETED after exactly --chunks artifact updates.
//
// Latency: every chunk's text is "w<i>@<µs> " with the agent's Unix time in
// microseconds at publication; when the chunk event reaches the subscriber,
// now − stamp is one sample of latencyUs.

import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { HttpAgent, parseSSEStream, runHttpRequest } from '@ag-ui/client';
import { wallMicros } from '../wallclock.mjs';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    kind: { type: 'string' },
    chunks: { type: 'string', default: '500' },
    runs: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '20' },
    ttfe: { type: 'string', default: '30' },
  },
});
const int = (name) => {
  const n = Number(args[name]);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} must be a non-negative integer, not ${args[name]}`);
    process.exit(2);
  }
  return n;
};
const chunks = int('chunks');
const runs = int('runs');
const concurrency = Math.max(1, int('concurrency'));
const warmupRuns = int('warmup');
const ttfeRuns = int('ttfe');
if (!args.url || !['bridge', 'peer', 'a2a'].includes(args.kind)) {
  console.error('usage: node reader.mjs --url URL --kind bridge|peer|a2a [--chunks N --runs N --concurrency C --warmup N --ttfe N]');
  process.exit(2);
}

// When a stream is cut mid-answer, runHttpRequest's teardown cancels the
// body reader and rethrows the cancellation's rejection (any error not named
// AbortError) from a .catch() nobody awaits: an unhandled rejection, which
// ends a Node process by default. The run itself has already failed through
// the observable's error, and is counted as failed; the rethrow is logged
// here so that it does not take the reader, and every other run, down.
process.on('unhandledRejection', (err) => {
  console.error(`unhandled rejection (@ag-ui/client stream teardown after a failed run): ${err?.message ?? err}`);
});

/** Unix time in microseconds on the wall clock the Go side stamps with (see ../wallclock.mjs). */
const nowMicros = wallMicros;

/**
 * The agent's stamps in a text of chunks "w<i>@<µs> ": one for a chunk as
 * the agent sent it, several for text deltas the bridge merged while its
 * store was busy (one event carrying several chunks). A text without a
 * stamp is one chunk (NaN: no latency sample).
 */
function stampsOf(text) {
  if (typeof text !== 'string') return [NaN];
  const stamps = [...text.matchAll(/w\d+@(\d+)/g)].map((m) => Number(m[1]));
  return stamps.length > 0 ? stamps : [NaN];
}

/** What one chunk-bearing AG-UI event carries as text, for the kind; undefined if it is not one. */
function chunkText(event) {
  if (args.kind === 'bridge') {
    return event.type === 'TEXT_MESSAGE_CONTENT' ? event.delta : undefined;
  }
  if (event.type === 'RAW' && event.event?.kind === 'artifact-update') {
    return event.event.artifact?.parts?.[0]?.text ?? '';
  }
  if (event.type === 'TEXT_MESSAGE_CHUNK' || event.type === 'TEXT_MESSAGE_CONTENT') return event.delta ?? '';
  return undefined;
}

/** One run through HttpAgent.runAgent: resolves to {chunks, events, ttfeNs, error}. */
async function aguiRun(latency) {
  const agent = new HttpAgent({
    url: args.url,
    threadId: `bench-${randomUUID()}`,
    initialMessages: [{ id: 'm1', role: 'user', content: 'go' }],
  });
  const o = { chunks: 0, events: 0, ttfeNs: 0, error: '' };
  let last = '';
  let runError = '';
  const start = process.hrtime.bigint();
  try {
    await agent.runAgent(
      { runId: randomUUID() },
      {
        onEvent: ({ event }) => {
          o.events++;
          last = event.type;
          if (event.type === 'RUN_ERROR') runError = `RUN_ERROR ${event.code}: ${event.message}`;
          const text = chunkText(event);
          if (text === undefined) return;
          const stamps = stampsOf(text);
          o.chunks += stamps.length;
          if (o.ttfeNs === 0) o.ttfeNs = Number(process.hrtime.bigint() - start);
          const now = nowMicros();
          for (const stamp of stamps) if (latency && Number.isFinite(stamp)) latency.push(now - stamp);
        },
      },
    );
  } catch (err) {
    o.error = runError || `runAgent: ${err?.message ?? err}`;
    return o;
  }
  if (runError) o.error = runError;
  else if (last !== 'RUN_FINISHED') o.error = `stream ended after ${o.events} events without RUN_FINISHED (last ${last})`;
  else if (o.chunks !== chunks) o.error = `${o.chunks} chunk events, want ${chunks}`;
  return o;
}

/** One run of the A2A stream (the relay target) through @ag-ui/client's SSE transport. */
function a2aRun(latency) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendStreamingMessage',
    params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'go' }] } },
  });
  const o = { chunks: 0, events: 0, ttfeNs: 0, error: '' };
  let state = '';
  const start = process.hrtime.bigint();
  return new Promise((resolve) => {
    const source = runHttpRequest(() =>
      fetch(args.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', 'A2A-Version': '1.0' },
        body,
      }),
    );
    parseSSEStream(source).subscribe({
      next: (data) => {
        o.events++;
        if (data?.error) {
          o.error ||= `JSON-RPC error ${data.error.code}: ${data.error.message}`;
          return;
        }
        const r = data?.result ?? {};
        if (r.artifactUpdate) {
          o.chunks++;
          if (o.ttfeNs === 0) o.ttfeNs = Number(process.hrtime.bigint() - start);
          const [stamp] = stampsOf(r.artifactUpdate.artifact?.parts?.[0]?.text);
          if (latency && Number.isFinite(stamp)) latency.push(nowMicros() - stamp);
        } else if (r.statusUpdate) state = r.statusUpdate.status?.state ?? state;
        else if (r.task) state = r.task.status?.state ?? state;
      },
      error: (err) => {
        o.error ||= `stream: ${err?.message ?? err}`;
        resolve(o);
      },
      complete: () => {
        if (!o.error && state !== 'TASK_STATE_COMPLETED') o.error = `stream ended in state ${state || 'none'}, want TASK_STATE_COMPLETED`;
        else if (!o.error && o.chunks !== chunks) o.error = `${o.chunks} artifact updates, want ${chunks}`;
        resolve(o);
      },
    });
  });
}

const runOnce = args.kind === 'a2a' ? a2aRun : aguiRun;

function newResult() {
  return { runs: 0, failed: 0, chunks: 0, events: 0, wallNs: 0 };
}

function add(res, o) {
  res.runs++;
  res.chunks += o.chunks;
  res.events += o.events;
  if (o.error) {
    res.failed++;
    res.errorSample ??= o.error;
  }
}

/** n runs, c in flight; latency samples of every chunk. */
async function load(n, c) {
  const res = newResult();
  const latency = [];
  let next = 0;
  const start = process.hrtime.bigint();
  const worker = async () => {
    while (next < n) {
      next++;
      add(res, await runOnce(latency));
    }
  };
  await Promise.all(Array.from({ length: Math.min(c, n) }, worker));
  res.wallNs = Number(process.hrtime.bigint() - start);
  res.latencyUs = latency;
  return res;
}

/** n runs one at a time, recording each successful run's time to first chunk. */
async function sequential(n) {
  const res = newResult();
  res.ttfeNs = [];
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const o = await runOnce(null);
    add(res, o);
    if (!o.error && o.ttfeNs > 0) res.ttfeNs.push(o.ttfeNs);
  }
  res.wallNs = Number(process.hrtime.bigint() - start);
  return res;
}

const commands = { warmup: () => load(warmupRuns, concurrency), run: () => load(runs, concurrency), ttfe: () => sequential(ttfeRuns) };

for await (const line of createInterface({ input: process.stdin })) {
  const cmd = line.trim();
  const fn = commands[cmd];
  if (!fn) {
    console.error(`unknown command ${JSON.stringify(cmd)}`);
    process.exit(2);
  }
  const result = await fn();
  process.stdout.write(JSON.stringify({ command: cmd, result }) + '\n');
}
