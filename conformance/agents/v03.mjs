// A2A v0.3 agents written with @a2a-js/sdk 0.3.14: a real v0.3 JSON-RPC
// server (kind-tagged objects, lower-case states, `final` on status updates),
// so the bridge's v0.3 path is tested against software it did not write.
//
// The 0.3 server ends a stream at the first Message or at a status update with
// final=true, so INPUT_REQUIRED and terminal states are published with final=true.

import { randomUUID } from 'node:crypto';
import { JS_ASKER_QUESTION, SCHEMA_MEDIA_TYPE, cityFrom, js03StreamerAnswer, jsAskerAnswer, jsCitySchema, splitWords } from './texts.mjs';

const TICK_MS = Number(process.env.CONFORMANCE_AGENT_TICK_MS ?? 5);
const now = () => new Date().toISOString();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function partsOf(message) {
  const texts = [];
  const datas = [];
  for (const p of message?.parts ?? []) {
    if (p?.kind === 'text') texts.push(p.text);
    else if (p?.kind === 'data') datas.push(p.data);
  }
  return { texts, datas };
}

class Turn {
  constructor(rc, bus) {
    this.rc = rc;
    this.bus = bus;
  }

  task() {
    const { rc } = this;
    if (rc.task) return; // 0.3.14 does not require the task again on a follow-up.
    this.bus.publish({
      kind: 'task',
      id: rc.taskId,
      contextId: rc.contextId,
      status: { state: 'submitted', timestamp: now() },
      history: [rc.userMessage],
    });
  }

  /** A status update; text, when set, becomes an agent message, followed by extraParts. */
  status(state, text, final = false, extraParts = []) {
    const { rc } = this;
    const status = { state, timestamp: now() };
    if (text) {
      status.message = {
        kind: 'message',
        role: 'agent',
        messageId: randomUUID(),
        taskId: rc.taskId,
        contextId: rc.contextId,
        parts: [{ kind: 'text', text }, ...extraParts],
      };
    }
    this.bus.publish({ kind: 'status-update', taskId: rc.taskId, contextId: rc.contextId, status, final });
  }

  artifact(artifactId, name, text, append, lastChunk) {
    const { rc } = this;
    this.bus.publish({
      kind: 'artifact-update',
      taskId: rc.taskId,
      contextId: rc.contextId,
      artifact: { artifactId, name, parts: [{ kind: 'text', text }] },
      append,
      lastChunk,
    });
  }
}

class Base {
  cancelled = new Set();

  cancelTask = async (taskId, bus) => {
    this.cancelled.add(taskId);
  };

  async execute(rc, bus) {
    const turn = new Turn(rc, bus);
    try {
      await this.script(turn, rc);
    } finally {
      this.cancelled.delete(rc.taskId);
      bus.finished();
    }
  }

  async pause(turn) {
    await sleep(TICK_MS);
    if (this.cancelled.has(turn.rc.taskId)) {
      turn.status('canceled', undefined, true);
      return false;
    }
    return true;
  }
}

/**
 * task{submitted} → status{working} → artifact{append=false} → artifact{append=true} …
 * → artifact{append=true, lastChunk=true} → status{completed, final}
 */
export class Streamer03Executor extends Base {
  async script(turn, rc) {
    turn.task();
    turn.status('working');
    const chunks = splitWords(js03StreamerAnswer(partsOf(rc.userMessage).texts.join(' ').trim()), 4);
    const id = randomUUID();
    for (let i = 0; i < chunks.length; i++) {
      if (!(await this.pause(turn))) return;
      turn.artifact(id, 'answer', chunks[i], i > 0, i === chunks.length - 1);
    }
    turn.status('completed', undefined, true);
  }
}

/**
 * First turn:  task{submitted} → status{working} → status{input-required, final, parts: text "Which city?",
 *              data jsCitySchema() with metadata {mediaType: "application/schema+json"} (v0.3 parts have no mediaType)}
 * Follow-up:   status{working} → artifact{"JS forecast for <city>: sunny."} → status{completed, final}
 */
export class Asker03Executor extends Base {
  async script(turn, rc) {
    turn.task();
    turn.status('working');
    if (!(await this.pause(turn))) return;
    const resuming = rc.task?.status?.state === 'input-required';
    const { texts, datas } = partsOf(rc.userMessage);
    const city = cityFrom(texts, datas);
    if (!resuming || city === '') {
      const schema = { kind: 'data', data: jsCitySchema(), metadata: { mediaType: SCHEMA_MEDIA_TYPE } };
      turn.status('input-required', JS_ASKER_QUESTION, true, [schema]);
      return;
    }
    turn.artifact(randomUUID(), 'forecast', jsAskerAnswer(city), false, true);
    turn.status('completed', undefined, true);
  }
}

/** A v0.3 card: one JSON-RPC endpoint in `url`. */
export function card03(name, description, url) {
  return {
    protocolVersion: '0.3.0',
    name,
    description,
    url,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url, transport: 'JSONRPC' }],
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: name, name, description, tags: ['conformance'] }],
  };
}
