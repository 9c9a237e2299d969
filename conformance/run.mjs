// The conformance runner: real @ag-ui/client generations (1.0.0, 0.0.59,
// 0.0.36) run every scenario of scenarios.mjs through the real bridge, in
// front of the Go demo agents and the @a2a-js/sdk agents.
//
//   node conformance/run.mjs [--only REGEX] [--clients 1.0.0,0.0.36] [--timeout MS] [--no-build] [--verbose]
//   npm test --prefix conformance
//
// It builds ./cmd/bridge and ./examples/cmd/demo-agents into conformance/.work,
// starts both agent processes, writes conformance/.work/bridge.yaml, starts
// `bridge serve`, waits for /readyz, then prints one line per (scenario, client)
// and LAST "N passed, M failed". Exit code 1 if anything failed.
// Logs of every child are kept in conformance/.work/*.log.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { CLIENT_VERSIONS, TRANSPORTS, evidence, loadClient, runScenario, shape, withAuthorizeURL, withCancelsURL } from './lib/harness.mjs';
import { firstJSONLine, freePort, run, start, stopAll, tail, waitReady } from './lib/procs.mjs';
import { bridgeAgents, bridgeTeams, scenarios } from './scenarios.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const work = path.join(here, '.work');
const rel = (p) => path.relative(process.cwd(), p) || '.';

const { values: opts } = parseArgs({
  options: {
    only: { type: 'string' },
    clients: { type: 'string' },
    timeout: { type: 'string', default: process.env.CONFORMANCE_RUN_TIMEOUT_MS ?? '20000' },
    'no-build': { type: 'boolean', default: false },
    verbose: { type: 'boolean', short: 'v', default: false },
    transports: { type: 'string' },
  },
});
const transports = opts.transports ? opts.transports.split(',').map((s) => s.trim()) : TRANSPORTS;
for (const t of transports) {
  if (!TRANSPORTS.includes(t)) throw new Error(`unknown transport ${t}; known: ${TRANSPORTS.join(', ')}`);
}
const runTimeoutMs = Number(opts.timeout);
const clientVersions = opts.clients ? opts.clients.split(',').map((s) => s.trim()) : CLIENT_VERSIONS;
for (const v of clientVersions) {
  if (!CLIENT_VERSIONS.includes(v)) throw new Error(`unknown client ${v}; known: ${CLIENT_VERSIONS.join(', ')}`);
}
const only = opts.only ? new RegExp(opts.only) : null;

/**
 * The (scenario, client, transport) runs this invocation makes. Over
 * WebSocket a scenario must also give the event sequence it gave over SSE
 * with the same client, so the SSE run comes first.
 */
const plan = [];
for (const s of scenarios) {
  if (only && !only.test(s.name)) continue;
  for (const v of clientVersions) {
    if (s.clients && !s.clients.includes(v)) continue;
    for (const t of transports) plan.push({ s, v, t });
  }
}

const say = (line) => process.stdout.write(line + '\n');
const logs = {
  js: path.join(work, 'js-agents.log'),
  frameworks: path.join(work, 'framework-agents.log'),
  go: path.join(work, 'demo-agents.log'),
  bridge: path.join(work, 'bridge.log'),
};

function yamlString(s) {
  return JSON.stringify(String(s)); // a JSON string is a valid YAML double-quoted scalar
}

function bridgeConfig(port, agents, teams) {
  const lines = [
    '# Written by conformance/run.mjs for one run; do not edit.',
    `listen: ${yamlString(`127.0.0.1:${port}`)}`,
    'store: {kind: memory}',
    'agents:',
  ];
  for (const a of agents) {
    lines.push(`  - name: ${yamlString(a.name)}`, `    url: ${yamlString(a.url)}`);
    if (a.card) lines.push(`    card: ${yamlString(a.card)}`);
    if (a.transports) lines.push(`    transports: [${a.transports.map(yamlString).join(', ')}]`);
    if (a.a2ui) lines.push(`    a2ui: ${yamlString(a.a2ui)}`);
  }
  if (teams.length > 0) lines.push('teams:');
  for (const t of teams) {
    lines.push(`  - name: ${yamlString(t.name)}`, `    strategy: ${yamlString(t.strategy)}`, `    members: [${t.members.map(yamlString).join(', ')}]`);
  }
  return lines.join('\n') + '\n';
}

/**
 * setup builds and starts everything. Resolves to {base, missing}: the
 * bridge's base URL and, per agent process that could not start, the reason
 * (its scenarios then fail with that reason while the others still run).
 * Throws when the bridge itself cannot run.
 */
