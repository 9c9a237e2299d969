// An A2A agent built with Mastra (@mastra/core 1.71.0) and served by the A2A
// routes of @mastra/server 1.69.0 (the newest server release for core 1.x;
// its peer range is core >=1.58 <2) — what a Mastra user deploys — with a
// scripted language model instead of a provider, so it needs no network.
// What it does is chosen by the user's text (texts.mjs):
//
//   "weather …"      calls get_weather, which Mastra runs itself, then
//                    answers from its result;
//   "book …"         calls book_trip, whose execute() suspends with a payload
//                    and a resumeSchema ({approved, editedArgs?}): the task
//                    stops INPUT_REQUIRED until a follow-up message on the
//                    same task carries the resume data;
//   "fail …"         the model's stream errors, as a provider does on an
//                    outage;
//   "my name is X"   remembered through Mastra's memory (thread = the A2A
//   "what is my      contextId) and used to answer the second question;
//    name?"
//   anything else    streams "Mastra here. You said: <text>."
//
// The routes are mounted on a plain Node http server by a thin adapter
// (mastraA2AHandler below): @mastra/server ships the routes, not a listener.

import http from 'node:http';

import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { RequestContext } from '@mastra/core/request-context';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { Memory } from '@mastra/memory';
import { InMemoryTaskStore } from '@mastra/server/a2a/store';
import { SERVER_ROUTES } from '@mastra/server/server-adapter';
import { z } from 'zod';

import { mastra as texts } from './texts.mjs';

export const MASTRA_AGENT_ID = 'mastra-agent';
const PREFIX = '/api';

/** chunks splits an answer the way a streaming model sends it: a few words at a time. */
function chunks(text) {
  return text.match(/\S+\s*/g) ?? [text];
}

/** textOf joins the text parts of a prompt message (LanguageModelV2 prompt). */
function textOf(message) {
  if (typeof message.content === 'string') return message.content;
  return (message.content ?? []).filter((p) => p.type === 'text').map((p) => p.text).join('');
}

/**
 * scriptedModel is a hand-written LanguageModelV2 (the AI SDK model spec
 * Mastra accepts): no network, same answer every time. doStream sends text
 * as several deltas, or one tool call; "fail" makes the stream error.
 */
function scriptedModel() {
  const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
  const plan = (prompt) => {
    const last = prompt[prompt.length - 1];
    const result = last?.role === 'tool' ? last.content.find((p) => p.type === 'tool-result') : undefined;
    if (result) return { say: texts.afterTool(result.toolName, result.output) };
    const users = prompt.filter((m) => m.role === 'user').map(textOf);
    return texts.script(users[users.length - 1] ?? '', users.slice(0, -1));
  };
  const parts = (step) => {
    if (step.error) return [{ type: 'stream-start', warnings: [] }, { type: 'error', error: new Error(step.error) }];
    if (step.call) {
      return [
        { type: 'stream-start', warnings: [] },
        { type: 'tool-call', toolCallId: `call-${crypto.randomUUID()}`, toolName: step.call.name, input: JSON.stringify(step.call.args) },
        { type: 'finish', finishReason: 'tool-calls', usage },
      ];
    }
    const id = crypto.randomUUID();
    return [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id },
      ...chunks(step.say).map((delta) => ({ type: 'text-delta', id, delta })),
      { type: 'text-end', id },
      { type: 'finish', finishReason: 'stop', usage },
    ];
  };
  return {
    specificationVersion: 'v2',
    provider: 'scripted',
    modelId: 'scripted',
    supportedUrls: {},
    async doGenerate({ prompt }) {
      const step = plan(prompt);
      if (step.error) throw new Error(step.error);
      const content = step.call
        ? [{ type: 'tool-call', toolCallId: `call-${crypto.randomUUID()}`, toolName: step.call.name, input: JSON.stringify(step.call.args) }]
        : [{ type: 'text', text: step.say }];
      return { content, finishReason: step.call ? 'tool-calls' : 'stop', usage, warnings: [] };
    },
    async doStream({ prompt }) {
      const list = parts(plan(prompt));
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const p of list) controller.enqueue(p);
            controller.close();
          },
        }),
      };
    },
  };
}

const getWeather = createTool({
  id: 'get_weather',
  description: 'Current weather for a city.',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => texts.weather(city),
});

