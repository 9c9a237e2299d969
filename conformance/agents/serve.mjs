// Starts every JS agent on 127.0.0.1 ephemeral ports, prints ONE JSON line
//   {"agents":{"js-streamer":{"url":"http://127.0.0.1:P/js-streamer/", ...}, ...}}
// on stdout, then serves until killed (SIGTERM/SIGINT) or until stdin closes
// when started with --exit-on-stdin-close (so a crashed parent leaves no orphan).
// Logs go to stderr only, so stdout stays machine-readable.

import { startAgents } from './agents.mjs';

// The SDKs log with console.log; keep stdout for the one JSON line.
console.log = (...args) => console.error(...args);
console.info = (...args) => console.error(...args);

const { agents, close } = await startAgents();
process.stdout.write(JSON.stringify({ agents }) + '\n');

let closing = false;
const shutdown = async () => {
  if (closing) return;
  closing = true;
  const timer = setTimeout(() => process.exit(0), 2000);
  timer.unref();
  try {
    await close();
  } finally {
    process.exit(0);
  }
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
if (process.argv.includes('--exit-on-stdin-close')) {
  process.stdin.on('end', shutdown);
  process.stdin.on('error', shutdown);
  process.stdin.resume();
}