async function setup() {
  fs.mkdirSync(work, { recursive: true });
  const missing = {};

  // The JS agents start while Go compiles. Their stdin is a pipe that closes
  // when this process dies, however it dies.
  const js = start(process.execPath, [path.join(here, 'agents', 'serve.mjs'), '--exit-on-stdin-close'], {
    cwd: here,
    logFile: logs.js,
    captureStdout: true,
  });
  const jsReady = firstJSONLine(js, 30_000, 'JS agents (agents/serve.mjs)');
  jsReady.catch(() => {}); // awaited below; avoid an unhandled rejection while Go builds

  // The ADK JS and Mastra agents: their own package (frameworks/package.json),
  // their own process, started the same way.
  const fw = start(process.execPath, [path.join(here, 'frameworks', 'serve.mjs'), '--exit-on-stdin-close'], {
    cwd: path.join(here, 'frameworks'),
    logFile: logs.frameworks,
    captureStdout: true,
  });
  const fwReady = firstJSONLine(fw, 60_000, 'framework agents (frameworks/serve.mjs)');
  fwReady.catch(() => {});

  const bridgeBin = path.join(work, 'bridge');
  const demoBin = path.join(work, 'demo-agents');
  const build = !opts['no-build'] || !fs.existsSync(bridgeBin) || !fs.existsSync(demoBin);
  if (build) say(`building ./examples/cmd/demo-agents and ./cmd/bridge into ${rel(work)} …`);

  let goAgents = {};
  let goTeams = [];
  try {
    if (build) await run('go', ['build', '-o', demoBin, './examples/cmd/demo-agents'], { cwd: root });
    const goProc = start(demoBin, ['--listen', '127.0.0.1:0'], { cwd: root, logFile: logs.go, captureStdout: true });
    const ann = await firstJSONLine(goProc, 30_000, 'Go demo agents');
    goProc.stdout.resume(); // keep draining so a chatty child never blocks on a full pipe
    if (!ann?.agents || typeof ann.agents !== 'object') throw new Error(`unexpected announcement ${JSON.stringify(ann)}`);
    goAgents = ann.agents;
    goTeams = ann.teams ?? [];
  } catch (err) {
    missing.go = `Go demo agents unavailable: ${err.message.split('\n').slice(0, 3).join(' | ')}`;
    say(missing.go);
  }

  let jsAgents = {};
  try {
    const ann = await jsReady;
    js.stdout.resume();
    if (!ann?.agents || typeof ann.agents !== 'object') throw new Error(`unexpected announcement ${JSON.stringify(ann)}`);
    jsAgents = ann.agents;
  } catch (err) {
    missing.js = `JS agents unavailable: ${err.message} (log: ${rel(logs.js)}; try node conformance/agents/selfcheck.mjs)`;
    say(missing.js);
  }

  let fwAgents = {};
  try {
    const ann = await fwReady;
    fw.stdout.resume();
    if (!ann?.agents || typeof ann.agents !== 'object') throw new Error(`unexpected announcement ${JSON.stringify(ann)}`);
    fwAgents = ann.agents;
  } catch (err) {
    missing.frameworks = `framework agents unavailable: ${err.message} (log: ${rel(logs.frameworks)}; did npm ci --prefix conformance/frameworks run?)`;
    say(missing.frameworks);
  }

  if (build) await run('go', ['build', '-o', bridgeBin, './cmd/bridge'], { cwd: root });
  const port = await freePort();
  const configFile = path.join(work, 'bridge.yaml');
  const agents = bridgeAgents(goAgents, jsAgents, fwAgents);
  if (agents.length === 0) throw new Error(Object.values(missing).join('; '));
  const teams = bridgeTeams(goTeams, agents);
  fs.writeFileSync(configFile, bridgeConfig(port, agents, teams));
  const bridge = start(bridgeBin, ['serve', '--config', configFile], { cwd: root, logFile: logs.bridge });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(`${base}/readyz`, bridge, 60_000, 'bridge');
  say(`bridge ready at ${base} (config ${rel(configFile)}, logs in ${rel(work)})`);
  return { base, missing, configured: new Set([...agents, ...teams].map((a) => a.name)), goAgents, jsAgents };
}

/**
 * readmeSnippet runs docs/http.md's Node WebSocket snippet (the js block after
 * the ws-node-snippet marker) against the bridge's streamer, with the real
 * @ag-ui/client 1.0.0: what a user copies must work. Resolves to the
 * problems.
 */