// Suspends until the user decides; Mastra's A2A routes turn the suspension
// into INPUT_REQUIRED and the next message's data part into resumeData.
const bookTrip = createTool({
  id: 'book_trip',
  description: 'Books a trip once the user approves it.',
  inputSchema: z.object({ destination: z.string(), nights: z.number() }),
  suspendSchema: z.object({ question: z.string() }),
  resumeSchema: z.object({
    approved: z.boolean(),
    editedArgs: z.object({ destination: z.string().optional(), nights: z.number().optional() }).optional(),
  }),
  execute: async (input, context) => {
    const { resumeData, suspend } = context?.agent ?? {};
    if (!resumeData) return suspend?.({ question: texts.bookQuestion });
    if (!resumeData.approved) return { booked: false };
    const args = { ...input, ...(resumeData.editedArgs ?? {}) };
    return { booked: true, ...args };
  },
});

/**
 * mastraA2AHandler serves Mastra's two A2A routes (card and JSON-RPC) from a
 * Node http request, as Mastra's own server adapters do: the path parameter,
 * the JSON body (validated by the route's schema), a Fetch Request for the
 * headers (A2A-Version), an abort signal tied to the client's connection, and
 * the one task store every request shares.
 */
function mastraA2AHandler(mastraApp, taskStore) {
  const routes = SERVER_ROUTES.filter((r) => r.path === '/.well-known/:agentId/agent-card.json' || r.path === '/a2a/:agentId');
  const match = (method, pathname) => {
    for (const route of routes) {
      if (route.method !== method) continue;
      const pattern = new RegExp('^' + PREFIX + route.path.replace(':agentId', '([^/]+)').replaceAll('.', '\\.') + '$');
      const m = pattern.exec(pathname);
      if (m) return { route, agentId: decodeURIComponent(m[1]) };
    }
    return null;
  };
  return async (req, res) => {
    const url = new URL(req.url, `http://${req.headers.host}`);
    const found = match(req.method, url.pathname);
    if (!found) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const chunksIn = [];
    for await (const c of req) chunksIn.push(c);
    let body = {};
    if (req.method === 'POST') {
      try {
        body = JSON.parse(Buffer.concat(chunksIn).toString('utf8'));
      } catch (err) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `bad JSON: ${err.message}` }));
        return;
      }
      const checked = found.route.bodySchema?.safeParse(body);
      if (checked && !checked.success) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: checked.error.message }));
        return;
      }
      body = checked?.data ?? body;
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const request = new Request(url, { method: req.method, headers: req.headers });
    let response;
    try {
      response = await found.route.handler({
        ...body,
        mastra: mastraApp,
        agentId: found.agentId,
        requestContext: new RequestContext(),
        taskStore,
        abortSignal: abort.signal,
        request,
        routePrefix: PREFIX,
      });
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(err?.message ?? err) }));
      return;
    }
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) {
      res.end();
      return;
    }
    // Flush each chunk as Mastra produces it, so streaming stays streaming;
    // a body that breaks mid-stream cuts the connection (the headers are out).
    try {
      for await (const c of response.body) res.write(c);
      res.end();
    } catch (err) {
      res.destroy(err);
    }
  };
}

/**
 * startMastra serves the Mastra agent on 127.0.0.1 (an ephemeral port).
 * Resolves to {url, card, close()}: `card` is the card URL
 * (<url>api/.well-known/mastra-agent/agent-card.json), the JSON-RPC endpoint
 * is <url>api/a2a/mastra-agent.
 */
export async function startMastra() {
  const storage = new InMemoryStore();
  const agent = new Agent({
    id: MASTRA_AGENT_ID,
    name: 'Mastra agent',
    description: 'A Mastra agent with a scripted model: streams text, checks the weather, books trips after approval, remembers names.',
    instructions: 'Answer the user.',
    model: scriptedModel(),
    tools: { get_weather: getWeather, book_trip: bookTrip },
    memory: new Memory({ storage, options: { lastMessages: 20 } }),
  });
  const mastraApp = new Mastra({ agents: { [MASTRA_AGENT_ID]: agent }, storage, logger: false });
  const server = http.createServer(mastraA2AHandler(mastraApp, new InMemoryTaskStore()));
  const port = await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
  const url = `http://127.0.0.1:${port}/`;
  const close = async () => {
    server.closeAllConnections?.();
    await new Promise((r) => server.close(() => r()));
  };
  return { url, card: `${url}api/.well-known/${MASTRA_AGENT_ID}/agent-card.json`, close };
}
