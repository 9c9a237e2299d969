// Starts the framework agents (ADK JS and Mastra, each on its own
// 127.0.0.1 ephemeral port), prints ONE JSON line
//   {"agents":{"adk":{"url":…},"mastra":{"url":…,"card":…}}}
// on stdout, then serves until killed (SIGTERM/SIGINT) or until stdin closes
// when started with --exit-on-stdin-close (so a crashed parent leaves no
// orphan). Logs go to stderr only, so stdout stays machine-readable. Same
// contract as ../agents/serve.mjs; separate because these agents need the
// frameworks' own dependency trees (./package.json).

import { startAdk } from './adk.mjs';
import { startMastra } from './mastra.mjs';

// The frameworks log with console.log; keep stdout for the one JSON line.
console.log = (...args) => console.error(...args);
console.info = (...args) => console.error(...args);

const adk = await startAdk();
const mastra = await startMastra();
process.stdout.write(JSON.stringify({ agents: { adk: { url: adk.url }, mastra: { url: mastra.url, card: mastra.card } } }) + '\n');

let closing = false;
const shutdown = async () => {
  if (closing) return;
  closing = true;
  const timer = setTimeout(() => process.exit(0), 2000);
  timer.unref();
  try {
    await Promise.all([adk.close(), mastra.close()]);
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
