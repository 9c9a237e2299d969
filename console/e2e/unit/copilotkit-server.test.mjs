// The CopilotKit example's runtime server (examples/copilotkit/server.mjs)
// refuses to start, with a message that says why, when its flags are bad or
// the bridge it should host is not there. These cases fail before the
// runtime is loaded, so they need no npm install; the browser tests cover
// the server that starts.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { freePort } from '../../../conformance/lib/procs.mjs';

const server = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../examples/copilotkit/server.mjs');

// startServer runs server.mjs to its exit; resolves {code, stdout, stderr}.
function startServer(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [server, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, COPILOTKIT_TELEMETRY_DISABLED: 'true' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

// fakeBridge answers GET /agents with status and body.
async function fakeBridge(t, status, body) {
  const srv = http.createServer((req, res) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(body));
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => srv.close());
  return `http://127.0.0.1:${srv.address().port}`;
}

test('a --listen without a port is refused', async () => {
  const { code, stderr, stdout } = await startServer(['--listen', 'localhost', '--bridge', 'http://127.0.0.1:9']);
  assert.equal(code, 1);
  assert.match(stderr, /--listen localhost: want HOST:PORT/);
  assert.equal(stdout, '', 'no ready line');
});

test('a bridge that is not there is named, with how to start one', async () => {
  const port = await freePort(); // free, so nothing listens there
  const { code, stderr } = await startServer(['--listen', '127.0.0.1:0', '--bridge', `http://127.0.0.1:${port}`]);
  assert.equal(code, 1);
  assert.match(stderr, new RegExp(`cannot reach the bridge at http://127\\.0\\.0\\.1:${port} \\(GET /agents: ECONNREFUSED\\)`));
  assert.match(stderr, /go run \.\/cmd\/bridge demo/);
});

test('a bridge that answers GET /agents with an error status', async (t) => {
  const bridge = await fakeBridge(t, 401, '{"error":{"code":"unauthorized","message":"missing API key"}}');
  const { code, stderr } = await startServer(['--listen', '127.0.0.1:0', '--bridge', bridge]);
  assert.equal(code, 1);
  assert.match(stderr, /GET http:\/\/127\.0\.0\.1:\d+\/agents: HTTP 401 .*missing API key/);
});

test('a bridge with no agents', async (t) => {
  const bridge = await fakeBridge(t, 200, '{"agents":[]}');
  const { code, stderr } = await startServer(['--listen', '127.0.0.1:0', '--bridge', bridge]);
  assert.equal(code, 1);
  assert.match(stderr, /listed no agents/);
});

test('a server that is not a bridge', async (t) => {
  const bridge = await fakeBridge(t, 200, '<html>hello</html>');
  const { code, stderr } = await startServer(['--listen', '127.0.0.1:0', '--bridge', bridge]);
  assert.equal(code, 1);
  assert.match(stderr, /the answer is not JSON \(is http:\/\/127\.0\.0\.1:\d+ a bridge\?\)/);
});
