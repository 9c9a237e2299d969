// The TypeScript peer, @ag-ui/a2a 0.0.6, hosted as an AG-UI SSE service so
// that cmd/bridge-bench can load it exactly like the bridge.
//
//   node bench/peer/server.mjs --agent http://127.0.0.1:PORT/ [--listen 127.0.0.1:0]
//
// Once listening it prints one JSON line, {"url":"http://127.0.0.1:PORT/"}.
//   POST /run     body: RunAgentInput → text/event-stream, one `data:` frame per event
//   GET  /readyz  200 once the agent card has been read
// It exits on SIGTERM or SIGINT.
//
// Each request runs a new A2AAgent, because an AG-UI agent object holds one
// conversation (messages, state) and @ag-ui/a2a keeps a per-instance id map
// that is never cleared. The agents share one A2AClient (@a2a-js/sdk 0.2.5),
// so the card is read once, as a host would; each agent gets its own view of
// it (Object.create), because the A2AAgent constructor wraps the client's
// sendMessage/sendMessageStream in place to add its A2UI extension header, and
// on a shared client those wrappers would pile up one per request. This is
// the peer's best case: no per-request card fetch, no growing wrapper chain.
//
// agent.run(input) is the adapter's own event stream, which a host such as
// CopilotKit's runtime feeds to the client; nothing is added or verified here.

import http from "node:http";
import { parseArgs } from "node:util";
import { A2AClient } from "@a2a-js/sdk/client";
import { A2AAgent } from "@ag-ui/a2a";
import { EventEncoder } from "@ag-ui/encoder";

const { values: args } = parseArgs({
  options: {
    agent: { type: "string" },
    listen: { type: "string", default: "127.0.0.1:0" },
  },
});
if (!args.agent) {
  console.error("usage: node server.mjs --agent URL [--listen HOST:PORT]");
  process.exit(2);
}

// The bench agent serves its union card (v1.0 fields plus the v0.3 `url`)
// at the v1.0 well-known path; 0.2.5's default is the older agent.json.
const client = new A2AClient(args.agent, ".well-known/agent-card.json");
let ready = false;
client.getAgentCard().then(
  () => {
    ready = true;
  },
  (err) => {
    console.error("reading the agent card failed:", err);
    process.exit(1);
  },
);

const encoder = new EventEncoder({ accept: "text/event-stream" });

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

async function run(req, res) {
  let input;
  try {
    input = JSON.parse(await readBody(req));
  } catch (err) {
    res.writeHead(400, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ error: { code: "invalid_input", message: String(err) } }));
    return;
  }
  const agent = new A2AAgent({ a2aClient: Object.create(client) });
  res.writeHead(200, {
    "Content-Type": encoder.getContentType(),
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
  });
  agent.run(input).subscribe({
    next: (event) => res.write(encoder.encodeSSE(event)),
    error: (err) => {
      // run() has already emitted RUN_ERROR before erroring.
      console.error("run failed:", err?.message ?? err);
      res.end();
    },
    complete: () => res.end(),
  });
}

const server = http.createServer((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (req.method === "GET" && path === "/readyz") {
    res.writeHead(ready ? 200 : 503).end();
    return;
  }
  if (req.method === "POST" && path === "/run") {
    run(req, res).catch((err) => {
      console.error("run:", err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
    return;
  }
  res.writeHead(404).end();
});
// Streams last as long as the agent takes; no request timeout.
server.requestTimeout = 0;

const [host, port] = [args.listen.slice(0, args.listen.lastIndexOf(":")), Number(args.listen.slice(args.listen.lastIndexOf(":") + 1))];
server.listen(port, host, () => {
  const { address, port } = server.address();
  process.stdout.write(JSON.stringify({ url: `http://${address}:${port}/` }) + "\n");
});

for (const sig of ["SIGTERM", "SIGINT"]) {
  process.on(sig, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
