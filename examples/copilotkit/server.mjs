// The CopilotKit runtime for the example: a small Node server that hosts every
// agent of a bridge as an AG-UI HttpAgent, with no LLM behind it (the empty
// service adapter), and serves the built React app from the same origin.
//
//   node server.mjs [--listen 127.0.0.1:4000] [--bridge http://127.0.0.1:8080] [--dist dist]
//
// Routes:
//   POST /api/copilotkit   the CopilotKit runtime (single-route transport)
//   GET  /healthz          200 once the bridge's agents are registered
//   GET  /*                the built app (dist/), index.html for "/"
//
// It reads the bridge's GET /agents once at start and registers one HttpAgent
// per agent, named as on the bridge (agent "asker" → POST {bridge}/agents/asker).
// When it is ready it prints one JSON line: {"url": "...", "agents": [...]}.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

// CopilotKit's runtime reports usage to CopilotKit's servers unless told not
// to; an example run on a laptop or in CI has no business doing that. Set
// before the runtime is imported, since it reads the variable at load time.
process.env.COPILOTKIT_TELEMETRY_DISABLED ??= 'true';


const here = path.dirname(fileURLToPath(import.meta.url));
const { values: opts } = parseArgs({
  options: {
    listen: { type: 'string', default: process.env.LISTEN || '127.0.0.1:4000' },
    bridge: { type: 'string', default: process.env.BRIDGE_URL || 'http://127.0.0.1:8080' },
    dist: { type: 'string', default: path.join(here, 'dist') },
  },
});

export const RUNTIME_PATH = '/api/copilotkit';
const bridge = opts.bridge.replace(/\/+$/, '');
const dist = path.resolve(opts.dist);

// How long to wait for the bridge's agent list before giving up at start.
const AGENT_LIST_TIMEOUT_MS = 10_000;

async function bridgeAgents() {
  let res;
  try {
    res = await fetch(`${bridge}/agents`, { signal: AbortSignal.timeout(AGENT_LIST_TIMEOUT_MS) });
  } catch (err) {
    throw new Error(`cannot reach the bridge at ${bridge} (GET /agents: ${err.cause?.code ?? err.cause?.errors?.[0]?.code ?? err.cause?.message ?? err.message}); start it with \`go run ./cmd/bridge demo\` or pass --bridge URL`);
  }
  if (!res.ok) throw new Error(`GET ${bridge}/agents: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
  let body;
  try {
    body = await res.json();
  } catch {
    throw new Error(`GET ${bridge}/agents: the answer is not JSON (is ${bridge} a bridge?)`);
  }
  const list = body?.agents;
  if (!Array.isArray(list) || list.length === 0) throw new Error(`GET ${bridge}/agents listed no agents`);
  const bad = list.find((a) => typeof a?.name !== 'string' || a.name === '');
  if (bad !== undefined) throw new Error(`GET ${bridge}/agents: an agent without a name: ${JSON.stringify(bad).slice(0, 200)}`);
  return list.map((a) => ({ name: a.name, description: typeof a.description === 'string' ? a.description : '' }));
}

function splitListen(addr) {
  const i = addr.lastIndexOf(':');
  if (i < 0) throw new Error(`--listen ${addr}: want HOST:PORT`);
  const port = Number(addr.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--listen ${addr}: bad port`);
  // [::1]:4000 → ::1, which is what server.listen wants.
  const host = addr.slice(0, i).replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  return { host, port };
}

const STATIC_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

function serveStatic(req, res) {
  let p;
  try {
    p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  } catch {
    res.writeHead(400, { 'Content-Type': 'text/plain' }).end('bad path');
    return;
  }
  const file = path.resolve(dist, '.' + (p.endsWith('/') ? p + 'index.html' : p));
  if (!file.startsWith(dist + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end(fs.existsSync(dist) ? 'not found' : `not built: run npm run build (no ${dist})`);
    return;
  }
  res.writeHead(200, { 'Content-Type': STATIC_TYPES[path.extname(file)] ?? 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
}

async function main() {
  const { host, port } = splitListen(opts.listen);
  // The bridge first: a wrong --bridge fails here, before the runtime's
  // few seconds of loading.
  const agentList = await bridgeAgents();
  const { CopilotRuntime, ExperimentalEmptyAdapter, copilotRuntimeNodeHttpEndpoint } = await import('@copilotkit/runtime');
  // The same @ag-ui/client version the runtime depends on (0.0.59, pinned in
  // package.json), so npm installs one copy and the runtime drives our agents
  // with its own classes.
  const { HttpAgent } = await import('@ag-ui/client');
  const agents = Object.fromEntries(
    agentList.map(({ name, description }) => [name, new HttpAgent({ agentId: name, description, url: `${bridge}/agents/${encodeURIComponent(name)}` })]),
  );
  const runtime = new CopilotRuntime({ agents });
  const handle = copilotRuntimeNodeHttpEndpoint({ runtime, serviceAdapter: new ExperimentalEmptyAdapter(), endpoint: RUNTIME_PATH });

  const server = http.createServer((req, res) => {
    const { pathname } = new URL(req.url, 'http://x');
    if (pathname === RUNTIME_PATH || pathname.startsWith(RUNTIME_PATH + '/')) {
      Promise.resolve(handle(req, res)).catch((err) => {
        console.error(`runtime: ${req.method} ${pathname}: ${err.stack ?? err}`);
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'runtime_error', message: String(err.message ?? err) } }));
      });
      return;
    }
    if (pathname === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ agents: agentList.map((a) => a.name) }));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'Content-Type': 'text/plain', Allow: 'GET, HEAD' }).end('method not allowed');
      return;
    }
    serveStatic(req, res);
  });
  // Streams stay open as long as the agent works; only idle keep-alive
  // connections and slow request headers are timed out.
  server.requestTimeout = 0;
  server.headersTimeout = 30_000;

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const addr = server.address();
  const url = `http://${addr.address}:${addr.port}`;
  process.stdout.write(JSON.stringify({ url, runtime: url + RUNTIME_PATH, bridge, agents: agentList.map((a) => a.name) }) + '\n');

  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err) => {
  console.error(`copilotkit runtime: ${err.message ?? err}`);
  process.exit(1);
});
