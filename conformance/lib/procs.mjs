// Child processes of the runner: started with their output in log files under
// conformance/.work, all killed when the runner exits for any reason.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

const children = new Set();

function killAll(signal = 'SIGTERM') {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) {
      try {
        c.kill(signal);
      } catch {
        // already gone
      }
    }
  }
}

// 'exit' handlers must be synchronous: a signal is all we can send there.
process.on('exit', () => killAll('SIGKILL'));
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    killAll('SIGTERM');
    process.exit(128 + (sig === 'SIGINT' ? 2 : sig === 'SIGTERM' ? 15 : 1));
  });
}

/** stopAll asks every child to stop, and kills what is left after graceMs. */
export async function stopAll(graceMs = 3000) {
  const live = [...children].filter((c) => c.exitCode === null && c.signalCode === null);
  killAll('SIGTERM');
  await Promise.race([
    Promise.all(live.map((c) => new Promise((r) => c.once('exit', r)))),
    new Promise((r) => setTimeout(r, graceMs)),
  ]);
  killAll('SIGKILL');
}

/**
 * start spawns a long-running child whose stderr (and stdout unless
 * `captureStdout`) goes to logFile. Returns the ChildProcess.
 */
export function start(cmd, args, { cwd, logFile, captureStdout = false, env } = {}) {
  const log = fs.openSync(logFile, 'w');
  const child = spawn(cmd, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['pipe', captureStdout ? 'pipe' : log, log],
  });
  fs.closeSync(log); // the child holds its own descriptor
  children.add(child);
  child.once('exit', () => children.delete(child));
  child.once('error', () => children.delete(child));
  return child;
}

/** run executes a command to completion; rejects with its output on failure or after timeoutMs. */
export function run(cmd, args, { cwd, timeoutMs = 300_000, env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')}: timed out after ${timeoutMs} ms\n${out}`));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      children.delete(child);
      reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')}: exit ${code ?? signal}\n${out.trim()}`));
    });
  });
}

/**
 * firstJSONLine resolves with the first stdout line of `child` that parses
 * as JSON; rejects if the child exits first or after timeoutMs.
 */
export function firstJSONLine(child, timeoutMs, what) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const done = (fn, v) => {
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.off('exit', onExit);
      fn(v);
    };
    const onData = (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (!line.startsWith('{')) continue;
        try {
          return done(resolve, JSON.parse(line));
        } catch {
          // not JSON: keep reading
        }
      }
    };
    const onExit = (code, signal) => done(reject, new Error(`${what} exited (${code ?? signal}) before printing its JSON line`));
    const timer = setTimeout(() => done(reject, new Error(`${what} printed no JSON line within ${timeoutMs} ms`)), timeoutMs);
    child.stdout.on('data', onData);
    child.once('exit', onExit);
  });
}

/** freePort asks the kernel for a free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * waitReady polls url until it answers 200, the child exits, or deadlineMs passes.
 */
export async function waitReady(url, child, deadlineMs, what) {
  const deadline = Date.now() + deadlineMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before ${url} answered 200`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      const body = await res.text();
      if (res.status === 200) return;
      last = `HTTP ${res.status} ${body.slice(0, 300)}`;
    } catch (err) {
      last = err.cause?.code ?? err.message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: ${url} not ready within ${deadlineMs} ms (last: ${last})`);
}

/** tail returns the last n lines of a log file, for failure reports. */
export function tail(file, n = 30) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch {
    return '(no log)';
  }
}
