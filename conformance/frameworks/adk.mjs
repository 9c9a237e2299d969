// An A2A agent built with Google ADK for JS (@google/adk 2.0.0) and served
// by ADK's own toA2a() — the stack a user of ADK deploys — with a scripted
// model instead of Gemini, so it needs no network and answers the same way
// every time. What it does is chosen by the user's text (texts.mjs):
//
//   "weather …"  calls get_weather (a FunctionTool ADK runs itself: a
//                function_call artifact, then a function_response artifact),
//                then streams the answer built from the tool's result;
//   "book …"     calls book_trip, a LongRunningFunctionTool: ADK returns no
//                response for it, so the task stops INPUT_REQUIRED until the
//                user sends a function_response for that call id; the model
//                then answers from the decision (approved, edited, denied);
//   "fail …"     the model reports an error (errorCode), as Gemini does when
//                it refuses or is overloaded;
//   anything     streams "ADK here. You said: <text>." in partial chunks
//   else         followed by ADK's final full repeat.

import http from 'node:http';

import { BaseLlm, FunctionTool, LlmAgent, LogLevel, LongRunningFunctionTool, setLogger, toA2a } from '@google/adk';
import { z } from 'zod';

import { adk as texts } from './texts.mjs';

// ADK's default logger prints to stdout, which the serve.mjs contract keeps
// for its one JSON line: route it to stderr.
const stderrLogger = {
  level: LogLevel.INFO,
  log(level, ...args) {
    if (level >= this.level) process.stderr.write(`[adk ${LogLevel[level]}] ${args.map(String).join(' ')}\n`);
  },
  debug(...a) { this.log(LogLevel.DEBUG, ...a); },
  info(...a) { this.log(LogLevel.INFO, ...a); },
  warn(...a) { this.log(LogLevel.WARN, ...a); },
  error(...a) { this.log(LogLevel.ERROR, ...a); },
  setLogLevel(level) { this.level = level; },
};
setLogger(stderrLogger);

/** lastUserParts is what the user (or the tool runner) said last. */
function lastUserParts(llmRequest) {
  const contents = llmRequest.contents ?? [];
  for (let i = contents.length - 1; i >= 0; i--) {
    if (contents[i].role === 'user') return contents[i].parts ?? [];
  }
  return [];
}

/** chunks splits an answer the way a streaming model sends it: a few words at a time. */
function chunks(text) {
  return text.match(/\S+\s*/g) ?? [text];
}

/**
 * ScriptedLlm is a BaseLlm whose replies are a function of the request: no
 * network, same answer every time. With stream=true (toA2a runs with SSE
 * streaming) a text answer comes as partial responses, then the full text
 * once more with partial=false — what Gemini's streaming gives ADK.
 */
class ScriptedLlm extends BaseLlm {
  constructor() {
    super({ model: 'scripted' });
  }

  async *generateContentAsync(llmRequest, stream = false) {
    const parts = lastUserParts(llmRequest);
    const response = parts.find((p) => p.functionResponse)?.functionResponse;
    if (response) {
      yield* this.say(texts.afterTool(response.name, response.response), stream);
      return;
    }
    const text = parts.map((p) => p.text ?? '').join('').trim();
    const script = texts.script(text);
    if (script.error) {
      yield { errorCode: script.error.code, errorMessage: script.error.message, turnComplete: true };
      return;
    }
    if (script.call) {
      yield {
        content: { role: 'model', parts: [{ functionCall: { name: script.call.name, args: script.call.args } }] },
        turnComplete: true,
      };
      return;
    }
    yield* this.say(script.say, stream);
  }

  async *say(text, stream) {
    if (stream) {
      for (const c of chunks(text)) {
        yield { content: { role: 'model', parts: [{ text: c }] }, partial: true };
      }
    }
    yield { content: { role: 'model', parts: [{ text }] }, partial: false, turnComplete: true };
  }

  async connect() {
    throw new Error('ScriptedLlm has no live mode');
  }
}

const getWeather = new FunctionTool({
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => texts.weather(city),
});

// ADK's long-running tool: its function may return nothing, and ADK then
// waits for the client to send the call's function_response.
const bookTrip = new LongRunningFunctionTool({
  name: 'book_trip',
  description: 'Books a trip once the user approves it.',
  parameters: z.object({ destination: z.string(), nights: z.number() }),
  execute: () => undefined,
});

/**
 * startAdk serves the ADK agent on 127.0.0.1 (an ephemeral port) with
 * toA2a(): card at <url>.well-known/agent-card.json, JSON-RPC at
 * <url>jsonrpc. Resolves to {url, close()}.
 */
export async function startAdk() {
  const agent = new LlmAgent({
    name: 'adk_agent',
    description: 'An ADK JS agent with a scripted model: streams text, checks the weather, books trips after approval.',
    model: new ScriptedLlm(),
    instruction: 'Answer the user.',
    tools: [getWeather, bookTrip],
  });
  const server = http.createServer();
  const port = await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
  // toA2a writes the card's URLs from host and port, so it runs after listen.
  const app = await toA2a(agent, { host: '127.0.0.1', port, allowUnauthenticated: true });
  server.on('request', app);
  const close = async () => {
    server.closeAllConnections?.();
    await new Promise((r) => server.close(() => r()));
  };
  return { url: `http://127.0.0.1:${port}/`, close };
}
