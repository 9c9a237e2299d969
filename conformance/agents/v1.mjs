// A2A v1.0 agents written with @a2a-js/sdk 1.3.0, the remote side nobody on
// the bridge team wrote. Each executor documents the exact events it publishes.
//
// The 1.3.0 server holds events as ts-proto objects (Part.content is a
// {$case, value} union, enums are numbers) and serialises them to ProtoJSON on
// the wire. Its executor rule: EVERY execute() call, follow-up turns included,
// must publish a Task or a Message first.

import { randomUUID } from 'node:crypto';
import { Role, TaskState } from 'a2a-sdk-1.3.0';
import { AgentEvent } from 'a2a-sdk-1.3.0/server';
import {
  JS_APPROVER_DENIED,
  JS_APPROVER_QUESTION,
  JS_APPROVER_TOOL,
  JS_COUNTER_COUNT,
  JS_COUNTER_TICK_MS,
  jsBookedAnswer,
  jsBookingArgs,
  JS_ASKER_QUESTION,
  JS_CHATTER_ANSWER,
  JS_CHATTER_PIECES,
  JS_FAILER_ERROR,
  SCHEMA_MEDIA_TYPE,
  cityFrom,
  jsAskerAnswer,
  jsCitySchema,
  jsStreamerAnswer,
  splitWords,
} from './texts.mjs';

/** Pause between events, so that clients see a stream and not one burst. */
const TICK_MS = Number(process.env.CONFORMANCE_AGENT_TICK_MS ?? 5);

