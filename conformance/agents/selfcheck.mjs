// Debugging aid: starts the JS agents in-process and talks to each one with
// the JS SDK's own clients (1.3.0 for the v1.0 agents, over JSON-RPC or gRPC
// as the card says; 0.3.14 for the v0.3 agents), printing one line per event
// and the final verdict. No bridge involved: when a conformance scenario on a
// JS agent fails, run this first to see whether the agent itself works.
//
//   node conformance/agents/selfcheck.mjs            # exit code 1 if any agent misbehaves

import { randomUUID } from 'node:crypto';
import { Role, TaskState, taskStateToJSON } from 'a2a-sdk-1.3.0';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from 'a2a-sdk-1.3.0/client';
import { GrpcTransportFactory } from 'a2a-sdk-1.3.0/client/grpc';
import { ClientFactory as ClientFactory03 } from 'a2a-sdk-0.3.14/client';

import { startAgents } from './agents.mjs';
import {
  JS_APPROVER_DENIED,
  JS_APPROVER_QUESTION,
  JS_APPROVER_TOOL,
  jsBookedAnswer,
  jsBookingArgs,
  JS_ASKER_QUESTION,
  JS_CHATTER_ANSWER,
  JS_FAILER_ERROR,
  SCHEMA_MEDIA_TYPE,
  js03StreamerAnswer,
  jsAskerAnswer,
  jsCitySchema,
  jsStreamerAnswer,
} from './texts.mjs';
import { dataPart, textPart } from './v1.mjs';

const log = console.log;
// The SDK servers log to console.log/info; keep the report readable.
console.info = () => {};

const TIMEOUT_MS = 10_000;

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory(), new GrpcTransportFactory()],
  }),
);
const factory03 = new ClientFactory03();

/** What the bridge sends on a resume: the payload as a data part, the interrupt in the message metadata. */
const RESUME_METADATA = { 'ag-ui': { interruptId: 'selfcheck-interrupt', status: 'resolved' } };

/**
 * One v1 turn; returns {events, text (artifact text), statusTexts, statusData, state, taskId, contextId}.
 * `input` is the user's text or {data} for a resume-style data part. statusData holds the
 * status messages' data parts as {value, mediaType, metadata}.
 */
async function turnV1(client, input, ids = {}, onEvent = () => {}) {
  const resume = typeof input === 'object';
  const message = {
    messageId: randomUUID(),
    contextId: ids.contextId ?? '',
    taskId: ids.taskId ?? '',
    role: Role.ROLE_USER,
    parts: [resume ? (input.part ?? dataPart(input.data)) : textPart(input)],
    metadata: resume ? RESUME_METADATA : undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const out = { events: [], text: '', statusTexts: [], statusData: [], state: undefined, taskId: ids.taskId, contextId: ids.contextId };
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  for await (const ev of client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: undefined }, { signal })) {
    const p = ev.payload;
    switch (p?.$case) {
      case 'task':
        out.taskId = p.value.id;
        out.contextId = p.value.contextId;
        out.state = p.value.status?.state;
        out.events.push(`task(${taskStateToJSON(out.state)})`);
        break;
      case 'statusUpdate': {
        out.state = p.value.status?.state;
        const t = (p.value.status?.message?.parts ?? []).map((x) => (x.content?.$case === 'text' ? x.content.value : '')).join('');
        if (t) out.statusTexts.push(t);
        const data = (p.value.status?.message?.parts ?? [])
          .filter((x) => x.content?.$case === 'data')
          .map((x) => ({ value: x.content.value, mediaType: x.mediaType, metadata: x.metadata }));
        out.statusData.push(...data);
        const d = data.map((x) => ` data[${x.mediaType}]${JSON.stringify(x.value)} meta${JSON.stringify(x.metadata ?? null)}`).join('');
        out.events.push(`status(${taskStateToJSON(out.state)}${t ? ` ${JSON.stringify(t)}` : ''}${d})`);
        break;
      }
      case 'artifactUpdate': {
        const t = (p.value.artifact?.parts ?? []).map((x) => (x.content?.$case === 'text' ? x.content.value : '')).join('');
        out.text += t;
        out.events.push(`artifact(append=${p.value.append} last=${p.value.lastChunk} ${JSON.stringify(t)})`);
        break;
      }
      case 'message':
        out.events.push('message');
        break;
      default:
        out.events.push(`?${p?.$case}`);
    }
    onEvent(p, out);
  }
  return out;
}

