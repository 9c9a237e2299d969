// The bench agent again, written the way most A2A agents in TypeScript are:
// @a2a-js/sdk 1.3.0's DefaultRequestHandler, InMemoryTaskStore and Express
// JSON-RPC handler, with the v0.3 compatibility layer on (so the peer's
// @a2a-js/sdk 0.2.5 client can talk to it too). cmd/bridge-bench starts it
// for -agent js.
//
//   node bench/jsagent/server.mjs [--listen 127.0.0.1:0] [--chunks 500] [--pace-ms 0] [--handler direct|sdk]
//
// Once listening it prints one JSON line, {"url":"http://127.0.0.1:PORT/"}.
//   GET  .well-known/agent-card.json   the card (with no A2A-Version header: the v0.3/v1.0 union card)
//   POST jsonrpc                        A2A JSON-RPC, v1.0 (A2A-Version: 1.0) and v0.3 (no header)
//   GET  stats                          {"a2aConnections": N}: connections that carried A2A requests
// It exits on SIGTERM or SIGINT.
//
// Each message gets a new task whose text artifact comes in --chunks chunks,
// then COMPLETED:
//
//   Task{SUBMITTED} → Status{WORKING} → Artifact{append=false} → Artifact{append=true} …
//   → Artifact{append=true, lastChunk=true} → Status{COMPLETED}
//
// Chunk i's text is "w<i>@<µs> ", where µs is the Unix time in microseconds
// at which the chunk was published: the readers subtract it from the time
// they read the chunk (same machine, same clock). With --pace-ms 0 the chunks
// are published back to back, each in its own turn of the event loop;
// otherwise one every --pace-ms, as an LLM's tokens arrive. The SDK's Express
// handler writes each event as its own SSE frame as soon as the request
// handler yields it (res.write per event), but Node's http response corks
// the socket for the rest of the tick, so frames written in one tick leave
// in one writev: without the turn between chunks, all 500 would go out as
// one burst, which no agent streaming from a model does. With it, each chunk
// is flushed as it is made (about one write syscall per chunk).
//
// Why --handler direct (the default): the SDK's DefaultRequestHandler runs
// every event through its ResultManager and InMemoryTaskStore, which copy the
// whole task (every chunk so far) on each artifact update, so an artifact of
// M chunks costs the agent O(M²); measured here, about 260 µs of agent CPU
// per chunk at 100 chunks and 710 µs at 500, and with back-to-back chunks
// the first one left only after all were stored (TTFE ~0.9 s). That is the
// same trap as a2asrv's task manager (bench/README.md). The bench measures
// the client side of the stream, so the direct handler answers a new
// SendStreamingMessage straight from the executor, as the Go agent does, and
// leaves every other method (and follow-ups) to DefaultRequestHandler. The
// SDK's transports (JSON-RPC 1.0, v0.3 compat, SSE framing) are unchanged.
// --handler sdk measures against the stock handler.

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import express from 'express';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { wallMicros } from '../wallclock.mjs';

const { values: args } = parseArgs({
  options: {
    listen: { type: 'string', default: '127.0.0.1:0' },
    chunks: { type: 'string', default: '500' },
    'pace-ms': { type: 'string', default: '0' },
    handler: { type: 'string', default: 'direct' },
  },
});
const chunks = Number(args.chunks);
const paceMs = Number(args['pace-ms']);
if (!Number.isInteger(chunks) || chunks < 1 || !(paceMs >= 0) || !['direct', 'sdk'].includes(args.handler)) {
  console.error('--chunks must be a positive integer, --pace-ms a non-negative number, --handler direct or sdk');
  process.exit(2);
}
const [host, port] = splitHostPort(args.listen);

function splitHostPort(s) {
  const i = s.lastIndexOf(':');
  if (i < 0) {
    console.error(`--listen ${s}: want host:port`);
    process.exit(2);
  }
  return [s.slice(0, i), Number(s.slice(i + 1))];
}

/** Unix time in microseconds on the wall clock the Go side stamps with (see ../wallclock.mjs). */
const nowMicros = wallMicros;