const now = () => new Date().toISOString();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function textPart(text) {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** A data part; mediaType, when given, is also put in the metadata (the bridge's schema convention). */
export function dataPart(value, mediaType = '') {
  return { content: { $case: 'data', value }, metadata: mediaType ? { mediaType } : undefined, filename: '', mediaType };
}

function agentMessage(rc, text, extraParts = []) {
  return {
    messageId: randomUUID(),
    contextId: rc.contextId,
    taskId: rc.taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text), ...extraParts],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The texts and data payloads of a v1 message's parts. */
export function partsOf(message) {
  const texts = [];
  const datas = [];
  for (const p of message?.parts ?? []) {
    const c = p?.content;
    if (c?.$case === 'text') texts.push(c.value);
    else if (c?.$case === 'data') datas.push(c.value);
  }
  return { texts, datas };
}

function userText(rc) {
  return partsOf(rc.userMessage).texts.join(' ').trim();
}

/** Small helper bound to one execute() call. */
class Turn {
  constructor(rc, bus, cancelled) {
    this.rc = rc;
    this.bus = bus;
    this.cancelled = cancelled;
  }

  get stopped() {
    return this.cancelled.has(this.rc.taskId);
  }

  /** Publishes the task: new on the first turn, the stored one on a follow-up. */
  task() {
    const { rc } = this;
    const t = rc.task
      ? structuredClone(rc.task)
      : {
          id: rc.taskId,
          contextId: rc.contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
          artifacts: [],
          history: [rc.userMessage],
          metadata: undefined,
        };
    this.bus.publish(AgentEvent.task(t));
  }

  /** A status update; text, when set, becomes an agent message, followed by extraParts. */
  status(state, text, extraParts = []) {
    const { rc } = this;
    this.bus.publish(
      AgentEvent.statusUpdate({
        taskId: rc.taskId,
        contextId: rc.contextId,
        status: { state, message: text ? agentMessage(rc, text, extraParts) : undefined, timestamp: now() },
        metadata: undefined,
      }),
    );
  }

  artifact(artifactId, name, text, append, lastChunk) {
    const { rc } = this;
    this.bus.publish(
      AgentEvent.artifactUpdate({
        taskId: rc.taskId,
        contextId: rc.contextId,
        artifact: { artifactId, name, description: '', parts: [textPart(text)], metadata: undefined, extensions: [] },
        append,
        lastChunk,
        metadata: undefined,
      }),
    );
  }

  async pause(ms = TICK_MS) {
    await sleep(ms);
    if (this.stopped) {
      this.status(TaskState.TASK_STATE_CANCELED);
      return false;
    }
    return true;
  }
}

/**
 * Base: remembers canceled tasks; the running execute() notices at its next
 * pause. `cancels` logs every CancelTask received, in order (served at
 * <agent>/cancels so the suite can check that a cancel reached the agent once).
 */
class Base {
  cancelled = new Set();
  cancels = [];

  cancelTask = async (taskId, bus) => {
    this.cancels.push(taskId);
    this.cancelled.add(taskId);
  };

  async execute(rc, bus) {
    const turn = new Turn(rc, bus, this.cancelled);
    try {
      await this.script(turn, rc);
    } finally {
      this.cancelled.delete(rc.taskId);
    }
  }
}

/**
 * Streams one text artifact in chunks, like an LLM streaming tokens.
 *
 *   Task{SUBMITTED} → Status{WORKING} → Artifact{append=false} → Artifact{append=true} …
 *   → Artifact{append=true, lastChunk=true} → Status{COMPLETED}
 */
export class StreamerExecutor extends Base {
  async script(turn, rc) {
    turn.task();
    turn.status(TaskState.TASK_STATE_WORKING);
    const chunks = splitWords(jsStreamerAnswer(userText(rc)), 4);
    const id = randomUUID();
    for (let i = 0; i < chunks.length; i++) {
      if (!(await turn.pause())) return;
      turn.artifact(id, 'answer', chunks[i], i > 0, i === chunks.length - 1);
    }
    turn.status(TaskState.TASK_STATE_COMPLETED);
  }
}

/**
 * Answers only in status messages: incremental WORKING texts, then the
 * COMPLETED status repeating the whole text (a client must show it once).
 *
 *   Task{SUBMITTED} → Status{WORKING "JS chatter "} → Status{WORKING "says hello "}
 *   → Status{WORKING "from Node."} → Status{COMPLETED "JS chatter says hello from Node."}
 */
export class ChatterExecutor extends Base {
  async script(turn) {
    turn.task();
    for (const piece of JS_CHATTER_PIECES) {
      if (!(await turn.pause())) return;
      turn.status(TaskState.TASK_STATE_WORKING, piece);
    }
    turn.status(TaskState.TASK_STATE_COMPLETED, JS_CHATTER_ANSWER);
  }
}

/**
 * Fails.
 *
 *   Task{SUBMITTED} → Status{WORKING} → Status{FAILED "JS agent failed on purpose"}
 */
export class FailerExecutor extends Base {
  async script(turn) {
    turn.task();
    turn.status(TaskState.TASK_STATE_WORKING);
    if (!(await turn.pause())) return;
    turn.status(TaskState.TASK_STATE_FAILED, JS_FAILER_ERROR);
  }
}

/**
 * Asks for a city, answers on the next message to the same task.
 *
 * First turn:  Task{SUBMITTED} → Status{WORKING} → Status{INPUT_REQUIRED, parts: text "Which city?",
 *              data jsCitySchema() with mediaType and metadata {mediaType} "application/schema+json"}
 * Follow-up:   Task{INPUT_REQUIRED} (the stored task, as the SDK requires) → Status{WORKING}
 *              → Artifact{append=false, lastChunk=true, "JS forecast for <city>: sunny."}
 *              → Status{COMPLETED}
 * The city is read from a data part {"city": …} or, failing that, the text.
 * A follow-up without a city asks again.
 */
export class AskerExecutor extends Base {
  async script(turn, rc) {
    turn.task();
    turn.status(TaskState.TASK_STATE_WORKING);
    if (!(await turn.pause())) return;
    const resuming = rc.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED;
    const { texts, datas } = partsOf(rc.userMessage);
    const city = cityFrom(texts, datas);
    if (!resuming || city === '') {
      turn.status(TaskState.TASK_STATE_INPUT_REQUIRED, JS_ASKER_QUESTION, [dataPart(jsCitySchema(), SCHEMA_MEDIA_TYPE)]);
      return;
    }
    turn.artifact(randomUUID(), 'forecast', jsAskerAnswer(city), false, true);
    turn.status(TaskState.TASK_STATE_COMPLETED);
  }
}

/**
 * Counts slowly in one artifact, for cancel tests; CancelTask ends it.
 *
 *   Task{SUBMITTED} → Status{WORKING} → Artifact{append=false "1 "} → Artifact{append=true "2 "} …
 *   (one every JS_COUNTER_TICK_MS) → Artifact{lastChunk=true "100 "} → Status{COMPLETED}
 *   cancelled: … → Status{CANCELED}
 */
export class CounterExecutor extends Base {
  async script(turn) {
    turn.task();
    turn.status(TaskState.TASK_STATE_WORKING);
    const id = randomUUID();
    for (let i = 1; i <= JS_COUNTER_COUNT; i++) {
      if (!(await turn.pause(JS_COUNTER_TICK_MS))) return;
      turn.artifact(id, 'count', `${i} `, i > 1, i === JS_COUNTER_COUNT);
    }
    turn.status(TaskState.TASK_STATE_COMPLETED);
  }
}

/** An ADK long-running function call awaiting approval, as a v1 data part. */
function functionCallPart(id, name, args) {
  return {
    content: { $case: 'data', value: { id, name, args } },
    metadata: { adk_type: 'function_call', adk_is_long_running: true },
    filename: '',
    mediaType: '',
  };
}

/** The decision on call `callId` in a function_response data part: {approved, args?} or undefined. */
function decisionFrom(message, callId) {
  for (const p of message?.parts ?? []) {
    const c = p?.content;
    if (c?.$case !== 'data' || p.metadata?.adk_type !== 'function_response') continue;
    const v = c.value;
    if (v?.id !== callId || v?.name !== JS_APPROVER_TOOL || typeof v.response?.approved !== 'boolean') continue;
    return { approved: v.response.approved, args: v.response.args };
  }
  return undefined;
}

/**
 * Books a flight once the user approves its proposed call, and — like most
 * agents, ADK's among them — answers in text without echoing the call's
 * result (no function_response of its own).
 *
 * First turn:  Task{SUBMITTED} → Status{WORKING} → Status{INPUT_REQUIRED, parts: text JS_APPROVER_QUESTION,
 *              data {id: "call-book-<taskId>", name: "book_flight", args: jsBookingArgs()}
 *              metadata {adk_type: "function_call", adk_is_long_running: true}}
 * Follow-up with a function_response {id, name, response: {approved, args?}}:
 *              Task{INPUT_REQUIRED} → Status{WORKING} → Artifact{"booking", append=false, lastChunk=true,
 *              jsBookedAnswer(args) or JS_APPROVER_DENIED} → Status{COMPLETED}
 * A follow-up without a decision asks again.
 */
export class QuietApproverExecutor extends Base {
  async script(turn, rc) {
    turn.task();
    turn.status(TaskState.TASK_STATE_WORKING);
    if (!(await turn.pause())) return;
    const callId = `call-book-${rc.taskId}`;
    const resuming = rc.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED;
    const decision = resuming ? decisionFrom(rc.userMessage, callId) : undefined;
    if (!decision) {
      turn.status(TaskState.TASK_STATE_INPUT_REQUIRED, JS_APPROVER_QUESTION, [functionCallPart(callId, JS_APPROVER_TOOL, jsBookingArgs())]);
      return;
    }
    const text = decision.approved ? jsBookedAnswer(decision.args && Object.keys(decision.args).length > 0 ? decision.args : jsBookingArgs()) : JS_APPROVER_DENIED;
    turn.artifact(randomUUID(), 'booking', text, false, true);
    turn.status(TaskState.TASK_STATE_COMPLETED);
  }
}

/**
 * A v1.0 card in ProtoJSON form (the 1.3.0 card handler serves the object as
 * written). `interfaces` is a list of {url, protocolBinding}.
 */
export function card(name, description, interfaces) {
  return {
    name,
    description,
    supportedInterfaces: interfaces.map((i) => ({
      url: i.url,
      protocolBinding: i.protocolBinding,
      tenant: '',
      protocolVersion: '1.0',
    })),
    provider: { organization: 'a2a-agui-bridge conformance', url: 'https://example.com/conformance' },
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: name,
        name,
        description,
        tags: ['conformance'],
        examples: [],
        inputModes: ['text/plain'],
        outputModes: ['text/plain'],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}