/** The function_response a bridge sends for a tool approval (ADK convention). */
function functionResponsePart(id, name, response) {
  return { content: { $case: 'data', value: { id, name, response } }, metadata: { adk_type: 'function_response' }, filename: '', mediaType: '' };
}

/** The agent's CancelTask log (agents.mjs serves it at <base>cancels). */
async function cancelsOf(url) {
  const res = await fetch(new URL('cancels', url));
  return (await res.json()).taskIds;
}

/** One v0.3 turn, like turnV1 (v0.3 data parts have no mediaType). */
async function turn03(client, input, ids = {}) {
  const resume = typeof input === 'object';
  const part = resume ? { kind: 'data', data: input.data } : { kind: 'text', text: input };
  const message = { kind: 'message', role: 'user', messageId: randomUUID(), parts: [part] };
  if (resume) message.metadata = RESUME_METADATA;
  if (ids.taskId) message.taskId = ids.taskId;
  if (ids.contextId) message.contextId = ids.contextId;
  const out = { events: [], text: '', statusTexts: [], statusData: [], state: undefined, taskId: ids.taskId, contextId: ids.contextId };
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  for await (const ev of client.sendMessageStream({ message }, { signal })) {
    switch (ev.kind) {
      case 'task':
        out.taskId = ev.id;
        out.contextId = ev.contextId;
        out.state = ev.status?.state;
        out.events.push(`task(${out.state})`);
        break;
      case 'status-update': {
        out.state = ev.status?.state;
        const t = (ev.status?.message?.parts ?? []).map((x) => (x.kind === 'text' ? x.text : '')).join('');
        if (t) out.statusTexts.push(t);
        const data = (ev.status?.message?.parts ?? []).filter((x) => x.kind === 'data').map((x) => ({ value: x.data, metadata: x.metadata }));
        out.statusData.push(...data);
        const d = data.map((x) => ` data${JSON.stringify(x.value)} meta${JSON.stringify(x.metadata ?? null)}`).join('');
        out.events.push(`status(${out.state}${t ? ` ${JSON.stringify(t)}` : ''}${d}${ev.final ? ' final' : ''})`);
        break;
      }
      case 'artifact-update': {
        const t = (ev.artifact?.parts ?? []).map((x) => (x.kind === 'text' ? x.text : '')).join('');
        out.text += t;
        out.events.push(`artifact(append=${ev.append} last=${ev.lastChunk} ${JSON.stringify(t)})`);
        break;
      }
      default:
        out.events.push(ev.kind);
    }
  }
  return out;
}

const S = TaskState;

/**
 * hasSchema: the question carries the answer's schema marked the bridge's way,
 * metadata {mediaType} always and the part's mediaType too where the protocol has one (v1).
 */
