// startAgents serves every JS agent from one process: one HTTP listener on
// 127.0.0.1 carries the cards and JSON-RPC endpoints of all agents under a
// path prefix of their name (base URL http://127.0.0.1:PORT/<name>/, card at
// <base>.well-known/agent-card.json), and the gRPC agent gets its own gRPC
// listener, because a gRPC endpoint in a card is a bare host:port.

import http from 'node:http';
import express from 'express';
import { Server as GrpcServer, ServerCredentials } from '@grpc/grpc-js';

import { DefaultRequestHandler, InMemoryTaskStore } from 'a2a-sdk-1.3.0/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from 'a2a-sdk-1.3.0/server/express';
import { A2AService, grpcService } from 'a2a-sdk-1.3.0/server/grpc';

import { DefaultRequestHandler as DefaultRequestHandler03, InMemoryTaskStore as InMemoryTaskStore03 } from 'a2a-sdk-0.3.14/server';
import {
  UserBuilder as UserBuilder03,
  agentCardHandler as agentCardHandler03,
  jsonRpcHandler as jsonRpcHandler03,
  restHandler as restHandler03,
} from 'a2a-sdk-0.3.14/server/express';

import { AskerExecutor, ChatterExecutor, CounterExecutor, FailerExecutor, QuietApproverExecutor, StreamerExecutor, card } from './v1.mjs';
import { Asker03Executor, Streamer03Executor, card03 } from './v03.mjs';

const HOST = '127.0.0.1';
const CARD_PATH = '.well-known/agent-card.json';

/** The v1.0 agents served over JSON-RPC: name → [description, executor class]. */
const V1_JSONRPC = {
  'js-streamer': ['Streams its answer as text artifact chunks (@a2a-js/sdk 1.3.0, JSON-RPC).', StreamerExecutor],
  'js-chatter': ['Answers only in status messages; the final one repeats the text (@a2a-js/sdk 1.3.0).', ChatterExecutor],
  'js-failer': ['Always fails (@a2a-js/sdk 1.3.0).', FailerExecutor],
  'js-asker': ['Asks "Which city?" and answers on the next turn (@a2a-js/sdk 1.3.0).', AskerExecutor],
  'js-counter': ['Counts to 100, one chunk every 100ms; stops when cancelled (@a2a-js/sdk 1.3.0).', CounterExecutor],
  'js-quiet-approver': ['Proposes a booking call, books once approved, never echoes the result (@a2a-js/sdk 1.3.0).', QuietApproverExecutor],
};

/** The v0.3 agents (@a2a-js/sdk 0.3.14, JSON-RPC). */
const V03 = {
  'js03-streamer': ['Streams its answer as artifact chunks (@a2a-js/sdk 0.3.14, A2A v0.3).', Streamer03Executor],
  'js03-asker': ['Asks "Which city?" and answers on the next turn (@a2a-js/sdk 0.3.14, A2A v0.3).', Asker03Executor],
};

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => resolve(server.address().port));
  });
}

function bindGrpc(server) {
  return new Promise((resolve, reject) => {
    server.bindAsync(`${HOST}:0`, ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port)));
  });
}

/**
 * Starts all JS agents. Resolves to {agents: {name: {url, card}}, close()}.
 * `url` is the agent's base URL (what the bridge config takes).
 */
export async function startAgents() {
  const app = express();
  const server = http.createServer(app);
  const port = await listen(server);
  const base = `http://${HOST}:${port}`;
  const agents = {};

  // <base>/cancels lists the CancelTask calls the agent received: {taskIds: [...]}.
  const mountV1 = (name, agentCard, requestHandler, executor) => {
    app.use(`/${name}/${CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
    app.use(`/${name}/a2a/jsonrpc`, jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
    app.get(`/${name}/cancels`, (_req, res) => res.json({ taskIds: executor.cancels }));
    agents[name] = { url: `${base}/${name}/`, card: `${base}/${name}/${CARD_PATH}` };
  };

  for (const [name, [description, Executor]] of Object.entries(V1_JSONRPC)) {
    const c = card(name, description, [{ url: `${base}/${name}/a2a/jsonrpc`, protocolBinding: 'JSONRPC' }]);
    const executor = new Executor();
    mountV1(name, c, new DefaultRequestHandler(c, new InMemoryTaskStore(), executor), executor);
  }

  // The streamer again, over gRPC: its own card (only a GRPC interface) under
  // its own base URL, and its own gRPC listener. The card's address is only
  // known after binding, and the request handler keeps a reference to the
  // card object, so it is filled in after bindAsync.
  const grpcName = 'js-streamer-grpc';
  const grpcCard = card(grpcName, 'Streams its answer as text artifact chunks (@a2a-js/sdk 1.3.0, gRPC).', [
    { url: 'pending', protocolBinding: 'GRPC' },
  ]);
  const grpcExecutor = new StreamerExecutor();
  const grpcHandler = new DefaultRequestHandler(grpcCard, new InMemoryTaskStore(), grpcExecutor);
  const grpc = new GrpcServer();
  grpc.addService(A2AService, grpcService({ requestHandler: grpcHandler, userBuilder: UserBuilder.noAuthentication }));
  const grpcPort = await bindGrpc(grpc);
  grpcCard.supportedInterfaces[0].url = `${HOST}:${grpcPort}`;
  mountV1(grpcName, grpcCard, grpcHandler, grpcExecutor);
  agents[grpcName].grpc = `${HOST}:${grpcPort}`;

  for (const [name, [description, Executor]] of Object.entries(V03)) {
    const c = card03(name, description, `${base}/${name}/a2a/jsonrpc`);
    const requestHandler = new DefaultRequestHandler03(c, new InMemoryTaskStore03(), new Executor());
    app.use(`/${name}/${CARD_PATH}`, agentCardHandler03({ agentCardProvider: requestHandler }));
    app.use(`/${name}/a2a/jsonrpc`, jsonRpcHandler03({ requestHandler, userBuilder: UserBuilder03.noAuthentication }));
    agents[name] = { url: `${base}/${name}/`, card: `${base}/${name}/${CARD_PATH}` };
  }

  // The same v0.3 agents offering ONLY HTTP+JSON (the 0.3.14 REST server:
  // /v1/message:stream, kind-tagged JSON). The bridge reaches them through
  // a2a-go v2.4.0's v0.3 REST compat client.
  for (const [name03, [description, Executor]] of Object.entries(V03)) {
    const name = name03.replace('js03-', 'js03rest-');
    const url = `${base}/${name}/a2a/rest`;
    const c = { ...card03(name, description.replace('A2A v0.3', 'A2A v0.3, HTTP+JSON only'), url), preferredTransport: 'HTTP+JSON', additionalInterfaces: [{ url, transport: 'HTTP+JSON' }] };
    const requestHandler = new DefaultRequestHandler03(c, new InMemoryTaskStore03(), new Executor());
    app.use(`/${name}/${CARD_PATH}`, agentCardHandler03({ agentCardProvider: requestHandler }));
    app.use(`/${name}/a2a/rest`, restHandler03({ requestHandler, userBuilder: UserBuilder03.noAuthentication }));
    agents[name] = { url: `${base}/${name}/`, card: `${base}/${name}/${CARD_PATH}` };
  }

  const close = async () => {
    server.closeAllConnections?.();
    await new Promise((r) => server.close(() => r()));
    await new Promise((r) => grpc.tryShutdown(() => r()));
  };
  return { agents, close };
}