async function readmeSnippet(base) {
  const readme = fs.readFileSync(path.join(root, 'docs', 'http.md'), 'utf8');
  const m = /<!-- ws-node-snippet[^>]*-->\s*```js\n([\s\S]*?)```/.exec(readme);
  if (!m) return ['docs/http.md has no ws-node-snippet block'];
  const code = m[1]
    .replaceAll("'@ag-ui/client'", "'agui-client-1.0.0'")
    .replaceAll('ws://127.0.0.1:8080', base.replace(/^http/, 'ws'));
  const file = path.join(work, 'readme-ws-snippet.mjs');
  fs.writeFileSync(file, code);
  try {
    const out = await run(process.execPath, [file], { cwd: here, timeoutMs: runTimeoutMs });
    const want = 'You said: Hello. Here is a streamed answer.';
    return out.includes(want) ? [] : [`the snippet printed ${JSON.stringify(out)}, want ${JSON.stringify(want)}`];
  } catch (err) {
    return [`the snippet failed: ${err.message.split('\n').slice(0, 6).join(' | ')}`];
  }
}

/** label names a run: the client generation, and the transport when it is not SSE. */
const label = (v, t) => (t === 'sse' ? v : `${v} ${t}`);

let passed = 0;
let failed = 0;
let exitCode = 1;
try {
  // Import every client first: an import error is a setup problem, not 3×N failures.
  for (const v of clientVersions) await loadClient(v);

  let env;
  try {
    env = await setup();
  } catch (err) {
    say(`setup failed: ${err.message}`);
    for (const [name, file] of Object.entries(logs)) {
      if (fs.existsSync(file) && fs.statSync(file).size > 0) say(`--- ${name} log (${rel(file)}), last lines:\n${tail(file)}`);
    }
    for (const { s, v, t } of plan) say(`FAIL ${s.name} [${label(v, t)}]: not run (setup failed)`);
    failed = plan.length;
  }

  if (env) {
    const whyMissing = Object.values(env.missing).join('; ') || 'not in the agent announcements';
    const sseShapes = new Map();
    for (const { s, v, t } of plan) {
      if (!env.configured.has(s.agent)) {
        failed++;
        say(`FAIL ${s.name} [${label(v, t)}]: agent ${s.agent} not configured (${whyMissing})`);
        continue;
      }
      const url = `${env.base}/agents/${s.agent}`;
      let result;
      try {
        // A sign-in row reaches its Go agent directly, at the URL the demo agents announced;
        // a cancel row reads its agent's CancelTask log the same way.
        let row = s.resume?.authorize ? withAuthorizeURL(s, env.goAgents[s.resume.authorize.agent]?.url) : s;
        row = withCancelsURL(row, (env.goAgents[s.agent] ?? env.jsAgents[s.agent])?.url);
        result = await runScenario(row, v, url, runTimeoutMs, t);
      } catch (err) {
        result = { ok: false, problems: [`harness error: ${err?.stack ?? err}`], runs: [] };
      }
      const key = `${s.name} ${v}`;
      const shapeOf = (r) => shape(r, { cutText: s.cancel?.when === 'mid-stream' });
      if (t === 'sse' && result.ok) sseShapes.set(key, shapeOf(result));
      if (t === 'ws' && result.ok && sseShapes.has(key) && sseShapes.get(key) !== shapeOf(result)) {
        result.ok = false;
        result.problems.push(`the event sequence over WebSocket differs from SSE:\n${shapeOf(result)}\n--- over SSE ---\n${sseShapes.get(key)}`);
      }
      const ms = result.runs.reduce((n, r) => n + r.ms, 0);
      if (result.ok) {
        passed++;
        say(`ok   ${s.name} [${label(v, t)}] (${ms} ms)`);
      } else {
        failed++;
        say(`FAIL ${s.name} [${label(v, t)}]: ${result.problems.join('; ')}`);
      }
      if (!result.ok || opts.verbose) for (const l of evidence(result)) say(`       ${l}`);
    }
  }
  if (env && transports.includes('ws') && (!only || only.test('readme-ws-node-snippet'))) {
    const problems = await readmeSnippet(env.base);
    if (problems.length === 0) {
      passed++;
      say('ok   readme-ws-node-snippet [1.0.0 ws]');
    } else {
      failed++;
      say(`FAIL readme-ws-node-snippet [1.0.0 ws]: ${problems.join('; ')}`);
    }
  }
  exitCode = failed > 0 ? 1 : 0;
} catch (err) {
  say(`runner error: ${err?.stack ?? err}`);
  failed = Math.max(failed, plan.length - passed);
} finally {
  await stopAll();
}
say(`${passed} passed, ${failed} failed`);
process.exit(exitCode);