function textPart(text) {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/**
 * The answer to one message, as the SDK's agent events, in order; it waits
 * --pace-ms before each chunk after the first, and stamps a chunk when it
 * hands it on, which is when the transport writes it.
 */
async function* loaderEvents(taskId, contextId, userMessage, cancelled) {
  const timestamp = () => new Date().toISOString();
  const status = (state) =>
    AgentEvent.statusUpdate({ taskId, contextId, status: { state, message: undefined, timestamp: timestamp() }, metadata: undefined });
  yield AgentEvent.task({
    id: taskId,
    contextId,
    status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: timestamp() },
    artifacts: [],
    history: [userMessage],
    metadata: undefined,
  });
  yield status(TaskState.TASK_STATE_WORKING);
  const artifactId = randomUUID();
  for (let i = 0; i < chunks; i++) {
    if (i > 0) await (paceMs > 0 ? sleep(paceMs) : nextTurn());
    if (cancelled.has(taskId)) {
      yield status(TaskState.TASK_STATE_CANCELED);
      return;
    }
    yield AgentEvent.artifactUpdate({
      taskId,
      contextId,
      artifact: {
        artifactId,
        name: 'answer',
        description: '',
        parts: [textPart(`w${i}@${nowMicros()} `)],
        metadata: undefined,
        extensions: [],
      },
      append: i > 0,
      lastChunk: i === chunks - 1,
      metadata: undefined,
    });
  }
  yield status(TaskState.TASK_STATE_COMPLETED);
}

/** The executor DefaultRequestHandler runs (--handler sdk, and every path the direct handler passes on). */
class LoaderExecutor {
  cancelled = new Set();

  cancelTask = async (taskId) => {
    this.cancelled.add(taskId);
  };

  async execute(rc, bus) {
    try {
      for await (const event of loaderEvents(rc.taskId, rc.contextId, rc.userMessage, this.cancelled)) bus.publish(event);
    } finally {
      this.cancelled.delete(rc.taskId);
    }
  }
}

const app = express();
const server = http.createServer(app);
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(port, host, resolve);
});
const base = `http://${host}:${server.address().port}/`;

const card = {
  name: 'bench',
  description: 'Streams one text artifact in many chunks (cmd/bridge-bench, @a2a-js/sdk 1.3.0).',
  // One URL for both versions: the JSON-RPC handler dispatches on the
  // A2A-Version header (missing means 0.3).
  supportedInterfaces: [
    { url: `${base}jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    { url: `${base}jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
  ],
  provider: { organization: 'a2a-agui-bridge bench', url: 'https://example.com/bench' },
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'stream',
      name: 'Stream',
      description: 'Answers in many chunks.',
      tags: ['bench'],
      examples: [],
      inputModes: ['text/plain'],
      outputModes: ['text/plain'],
      securityRequirements: [],
    },
  ],
  signatures: [],
};

const executor = new LoaderExecutor();
const sdkHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
let requestHandler = sdkHandler;
if (args.handler === 'direct') {
  // Every method of the SDK's handler, but a new task's stream comes from
  // the executor's events as they are made (see the top of this file).
  requestHandler = Object.create(sdkHandler);
  requestHandler.sendMessageStream = async function* (params, context) {
    const message = params.message;
    if (!message?.messageId || message.taskId) {
      yield* sdkHandler.sendMessageStream(params, context); // errors and follow-ups: not the bench's path
      return;
    }
    const contextId = message.contextId || randomUUID();
    for await (const event of loaderEvents(randomUUID(), contextId, message, executor.cancelled)) {
      yield { payload: { $case: event.kind, value: event.data } };
    }
  };
}

// Connections that carried an A2A request: shows whether a client reuses them.
const seen = new WeakSet();
let a2aConnections = 0;
app.use('/jsonrpc', (req, _res, next) => {
  if (!seen.has(req.socket)) {
    seen.add(req.socket);
    a2aConnections++;
  }
  next();
});
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: requestHandler, legacyCompat: { enabled: true } }));
app.use(
  '/jsonrpc',
  jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }),
);
app.get('/stats', (_req, res) => res.json({ a2aConnections }));

const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

process.stdout.write(JSON.stringify({ url: base }) + '\n');