function hasSchema(statusData, v1) {
  return statusData.some(
    (d) =>
      JSON.stringify(d.value) === JSON.stringify(jsCitySchema()) &&
      d.metadata?.mediaType === SCHEMA_MEDIA_TYPE &&
      (!v1 || d.mediaType === SCHEMA_MEDIA_TYPE),
  );
}
/** name → async (url) => verdict string or throws. */
const checks = {
  'js-streamer': async (url) => {
    const r = await turnV1(await factory.createFromUrl(url), 'hello');
    return [r, r.state === S.TASK_STATE_COMPLETED && r.text === jsStreamerAnswer('hello')];
  },
  'js-streamer-grpc': async (url) => {
    const r = await turnV1(await factory.createFromUrl(url), 'hello');
    return [r, r.state === S.TASK_STATE_COMPLETED && r.text === jsStreamerAnswer('hello')];
  },
  'js-chatter': async (url) => {
    const r = await turnV1(await factory.createFromUrl(url), 'hi');
    return [r, r.state === S.TASK_STATE_COMPLETED && r.statusTexts.at(-1) === JS_CHATTER_ANSWER];
  },
  'js-failer': async (url) => {
    const r = await turnV1(await factory.createFromUrl(url), 'hi');
    return [r, r.state === S.TASK_STATE_FAILED && r.statusTexts.at(-1) === JS_FAILER_ERROR];
  },
  'js-asker': async (url) => {
    const client = await factory.createFromUrl(url);
    const events = [];
    let ok = true;
    // The answer the way the bridge resumes (a data part), then as plain text.
    for (const [reply, city] of [[{ data: { city: 'Paris' } }, 'Paris'], ['Lisbon', 'Lisbon']]) {
      const r1 = await turnV1(client, 'What is the weather?');
      const asked = r1.state === S.TASK_STATE_INPUT_REQUIRED && r1.statusTexts.at(-1) === JS_ASKER_QUESTION && hasSchema(r1.statusData, true);
      const r2 = await turnV1(client, reply, { taskId: r1.taskId, contextId: r1.contextId });
      events.push(...r1.events, '|', ...r2.events, '||');
      ok &&= asked && r2.state === S.TASK_STATE_COMPLETED && r2.text === jsAskerAnswer(city);
    }
    return [{ events }, ok];
  },
  'js-counter': async (url) => {
    const client = await factory.createFromUrl(url);
    let cancel;
    const r = await turnV1(client, 'count', {}, (p, out) => {
      if (p?.$case === 'artifactUpdate' && !cancel) cancel = client.cancelTask({ tenant: '', id: out.taskId, metadata: undefined });
    });
    const cancelled = await cancel;
    const log = await cancelsOf(url);
    const ok = r.state === S.TASK_STATE_CANCELED && cancelled?.status?.state === S.TASK_STATE_CANCELED && log.length === 1 && log[0] === r.taskId;
    return [{ events: [...r.events, `cancels ${JSON.stringify(log)}`] }, ok];
  },
  'js-quiet-approver': async (url) => {
    const client = await factory.createFromUrl(url);
    const events = [];
    let ok = true;
    for (const [response, answer] of [
      [{ approved: true }, jsBookedAnswer(jsBookingArgs())],
      [{ approved: false }, JS_APPROVER_DENIED],
      [{ approved: true, args: { ...jsBookingArgs(), passengers: 3 } }, jsBookedAnswer({ ...jsBookingArgs(), passengers: 3 })],
    ]) {
      const r1 = await turnV1(client, 'Book me a flight');
      const call = r1.statusData.find((d) => d.metadata?.adk_type === 'function_call')?.value;
      const asked = r1.state === S.TASK_STATE_INPUT_REQUIRED && r1.statusTexts.at(-1) === JS_APPROVER_QUESTION && call?.name === JS_APPROVER_TOOL;
      const part = functionResponsePart(call?.id, JS_APPROVER_TOOL, response);
      const r2 = await turnV1(client, { part }, { taskId: r1.taskId, contextId: r1.contextId });
      events.push(...r1.events, '|', ...r2.events, '||');
      // It never echoes the call's result.
      const echoed = r2.statusData.some((d) => d.metadata?.adk_type === 'function_response');
      ok &&= asked && !echoed && r2.state === S.TASK_STATE_COMPLETED && r2.text === answer;
    }
    return [{ events }, ok];
  },
  'js03-streamer': async (url) => {
    const r = await turn03(await factory03.createFromUrl(url), 'hello');
    return [r, r.state === 'completed' && r.text === js03StreamerAnswer('hello')];
  },
  'js03-asker': async (url) => {
    const client = await factory03.createFromUrl(url);
    const events = [];
    let ok = true;
    for (const [reply, city] of [[{ data: { city: 'Paris' } }, 'Paris'], ['Lisbon', 'Lisbon']]) {
      const r1 = await turn03(client, 'What is the weather?');
      const asked = r1.state === 'input-required' && r1.statusTexts.at(-1) === JS_ASKER_QUESTION && hasSchema(r1.statusData, false);
      const r2 = await turn03(client, reply, { taskId: r1.taskId, contextId: r1.contextId });
      events.push(...r1.events, '|', ...r2.events, '||');
      ok &&= asked && r2.state === 'completed' && r2.text === jsAskerAnswer(city);
    }
    return [{ events }, ok];
  },
};

const { agents, close } = await startAgents();
let failed = 0;
try {
  for (const [name, { url }] of Object.entries(agents)) {
    const check = checks[name];
    if (!check) {
      log(`?    ${name}: no self-check`);
      continue;
    }
    try {
      const [r, ok] = await check(url);
      if (!ok) failed++;
      log(`${ok ? 'ok  ' : 'FAIL'} ${name} ${url}\n       ${r.events.join(' → ')}`);
    } catch (err) {
      failed++;
      log(`FAIL ${name} ${url}: ${err?.stack ?? err}`);
    }
  }
} finally {
  await close();
}
log(failed === 0 ? 'all JS agents answer' : `${failed} JS agent(s) misbehave`);
process.exit(failed === 0 ? 0 : 1);
