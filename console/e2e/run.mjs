// Browser tests: the bridge's web console and the CopilotKit app, driven in
// real headless Chromium against a real `bridge demo` (no mocks anywhere).
//
//   node console/e2e/run.mjs [--only REGEX] [--no-build] [--no-app-build] [--verbose]
//
// --no-build skips every build; --no-app-build only the CopilotKit app's
// (make browsertest-deps has just built it).
//
// It builds ./cmd/bridge into console/e2e/.work and the CopilotKit app
// (examples/copilotkit, Vite), starts `bridge demo --listen 127.0.0.1:<free
// port>`, waits for /readyz, starts the app's CopilotKit runtime
// (examples/copilotkit/server.mjs, which hosts the demo's agents as HttpAgents
// and serves the built app) on another free port, and runs every scenario in a fresh browser context. Each scenario waits on DOM
// conditions, never on timers, and leaves a screenshot in
// artifacts/screenshots/<scenario>.png (…-failed.png when it failed). The last
// line is "N passed, M failed"; the exit code is 1 when anything failed.
//
// Chromium comes from Debian (/usr/bin/chromium, or $CHROMIUM): Playwright's
// own browser downloads do not work everywhere this runs, and playwright-core
// drives any recent Chromium over CDP.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { chromium } from 'playwright-core';

import { firstJSONLine, freePort, run, start, stopAll, tail, waitReady } from '../../conformance/lib/procs.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const work = path.join(here, '.work');
const shots = path.join(root, 'artifacts', 'screenshots');
const example = path.join(root, 'examples', 'copilotkit');

const { values: opts } = parseArgs({
  options: {
    only: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    'no-app-build': { type: 'boolean', default: false },
    verbose: { type: 'boolean', short: 'v', default: false },
  },
});
const only = opts.only ? new RegExp(opts.only) : null;
const say = (line) => process.stdout.write(line + '\n');

// Every wait is on a DOM condition; this only bounds how long one may take
// before the scenario fails (the counter agent streams for ten seconds).
const STEP_TIMEOUT_MS = 20_000;

// The flags that let Debian's Chromium run headless in a container whose
// network refuses outbound connections (background networking would retry
// them for ever). Playwright adds a fresh --user-data-dir per launch.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// ---------- helpers ----------

class Failure extends Error {}
function check(cond, message) {
  if (!cond) throw new Failure(message);
}

const occurrences = (haystack, needle) => haystack.split(needle).length - 1;

// counterNumbers reads "1 2 3 … n " back as numbers.
const counterNumbers = (text) => text.trim().split(/\s+/).filter(Boolean).map(Number);

function expectCounting(text, what) {
  const nums = counterNumbers(text);
  check(nums.length > 0, `${what}: no numbers in ${JSON.stringify(text)}`);
  nums.forEach((n, i) => check(n === i + 1, `${what}: number ${i + 1} is ${n} in ${JSON.stringify(text.slice(0, 200))} (something was shown twice or lost)`));
  return nums.length;
}

async function openConsole(page, bridge, someAgent = 'streamer') {
  await page.goto(`${bridge}/`);
  await page.locator(`[data-agent="${someAgent}"]`).waitFor();
}

async function pickAgent(page, name) {
  await page.locator(`[data-agent="${name}"]`).click();
  await page.locator(`[data-agent="${name}"][aria-pressed="true"]`).waitFor();
  await page.locator('#message:not([disabled])').waitFor();
}

async function send(page, text) {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
}

const status = (page, state) => page.locator(`#run-status[data-state="${state}"]`).waitFor();
const timelineText = (page) => page.locator('#timeline').innerText();
const assistantBody = (page) => page.locator('#timeline [data-kind="text"] .body');

// waitCount waits until the (single) assistant message shows at least n numbers.
function waitCount(page, n) {
  return page.waitForFunction((n) => {
    const body = document.querySelector('#timeline [data-kind="text"] .body');
    return body && body.textContent.trim().split(/\s+/).filter(Boolean).length >= n;
  }, n);
}

// memberAnswer is the assistant message holding `text`, with the member it
// is attributed to: the sub-agent badge in its header, and the sub-agent
// (SUBAGENT_STARTED) that badge's subagentRunId names in the timeline.
async function memberOf(page, text) {
  const article = page.locator('#timeline article[data-kind="text"]').filter({ hasText: text });
  const n = await article.count();
  check(n === 1, `${n} assistant messages hold ${JSON.stringify(text)}, want 1`);
  const badge = article.locator('header .subagent-badge');
  check((await badge.count()) === 1, `the message ${JSON.stringify(text)} has no sub-agent badge: ${await article.innerHTML()}`);
  const runId = await badge.getAttribute('data-subagent-run-id');
  const sub = page.locator(`#timeline [data-kind="subagent"][data-subagent-run-id="${runId}"]`);
  check((await sub.count()) === 1, `the badge of ${JSON.stringify(text)} names sub-agent run ${runId}, which the timeline does not show`);
  return { badge: (await badge.innerText()).trim(), subagent: (await sub.locator('strong').innerText()).trim(), runId };
}

// badgeOf is the text of the one sub-agent badge inside `scope`.
async function badgeOf(scope, what) {
  const badge = scope.locator('.subagent-badge');
  const n = await badge.count();
  check(n === 1, `${what}: ${n} sub-agent badges, want 1`);
  return (await badge.innerText()).trim();
}

async function expectMember(page, text, member) {
  const got = await memberOf(page, text);
  check(got.badge === member && got.subagent === member, `${JSON.stringify(text)} is attributed to ${JSON.stringify(got)}, want ${member}`);
  const tl = await timelineText(page);
  check(occurrences(tl, text) === 1, `${JSON.stringify(text)} shown ${occurrences(tl, text)} times`);
  return got;
}

// subagentRuns are the sub-agent lines of the timeline: [{name, status}].
const subagentRuns = (page) =>
  page.locator('#timeline [data-kind="subagent"]').evaluateAll((els) => els.map((el) => ({ name: el.querySelector('strong')?.textContent, status: [...el.classList].find((c) => c !== 'subagent' && c !== 'item') })));

async function journal(bridge, agent, threadId) {
  const events = [];
  let after = 0;
  for (;;) {
    const res = await fetch(`${bridge}/agents/${agent}/threads/${threadId}/events?after=${after}`, { headers: { Accept: 'application/json' } });
    check(res.ok, `journal: HTTP ${res.status}`);
    const page = await res.json();
    events.push(...page.events);
    if (page.done || page.events.length === 0) return events;
    after = page.next;
  }
}

// ---------- the CopilotKit app (examples/copilotkit) ----------

// openCopilotKit opens the app on one bridge agent and waits for CopilotKit
// to have connected to its runtime (the chat's input is there).
async function openCopilotKit(page, url, agent) {
  await page.goto(`${url}/?agent=${encodeURIComponent(agent)}`);
  await page.getByRole('heading', { name: agent, exact: true }).waitFor();
  await page.getByTestId('copilot-chat-textarea').waitFor();
}

const chatText = (page) => page.getByTestId('copilot-message-list').innerText();
const idle = (page) => page.locator('.status[data-running="false"]').waitFor();
// waitingFor waits until the CopilotKit page's status says an interrupt
// waits for the user's `what` ("approval", "answer").
async function waitingFor(page, what) {
  const s = page.locator(`.status[data-waiting="${what}"]`);
  await s.waitFor();
  const text = await s.innerText();
  check(text === `Waiting for your ${what}`, `the status while the interrupt waits: ${JSON.stringify(text)}`);
}

// chat sends one message through <CopilotChat>'s own input and send button.
async function chat(page, text) {
  await page.getByTestId('copilot-chat-textarea').fill(text);
  await page.getByTestId('copilot-send-button').click();
  await page.getByTestId('copilot-user-message').filter({ hasText: text }).first().waitFor();
}

// answered waits for `text` in an assistant message and for the run to end,
// then checks that the chat shows it exactly once.
async function answered(page, text) {
  await page.getByTestId('copilot-assistant-message').filter({ hasText: text }).first().waitFor();
  await idle(page);
  const n = occurrences(await chatText(page), text);
  check(n === 1, `${JSON.stringify(text)} shown ${n} times in the chat`);
  const holders = await page.getByTestId('copilot-assistant-message').filter({ hasText: text }).count();
  check(holders === 1, `${holders} assistant messages hold ${JSON.stringify(text)}`);
}

// bridgeThread is the bridge's record of the thread the CopilotKit page is
// on (the runtime passes CopilotKit's threadId through): GET
// /agents/{agent}/threads/{threadId}.
async function bridgeThread(page, bridge, agent) {
  const threadId = await page.locator('main[data-thread-id]').getAttribute('data-thread-id');
  check(threadId, 'the page shows no thread id');
  const res = await fetch(`${bridge}/agents/${agent}/threads/${encodeURIComponent(threadId)}`);
  check(res.ok, `GET the thread ${threadId}: HTTP ${res.status}`);
  return res.json();
}

// interruptForm waits for the useInterrupt form with n parts.
async function interruptForm(page, n) {
  const form = page.getByRole('form', { name: 'Answer the agent' });
  await form.waitFor();
  await idle(page);
  const parts = await form.locator('fieldset.part').count();
  check(parts === n, `the interrupt form has ${parts} parts, want ${n}`);
  return form;
}

// ---------- scenarios ----------

const scenarios = [
  {
    name: 'console-streamer',
    what: 'pick streamer, send a message, see the streamed answer exactly once',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'streamer');
      await send(page, 'Hello console');
      await status(page, 'finished');
      const text = await timelineText(page);
      const answer = 'You said: Hello console. Here is a streamed answer.';
      check(occurrences(text, answer) === 1, `answer shown ${occurrences(text, answer)} times in ${JSON.stringify(text)}`);
      check(occurrences(text, 'Hello console') === 2, 'the question shown once (and once inside the answer)');
      check((await page.locator('#timeline [data-kind="run-end"][data-status="finished"]').count()) === 1, 'one finished run');
    },
  },
  {
    name: 'console-narrator',
    what: "pick narrator: its status texts shown as progress, not as an answer; the artifact's answer exactly once",
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'narrator');
      await send(page, 'What is A2A?');
      await status(page, 'finished');
      const answer = 'Here is what I found about “What is A2A?”: all sources agree.';
      const bodies = (await assistantBody(page).allInnerTexts()).join('\n');
      check(occurrences(bodies, answer) === 1, `answer shown ${occurrences(bodies, answer)} times in the assistant messages ${JSON.stringify(bodies)}`);
      const progress = await page.locator('#timeline [data-kind="progress"] li').allInnerTexts();
      for (const note of ['Looking into it…', 'Checking sources…', 'Writing the answer…']) {
        check(!bodies.includes(note), `progress ${JSON.stringify(note)} shown as an assistant message: ${JSON.stringify(bodies)}`);
        check(progress.includes(note), `progress ${JSON.stringify(note)} not among the progress lines ${JSON.stringify(progress)}`);
      }
    },
  },
  {
    name: 'console-auth',
    what: 'a bridge with an API key: the console lists nothing until the key is given, then streams with it',
    async run({ page, restartable }) {
      const key = 'console-e2e-key-0123456789';
      const b = await restartable.start({ apiKey: key });
      const anonymous = await fetch(`${b.url}/agents`);
      check(anonymous.status === 401, `GET /agents without the key: HTTP ${anonymous.status}, want 401`);
      await page.goto(`${b.url}/`);
      await page.locator('#agents-retry').waitFor(); // the 401 is shown, with a retry
      check((await page.locator('[data-agent]').count()) === 0, 'agents listed without the key');
      await page.locator('#token').fill(key);
      await page.locator('#token-save').click();
      await pickAgent(page, 'streamer');
      await send(page, 'Hello with a key');
      await status(page, 'finished');
      const answer = 'You said: Hello with a key. Here is a streamed answer.';
      check(occurrences(await timelineText(page), answer) === 1, 'the answer, once');
      // The key stays with the tab: a reload lists the agents at once.
      await page.reload();
      await page.locator('[data-agent="streamer"]').waitFor();
    },
  },
  {
    name: 'console-approver',
    what: 'approver: approve the proposed booking from the rendered form, see the tool result and the answer',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'approver');
      await send(page, 'Book my flight');
      await status(page, 'interrupted');
      const form = page.getByRole('form', { name: 'Answer the agent' });
      await form.getByText('Approval needed').waitFor();
      await page.locator('[data-kind="tool"][data-tool-name="book_flight"]').getByText('awaiting approval').waitFor();
      await form.getByRole('button', { name: 'Approve', exact: true }).click();
      await status(page, 'finished');
      const tool = page.locator('[data-kind="tool"][data-tool-name="book_flight"]');
      const result = await tool.locator('.tool-result').innerText();
      check(result.includes('"status": "booked"') && result.includes('ABC123'), `tool result ${result}`);
      check((await tool.locator('.chip.server').count()) === 1, 'the call is marked server-executed');
      const text = await timelineText(page);
      const answer = 'Booked LH123 to Lisbon for 2 passengers. Confirmation ABC123.';
      check(occurrences(text, answer) === 1, `booking answer shown ${occurrences(text, answer)} times`);
      check(text.includes('Approved'), 'the resume is shown as "Approved"');
      check((await page.locator('#interrupts form').count()) === 0, 'the form is gone');
    },
  },
  {
    name: 'console-a2ui-booking',
    what: 'booker (A2UI v0.8): the form renders, the user fills and submits it, the agent books and its next surface appears',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'booker');
      await send(page, 'A table please');
      await status(page, 'finished');
      const form = page.locator('#timeline [data-kind="a2ui"]:not([data-superseded]) [data-surface-id="booking"]');
      await form.locator('[data-a2ui-kind="TextField"] input').fill('Ada');
      await form.locator('[data-a2ui-kind="Slider"] input').fill('4');
      await form.locator('[data-a2ui-kind="CheckBox"] input').check();
      check((await form.locator('[data-a2ui-kind="DateTimeInput"] input').inputValue()) === '2026-12-24', 'the date from the data model');
      await page.screenshot({ path: path.join(shots, 'console-a2ui-booking-form.png') });
      await form.getByRole('button', { name: 'Book', exact: true }).click();
      await page.locator('#timeline [data-kind="a2ui-action"]').getByText('book on booking').waitFor();
      await status(page, 'finished');
      const answer = 'Booked a table for Ada on 2026-12-24 for 4 guests.';
      const text = await timelineText(page);
      check(occurrences(text, answer) === 2, `the answer and the confirmation surface: ${occurrences(text, answer)} occurrences in ${JSON.stringify(text.slice(-600))}`);
      const latest = page.locator('#timeline [data-kind="a2ui"]:not([data-superseded])');
      check((await latest.count()) === 1, `${await latest.count()} live surfaces, want the confirmation only`);
      await latest.getByText('Booked', { exact: true }).waitFor();
      check((await page.locator('#timeline [data-kind="a2ui"][data-superseded] button').count()) >= 1, 'the old form stays, inert');
    },
  },
  {
    name: 'console-a2ui-wizard',
    what: 'wizard (A2UI v0.9): each step waits for input; its button answers the interrupt and the next step appears',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'wizard');
      await send(page, 'Plan a trip');
      await status(page, 'interrupted');
      const live = () => page.locator('#timeline [data-kind="a2ui"]:not([data-superseded]) [data-surface-id="wizard"]');
      await live().locator('[data-a2ui-kind="TextField"] input').fill('Lisbon');
      await live().getByRole('button', { name: 'Next', exact: true }).click();
      await live().getByText('Plan a trip to Lisbon (2/2)').waitFor();
      await status(page, 'interrupted');
      await live().locator('[data-a2ui-kind="Slider"] input').fill('3');
      await live().getByRole('button', { name: 'Finish', exact: true }).click();
      await status(page, 'finished');
      const answer = 'Your trip to Lisbon for 3 travellers is planned.';
      check(occurrences(await timelineText(page), answer) === 1, 'the answer, once');
      await page.locator('#timeline [data-kind="a2ui"]').getByText('surface wizard closed').waitFor();
    },
  },
  {
    name: 'console-a2ui-dashboard',
    what: 'monitor (A2UI v0.9): a live dashboard whose data model updates stream into one surface',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'monitor');
      await send(page, 'Show the dashboard');
      await status(page, 'finished');
      const surface = page.locator('#timeline [data-kind="a2ui"] [data-surface-id="monitor"]');
      check((await surface.count()) === 1, `${await surface.count()} dashboards, want 1`);
      const text = await surface.innerText();
      check(text.includes('load 50%') && text.includes('500 requests') && text.includes('done'), `the last values: ${JSON.stringify(text)}`);
    },
  },
  {
    name: 'console-a2ui-v1.0',
    what: 'planner (A2UI v1.0, parts marked by mediaType and by metadata.mimeType): the card renders with its data, the user edits and confirms, the action reaches the agent',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'planner');
      await send(page, 'Plan it');
      await status(page, 'finished');
      const card = page.locator('#timeline [data-kind="a2ui"]:not([data-superseded]) [data-surface-id="planner"]');
      await card.getByText('Plan (A2UI v1.0)').waitFor();
      const note = card.locator('[data-a2ui-kind="TextField"] input');
      check((await note.inputValue()) === 'window seat', 'the data model from the metadata-marked part');
      await note.fill('aisle');
      await card.getByRole('button', { name: 'Confirm', exact: true }).click();
      await page.locator('#timeline [data-kind="a2ui-action"]').getByText('confirm on planner').waitFor();
      await status(page, 'finished');
      check(occurrences(await timelineText(page), 'Planner confirmed: aisle.') === 1, 'the agent answered the action, once');
    },
  },
  {
    name: 'snapshot-renderer-dashboard',
    what: 'monitor (A2UI v0.9) in a renderer that reads ACTIVITY_SNAPSHOT only and ignores ACTIVITY_DELTA (as assistant-ui\'s react-ag-ui does): the dashboard updates to its last values',
    async run({ page, bridge }) {
      await openConsole(page, bridge); // for the bridge's origin: the renderer below fetches it
      const renders = await page.evaluate(async () => {
        // A minimal snapshot-only renderer: it keeps each a2ui-surface
        // activity's content from its latest ACTIVITY_SNAPSHOT, folds the
        // surface's operations into a data model, and draws the values.
        const out = document.createElement('div');
        out.id = 'snapshot-renderer';
        document.body.append(out);
        const contents = new Map();
        const renders = [];
        const draw = () => {
          const data = {};
          for (const content of contents.values()) {
            for (const op of content.a2ui_operations ?? []) {
              const u = op.updateDataModel;
              if (!u) continue;
              if (!u.path || u.path === '/') Object.assign(data, u.value);
              else data[u.path.replace(/^\//, '')] = u.value;
            }
          }
          out.textContent = `${data.load} | ${data.requests} | ${data.status}`;
          renders.push(out.textContent);
        };
        const res = await fetch('/agents/monitor', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
          body: JSON.stringify({ threadId: crypto.randomUUID(), runId: crypto.randomUUID(), protocolVersion: '1.0',
            messages: [{ id: crypto.randomUUID(), role: 'user', content: 'Show the dashboard' }], state: {}, tools: [], context: [], forwardedProps: {} }),
        });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const frame = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
            if (!data) continue;
            const e = JSON.parse(data);
            if (e.type === 'ACTIVITY_SNAPSHOT' && e.activityType === 'a2ui-surface') {
              contents.set(e.messageId, e.replace === false ? { ...contents.get(e.messageId), ...e.content } : e.content);
              draw();
            }
          }
        }
        return renders;
      });
      const last = await page.locator('#snapshot-renderer').innerText();
      check(last === 'load 50% | 500 requests | done', `the dashboard's last state: ${JSON.stringify(last)} (renders ${JSON.stringify(renders)})`);
      check(new Set(renders).size >= 3, `the dashboard should update as it runs: ${JSON.stringify(renders)}`);
    },
  },
  {
    name: 'console-hostile-a2ui',
    what: 'issue 33: an A2UI data model at /__proto__ pollutes nothing, a fan-out surface draws a bounded number of nodes, an image elsewhere is never fetched',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      const got = await page.evaluate(async () => {
        const { renderSurfaces, MAX_NODES } = await import('/console/js/a2ui.js');
        const host = document.createElement('div');
        document.body.append(host);
        host.append(...renderSurfaces([
          { dataModelUpdate: { surfaceId: 'p8', path: '/__proto__', contents: [{ key: 'method', valueString: 'PUT' }] } },
          { version: 'v0.9', updateDataModel: { surfaceId: 'p9', path: '/__proto__/polluted', value: true } },
          { version: 'v0.9', updateDataModel: { surfaceId: 'p9', path: '/constructor/prototype/polluted2', value: true } },
        ]));
        // Rows each naming the next twice: 2^18 draws without a bound.
        const rows = [];
        for (let i = 0; i < 17; i++) rows.push({ id: `r${i}`, component: 'Row', children: [`r${i + 1}`, `r${i + 1}`] });
        rows.push({ id: 'r17', component: 'Text', text: 'leaf' });
        rows[0].id = 'root';
        rows[1].id = 'r1';
        const t0 = performance.now();
        const [fan] = renderSurfaces([
          { version: 'v0.9', createSurface: { surfaceId: 'fan', catalogId: 'c' } },
          { version: 'v0.9', updateComponents: { surfaceId: 'fan', components: rows } },
        ]);
        host.append(fan);
        const drawn = fan.querySelectorAll('[data-a2ui-kind]').length;
        const ms = performance.now() - t0;
        // An image an agent points elsewhere: the CSP must refuse it.
        const img = await new Promise((resolve) => {
          const el = document.createElement('img');
          const done = (what) => resolve(what);
          document.addEventListener('securitypolicyviolation', (e) => e.blockedURI.includes('169.254.169.254') && done('blocked by CSP'));
          el.onload = () => done('loaded');
          el.onerror = () => setTimeout(() => done('requested (no CSP violation)'), 500);
          el.src = 'http://169.254.169.254/latest/meta-data/x.png';
          document.body.append(el);
        });
        host.remove();
        return { method: ({}).method, polluted: ({}).polluted, polluted2: ({}).polluted2, drawn, max: MAX_NODES,
          truncated: fan.dataset.truncated, ms, img };
      });
      check(got.method === undefined && got.polluted === undefined && got.polluted2 === undefined,
        `Object.prototype polluted: ${JSON.stringify(got)}`);
      check(got.drawn <= got.max && got.truncated === 'true', `the fan-out drew ${got.drawn} nodes (bound ${got.max}), truncated=${got.truncated}`);
      check(got.img === 'blocked by CSP', `the image at 169.254.169.254 was ${got.img}`);
      // The console still works: its next request is a GET of the agent.
      await pickAgent(page, 'streamer');
    },
  },
  {
    name: 'console-approver-edit',
    what: 'approver: edit the call\'s arguments in the JSON text area, see the edited booking',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'approver');
      await send(page, 'Book my flight');
      await status(page, 'interrupted');
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      const area = page.getByLabel('editedArgs');
      const args = JSON.parse(await area.inputValue());
      check(args.flight === 'LH123' && args.passengers === 2, `editedArgs prefilled with the call's arguments: ${JSON.stringify(args)}`);
      await area.fill(JSON.stringify({ ...args, passengers: 3 }, null, 2));
      await page.getByRole('button', { name: 'Send edited call' }).click();
      await status(page, 'finished');
      const text = await timelineText(page);
      check(text.includes('Booked LH123 to Lisbon for 3 passengers.'), `edited booking answer missing: ${JSON.stringify(text.slice(-400))}`);
      check(text.includes('Approved with edits'), 'the resume is shown as approved with edits');
    },
  },
  {
    name: 'console-asker',
    what: 'asker: answer the question from the schema form (a text input)',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'asker');
      await send(page, 'What is the weather?');
      await status(page, 'interrupted');
      await page.getByLabel('city').fill('Paris');
      await page.getByRole('button', { name: 'Send answer' }).click();
      await status(page, 'finished');
      const text = await timelineText(page);
      check(occurrences(text, 'The weather in Paris is sunny.') === 1, `weather answer: ${JSON.stringify(text.slice(-300))}`);
    },
  },
  {
    name: 'console-counter-reload',
    what: 'counter: reload mid-run, the run goes on after the reload and the earlier text is there once',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'counter');
      await send(page, 'Count for me');
      await status(page, 'running');
      await waitCount(page, 3);
      const before = expectCounting(await assistantBody(page).innerText(), 'before the reload');
      await page.reload();
      // The page rebuilds the thread from the journal and follows the run live.
      await page.locator('[data-agent="counter"][aria-pressed="true"]').waitFor();
      await status(page, 'running');
      await waitCount(page, before);
      const rebuilt = expectCounting(await assistantBody(page).innerText(), 'right after the reload');
      check(rebuilt >= before, `after the reload ${rebuilt} numbers, before it ${before}`);
      await waitCount(page, rebuilt + 3); // more numbers arrive live
      await page.screenshot({ path: path.join(shots, 'console-counter-after-reload.png') });
      await status(page, 'finished');
      const final = expectCounting(await assistantBody(page).innerText(), 'at the end');
      check(final === 100, `the counter ended at ${final}, want 100`);
      const text = await timelineText(page);
      check(occurrences(text, 'Count for me') === 1, 'the question is shown once');
      check((await page.locator('#timeline [data-kind="text"]').count()) === 1, 'one answer message');
      check((await page.locator('#note').innerText()).startsWith('Reconnected'), 'the page says it reconnected');
    },
  },
  {
    name: 'console-counter-cancel',
    what: 'counter: the Cancel button ends the run cancelled',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'counter');
      await send(page, 'Count, then stop');
      await status(page, 'running');
      await waitCount(page, 2);
      await page.getByRole('button', { name: 'Cancel run' }).click();
      await status(page, 'cancelled');
      await page.locator('#timeline [data-kind="run-end"][data-status="cancelled"]').waitFor();
      const n = expectCounting(await assistantBody(page).innerText(), 'cancelled count');
      check(n < 100, `the counter ran to ${n} despite the cancel`);
      check(await page.getByLabel('Message', { exact: true }).isEnabled(), 'the thread takes a new message after the cancel');
    },
  },
  {
    name: 'console-dashboard-state',
    what: 'dashboard: the state tree shows the artifacts live',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'dashboard');
      await send(page, 'Show me');
      await status(page, 'finished');
      const state = await page.locator('#state').innerText();
      for (const want of ['artifacts', 'progress', 'done: true', 'rows', 'summarising', 'theme: "dark"']) {
        check(state.includes(want), `state tree lacks ${want}: ${state}`);
      }
    },
  },
  {
    name: 'console-time-travel',
    what: 'dashboard: the time-travel slider moved back shows an earlier state and conversation',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'dashboard');
      await send(page, 'Show me');
      await status(page, 'finished');
      const threadId = await page.locator('#thread-id').innerText();
      const events = await journal(bridge, 'dashboard', threadId);
      // The first artifact: progress step 1 of 3, no rows yet, no answer yet.
      const first = events.find((e) => e.event.type === 'STATE_DELTA' && e.event.delta.some((op) => op.path === '/a2a/artifacts'));
      check(first, 'no STATE_DELTA adding artifacts in the journal');
      await page.locator('#travel').fill(String(first.seq));
      await page.locator('#travel-banner').waitFor();
      await page.waitForFunction(() => {
        const t = document.getElementById('state').innerText;
        return t.includes('step: 1') && !t.includes('rows');
      });
      check(!(await timelineText(page)).includes('Dashboard ready.'), 'the answer is not shown before it arrived');
      check(await page.getByLabel('Message', { exact: true }).isDisabled(), 'no writing while looking at the past');
      await page.screenshot({ path: path.join(shots, 'console-time-travel-back.png') });
      await page.getByRole('button', { name: 'Back to live' }).click();
      await page.locator('#travel-banner').waitFor({ state: 'hidden' });
      await page.waitForFunction(() => document.getElementById('state').innerText.includes('rows'));
      check((await timelineText(page)).includes('Dashboard ready.'), 'the answer is back');
    },
  },
  {
    name: 'console-thread-list',
    what: 'open an earlier thread from the thread list',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'streamer');
      await send(page, 'First thread question');
      await status(page, 'finished');
      await page.getByRole('button', { name: 'New thread' }).click();
      await page.locator('#timeline [data-kind]').first().waitFor({ state: 'detached' });
      await send(page, 'Second thread question');
      await status(page, 'finished');
      // The list is the bridge's: other scenarios' streamer threads are in it too.
      const threads = page.locator('#threads button.thread');
      for (const q of ['First thread question', 'Second thread question']) {
        await threads.filter({ hasText: q }).first().waitFor();
        check((await threads.filter({ hasText: q }).count()) === 1, `the thread list shows ${JSON.stringify(q)} ${await threads.filter({ hasText: q }).count()} times, want once`);
      }
      const first = threads.filter({ hasText: 'First thread question' });
      await first.click();
      await page.locator('#threads button.thread[aria-current="true"]').filter({ hasText: 'First thread question' }).waitFor();
      await page.locator('#timeline').getByText('You said: First thread question.').waitFor();
      await status(page, 'finished');
      const text = await timelineText(page);
      check(!text.includes('Second thread question'), 'the other thread\'s messages are not shown');
      check(occurrences(text, 'You said: First thread question.') === 1, 'the reopened answer is shown once');
      check(occurrences(text, 'First thread question') === 2, 'the question is shown once (and once inside the answer)');
    },
  },
  {
    name: 'console-threads-server',
    what: 'issue 34: the thread list is the bridge\'s (it survives cleared storage), a thread opens from it, and Delete asks first, then removes it on the bridge',
    async run({ page, restartable }) {
      // A fresh store, with an API key: the list and the delete go with it.
      const key = 'console-threads-key-0123456789';
      const b = await restartable.start({ apiKey: key });
      const auth = { Authorization: `Bearer ${key}` };
      const useKey = async () => {
        await page.locator('#token').fill(key);
        await page.locator('#token-save').click();
        await pickAgent(page, 'streamer');
      };
      const rows = page.locator('#threads button.thread');
      await page.goto(`${b.url}/`);
      await useKey();
      await send(page, 'Alpha conversation');
      await status(page, 'finished');
      await rows.filter({ hasText: 'Alpha conversation' }).waitFor();
      await page.getByRole('button', { name: 'New thread' }).click();
      await page.locator('#timeline [data-kind]').first().waitFor({ state: 'detached' });
      await send(page, 'Beta conversation');
      await status(page, 'finished');
      await rows.filter({ hasText: 'Beta conversation' }).waitFor();

      // As another browser would: nothing kept in this one.
      await page.evaluate(() => {
        localStorage.clear();
        sessionStorage.clear();
      });
      await page.reload();
      await page.locator('#agents-retry').waitFor(); // the key went with the storage
      await useKey();
      await rows.nth(1).waitFor();
      const titles = (await rows.locator('.thread-title').allInnerTexts()).map((t) => t.trim());
      check(JSON.stringify(titles) === JSON.stringify(['Beta conversation', 'Alpha conversation']), `the list after clearing storage: ${JSON.stringify(titles)}, want Beta then Alpha`);

      // Open Alpha: its messages come from the bridge (the question from the thread's snapshot).
      const alpha = rows.filter({ hasText: 'Alpha conversation' });
      const alphaId = await alpha.getAttribute('data-thread');
      await alpha.click();
      await page.locator('#timeline').getByText('You said: Alpha conversation.').waitFor();
      await status(page, 'finished');
      const text = await timelineText(page);
      check(occurrences(text, 'Alpha conversation') === 2, `the question and the answer, once each: ${JSON.stringify(text)}`);
      check(!text.includes('Beta conversation'), 'the other thread\'s messages are not shown');
      check((await page.locator('#timeline [data-kind="user"]').count()) === 1, 'the question is shown as the user\'s message');

      // Delete asks first; Keep keeps it.
      await page.getByRole('button', { name: 'Delete Alpha conversation', exact: true }).click();
      const ask = page.getByRole('group', { name: 'Delete Alpha conversation?' });
      await ask.waitFor();
      await ask.getByRole('button', { name: 'Keep' }).click();
      await ask.waitFor({ state: 'detached' });
      check((await fetch(`${b.url}/agents/streamer/threads/${encodeURIComponent(alphaId)}`, { headers: auth })).status === 200, 'Keep deleted the thread');
      // Delete for good.
      await page.getByRole('button', { name: 'Delete Alpha conversation', exact: true }).click();
      await page.screenshot({ path: path.join(shots, 'console-threads-server-confirm.png') });
      await ask.getByRole('button', { name: 'Delete for good' }).click();
      await rows.filter({ hasText: 'Alpha conversation' }).waitFor({ state: 'detached' });
      await page.locator('#note').filter({ hasText: 'Deleted the thread' }).waitFor();
      check((await page.locator('#timeline [data-kind]').count()) === 0, 'the deleted thread is still shown');
      check((await rows.count()) === 1, `${await rows.count()} threads listed after the delete, want 1`);
      const gone = await fetch(`${b.url}/agents/streamer/threads/${encodeURIComponent(alphaId)}`, { headers: auth });
      check(gone.status === 404, `GET the deleted thread: HTTP ${gone.status}, want 404`);
      const listed = await (await fetch(`${b.url}/agents/streamer/threads`, { headers: auth })).json();
      const ids = (listed.threads ?? []).map((t) => t.title);
      check(JSON.stringify(ids) === JSON.stringify(['Beta conversation']), `the bridge lists ${JSON.stringify(ids)} after the delete`);
      // A reload lists what the bridge has.
      await page.reload();
      await rows.filter({ hasText: 'Beta conversation' }).waitFor();
      check((await rows.count()) === 1, `${await rows.count()} threads listed after a reload, want 1`);
    },
  },
  {
    name: 'console-thread-deleted-live',
    what: 'issue 34: a thread deleted elsewhere while the page streams its run: the run ends (thread_deleted is said as such), and the thread is listed no more',
    async run({ page, restartable }) {
      const b = await restartable.start();
      await openConsole(page, b.url, 'counter');
      await pickAgent(page, 'counter');
      await send(page, 'Count until deleted');
      await waitCount(page, 3);
      const threadId = (await page.locator('#thread-id').innerText()).trim();
      await page.locator(`#threads button.thread[data-thread="${threadId}"]`).waitFor();
      // Another client deletes it: the bridge cancels the run, then removes the thread.
      const del = await fetch(`${b.url}/agents/counter/threads/${encodeURIComponent(threadId)}`, { method: 'DELETE' });
      check(del.status === 204, `DELETE: HTTP ${del.status}, want 204`);
      await page.locator('#run-status:not([data-state="running"])').waitFor();
      const state = await page.locator('#run-status').getAttribute('data-state');
      check(state === 'cancelled' || state === 'error', `the run's end after the delete: ${state}`);
      if (state === 'error') {
        // The stream said why: thread_deleted.
        check((await page.locator('#run-status').innerText()) === 'Thread deleted', 'the status names the delete');
        await page.locator('#note').filter({ hasText: 'This thread was deleted' }).waitFor();
        check(await page.locator('#message').isDisabled(), 'the composer still takes messages for the deleted thread');
      }
      check((await fetch(`${b.url}/agents/counter/threads/${encodeURIComponent(threadId)}`)).status === 404, 'the thread is still on the bridge');
      // The list the page reads now has it no more.
      await page.reload();
      await page.locator('#threads-empty').filter({ hasText: 'No threads with this agent yet.' }).waitFor();
      check((await page.locator('#threads button.thread').count()) === 0, 'the deleted thread is still listed');
    },
  },
  {
    name: 'console-frontend-tool',
    what: 'painter: the console runs its change_background tool and sends the result back',
    async run({ page, bridge }) {
      await openConsole(page, bridge);
      await pickAgent(page, 'painter');
      await send(page, 'Paint the background');
      const tool = page.locator('[data-kind="tool"][data-tool-name="change_background"]');
      await tool.getByText('done on this page').waitFor();
      await status(page, 'finished');
      check((await tool.locator('.chip.frontend').count()) === 1, 'the call is marked as a frontend tool');
      await page.locator('#timeline[data-background="blue"]').waitFor();
      const answer = await page.locator('#timeline [data-kind="text"]').last().innerText();
      check(answer.includes('blue'), `the agent's answer after the tool result: ${answer}`);
    },
  },
  {
    name: 'console-bridge-restart',
    what: 'counter: the bridge is stopped mid-run and started again; the page reconnects and the run ends once',
    async run({ page, restartable }) {
      const bridge = await restartable.start();
      await openConsole(page, bridge.url, 'counter');
      await pickAgent(page, 'counter');
      await send(page, 'Count across a restart');
      await waitCount(page, 5);
      // SIGTERM with a short grace: the open stream is cut with
      // RUN_ERROR{server_shutdown}, the A2A task goes on.
      await bridge.stop();
      await page.locator('#note').filter({ hasText: 'The bridge is restarting' }).waitFor();
      check(await page.locator('#run-status[data-state="running"]').isVisible(), 'the run is not shown as ended while the bridge is down');
      await restartable.start(); // takes the run over from the store
      await status(page, 'finished');
      await page.locator('#note').filter({ hasText: 'Reconnected after the bridge restarted' }).waitFor();
      check(expectCounting(await assistantBody(page).innerText(), 'after the restart') === 100, 'the counter reached 100');
      check((await page.locator('#timeline [data-kind="text"]').count()) === 1, 'one answer message');
      check((await page.locator('#timeline [data-kind="run-end"]').count()) === 1, 'the run ended once');
    },
  },
  {
    name: 'console-team-concierge',
    what: 'team concierge: both members ask, one form answers both; every question and answer shows its member; the same after a reload',
    async run({ page, bridge }) {
      await openConsole(page, bridge, 'concierge');
      const entry = page.locator('[data-agent="concierge"]');
      check((await entry.locator('.badge.team').count()) === 1, 'the agent list marks concierge as a team');
      check((await entry.innerText()).includes('members: asker, approver'), `the agent list names the members: ${await entry.innerText()}`);
      await pickAgent(page, 'concierge');
      await send(page, 'What is the weather? And book me a flight to Lisbon');
      await status(page, 'interrupted');
      const waiting = await subagentRuns(page);
      check(JSON.stringify(waiting.map((r) => `${r.name} ${r.status}`).sort()) === JSON.stringify(['approver suspended', 'asker suspended']), `sub-agents after run 1: ${JSON.stringify(waiting)}`);
      await expectMember(page, 'Which city should I check?', 'asker');
      await expectMember(page, "I'd like to book flight LH123 to Lisbon on 2026-12-24 for 2 passengers. Approve?", 'approver');
      const call = page.locator('[data-kind="tool"][data-tool-name="book_flight"]');
      check((await badgeOf(call, 'the proposed call')) === 'approver', 'the proposed call shows its member');
      // One form for both interrupts, each part naming its member.
      const form = page.getByRole('form', { name: 'Answer the agent' });
      const asks = form.locator('fieldset.interrupt').filter({ hasText: 'Which city should I check?' });
      const approval = form.locator('fieldset.interrupt.tool-approval');
      check((await badgeOf(asks, 'the question part of the form')) === 'asker', 'the question part of the form names asker');
      check((await badgeOf(approval, 'the approval part of the form')) === 'approver', 'the approval part of the form names approver');
      await page.screenshot({ path: path.join(shots, 'console-team-concierge-interrupted.png') });
      await asks.getByLabel('city').fill('Lisbon');
      await approval.getByRole('button', { name: 'Approve', exact: true }).click();
      await form.getByRole('button', { name: 'Send answers' }).click();
      await status(page, 'finished');
      const weather = 'The weather in Lisbon is sunny.';
      const booked = 'Booked LH123 to Lisbon for 2 passengers. Confirmation ABC123.';
      const w = await expectMember(page, weather, 'asker');
      const b = await expectMember(page, booked, 'approver');
      check(w.runId !== b.runId, 'the two answers come from two sub-agent runs');
      const answered = await page.locator('#timeline [data-kind="resume"] .subagent-badge').allInnerTexts();
      check(JSON.stringify(answered.map((t) => t.trim()).sort()) === JSON.stringify(['approver', 'asker']), `"You answered" names the members answered: ${JSON.stringify(answered)}`);
      const done = (await subagentRuns(page)).slice(2);
      check(JSON.stringify(done.map((r) => `${r.name} ${r.status}`).sort()) === JSON.stringify(['approver finished', 'asker finished']), `sub-agents after the resume: ${JSON.stringify(done)}`);
      check((await call.locator('.tool-result').innerText()).includes('ABC123'), 'the booking result is on the call');
      // Rebuilt from the journal, the page attributes everything the same way.
      await page.reload();
      await page.locator('[data-agent="concierge"][aria-pressed="true"]').waitFor();
      await status(page, 'finished');
      check((await memberOf(page, weather)).runId === w.runId && (await memberOf(page, booked)).runId === b.runId, 'after the reload the answers keep their sub-agent runs');
      await expectMember(page, weather, 'asker');
      await expectMember(page, booked, 'approver');
      await expectMember(page, 'Which city should I check?', 'asker');
    },
  },
  {
    name: 'console-team-pipeline',
    what: 'team pipeline: the narrator answers, then the streamer answers the narrator; each answer shows its member',
    async run({ page, bridge }) {
      await openConsole(page, bridge, 'pipeline');
      await pickAgent(page, 'pipeline');
      await send(page, 'Find the tallest tower');
      await status(page, 'finished');
      const narrated = 'Here is what I found about “Find the tallest tower”: all sources agree.';
      const streamed = `You said: ${narrated.slice(0, -1)}. Here is a streamed answer.`;
      await expectMember(page, streamed, 'streamer');
      // The narrator's answer is quoted in the streamer's: its own message holds it exactly.
      const own = page.locator('#timeline article[data-kind="text"]').filter({ hasText: narrated }).filter({ hasNotText: 'You said:' });
      check((await own.count()) === 1, `${await own.count()} narrator messages hold the narrator's answer`);
      check((await badgeOf(own.locator('header'), 'the narrator\'s answer')) === 'narrator', 'the narrator\'s answer shows the narrator');
      const runs = await subagentRuns(page);
      check(JSON.stringify(runs) === JSON.stringify([{ name: 'narrator', status: 'finished' }, { name: 'streamer', status: 'finished' }]), `sub-agents: ${JSON.stringify(runs)}`);
    },
  },
  {
    name: 'copilotkit-streamer',
    what: 'CopilotKit app: <CopilotChat> shows the streamed answer exactly once',
    async run({ page, copilotkitURL }) {
      await openCopilotKit(page, copilotkitURL, 'streamer');
      await chat(page, 'Hello from CopilotKit');
      const answer = 'You said: Hello from CopilotKit. Here is a streamed answer.';
      await answered(page, answer);
      check(occurrences(await chatText(page), 'Hello from CopilotKit') === 2, 'the question shown once (and once inside the answer)');
      check((await page.getByTestId('copilot-user-message').count()) === 1, 'one user message');
      // A second turn on the same thread: CopilotKit sends the whole
      // conversation again; only the new message reaches the agent.
      await chat(page, 'And a second one');
      await answered(page, 'You said: And a second one. Here is a streamed answer.');
      check(occurrences(await chatText(page), answer) === 1, 'the first answer is still shown once');
      check((await page.getByTestId('copilot-assistant-message').count()) === 2, 'two answers in all');
    },
  },
  {
    name: 'copilotkit-a2ui',
    what: 'CopilotKit app: the monitor\'s A2UI dashboard drawn by @copilotkit/a2ui-renderer; its Refresh button\'s action reaches the agent, whose next surface appears',
    async run({ page, copilotkitURL }) {
      await page.goto(`${copilotkitURL}/?agent=monitor&view=a2ui`);
      await page.getByRole('heading', { name: 'monitor', exact: true }).waitFor();
      await chat(page, 'Show the dashboard');
      await answered(page, 'The dashboard finished its run.');
      const surfaces = page.locator('[data-testid="copilot-message-list"] .a2ui-surface');
      await surfaces.first().getByText('load 50%').waitFor();
      await surfaces.first().getByText('500 requests').waitFor();
      await surfaces.first().getByText('done', { exact: true }).waitFor();
      check((await surfaces.count()) === 1, `${await surfaces.count()} surfaces drawn, want 1`);
      await page.screenshot({ path: path.join(shots, 'copilotkit-a2ui-dashboard.png') });
      await surfaces.first().getByRole('button', { name: 'Refresh' }).click();
      await answered(page, 'The dashboard refreshed at your request.');
      await surfaces.nth(1).getByText('refreshed', { exact: true }).waitFor();
      check((await surfaces.count()) === 2, `${await surfaces.count()} surfaces drawn after the refresh, want 2`);
    },
  },
  {
    name: 'copilotkit-a2ui-v1.0',
    what: 'CopilotKit app: the planner\'s A2UI v1.0 card drawn by @copilotkit/a2ui-renderer through the example\'s v1.0 adapter (src/a2ui/v1.js); the user edits the note and confirms, the action goes out as {version: "v1.0", action}, reaches the agent, and the agent answers',
    async run({ page, copilotkitURL }) {
      await page.goto(`${copilotkitURL}/?agent=planner&view=a2ui`);
      await page.getByRole('heading', { name: 'planner', exact: true }).waitFor();
      await chat(page, 'Plan it');
      await answered(page, 'Here is your plan.');
      const surfaces = page.locator('[data-testid="copilot-message-list"] .a2ui-surface');
      await surfaces.first().getByText('Plan (A2UI v1.0)').waitFor();
      check((await page.locator('.a2ui-refused').count()) === 0, 'the adapter refused the planner\'s surface');
      const note = surfaces.first().getByRole('textbox');
      check((await note.inputValue()) === 'window seat', `the data model from the metadata-marked part: ${JSON.stringify(await note.inputValue())}`);
      await page.screenshot({ path: path.join(shots, 'copilotkit-a2ui-v1.0.png') });
      await note.fill('aisle');
      const sent = page.waitForRequest((req) => req.method() === 'POST' && (req.postData() ?? '').includes('a2uiAction'));
      await surfaces.first().getByRole('button', { name: 'Confirm' }).click();
      const body = (await sent).postData();
      check(/"a2uiAction":\{"version":"v1\.0","action":\{"name":"confirm"/.test(body), `the action should go out in v1.0's shape: ${body.slice(body.indexOf('a2uiAction'), body.indexOf('a2uiAction') + 200)}`);
      await answered(page, 'Planner confirmed: aisle.');
    },
  },
  {
    name: 'copilotkit-counter-stream',
    what: 'CopilotKit app: the counter streams through the runtime (numbers shown while it runs), 1 to 100 once each',
    async run({ page, copilotkitURL }) {
      await openCopilotKit(page, copilotkitURL, 'counter');
      await chat(page, 'Count for me');
      const body = page.getByTestId('copilot-assistant-message');
      // Seen while the run is still going: the runtime passes chunks on as they come.
      await page.waitForFunction(() => {
        const el = document.querySelector('[data-testid="copilot-assistant-message"]');
        const running = document.querySelector('.status[data-running="true"]');
        return running && el && el.textContent.trim().split(/\s+/).filter((w) => /^\d+$/.test(w)).length >= 3;
      });
      await idle(page);
      check((await body.count()) === 1, `${await body.count()} assistant messages, want 1`);
      const n = expectCounting((await body.innerText()).replace(/[^\d\s]/g, ' '), 'the counter in <CopilotChat>');
      check(n === 100, `the counter ended at ${n}, want 100`);
    },
  },
  {
    name: 'copilotkit-asker',
    what: 'CopilotKit app: the asker interrupt answered through useInterrupt, the answer arrives once',
    async run({ page, copilotkitURL }) {
      await openCopilotKit(page, copilotkitURL, 'asker');
      await chat(page, 'What is the weather?');
      const form = await interruptForm(page, 1);
      const part = form.locator('fieldset.question');
      await part.getByText('Which city should I check?').waitFor();
      check((await part.getAttribute('data-member')) === 'asker', 'the question names its agent');
      await page.screenshot({ path: path.join(shots, 'copilotkit-asker-interrupted.png') });
      await waitingFor(page, 'answer');
      await part.getByLabel('city').fill('Lisbon');
      await form.getByRole('button', { name: 'Send answer' }).click();
      await answered(page, 'The weather in Lisbon is sunny.');
      check((await form.count()) === 0, 'the interrupt form is gone');
      check(occurrences(await chatText(page), 'Which city should I check?') === 1, 'the question is shown once');
    },
  },
  ...['approve', 'deny', 'edit'].map((decision) => ({
    name: `copilotkit-approval-${decision}`,
    what: `CopilotKit app: the approver's book_flight call, ${decision === 'edit' ? 'approved with edited arguments' : decision === 'deny' ? 'denied' : 'approved'} through useInterrupt (tool_call interrupt)`,
    async run({ page, bridge, copilotkitURL }) {
      await openCopilotKit(page, copilotkitURL, 'approver');
      await chat(page, 'Book my flight');
      const form = await interruptForm(page, 1);
      const part = form.locator('fieldset.approval');
      await part.getByText("I'd like to book flight LH123 to Lisbon on 2026-12-24 for 2 passengers. Approve?").waitFor();
      const proposed = await part.locator('.proposed-call').innerText();
      check(proposed.startsWith('book_flight(') && proposed.includes('"passengers":2'), `the proposed call is shown: ${proposed}`);
      const card = page.locator('[data-tool="book_flight"]');
      check((await card.count()) === 1, `${await card.count()} book_flight cards in the chat, want 1`);
      // The run has ended, but the page does not say "Idle": an approval waits.
      await waitingFor(page, 'approval');
      let answer;
      if (decision === 'approve') {
        // Approve and Deny send at once: one click.
        await part.getByRole('button', { name: 'Approve', exact: true }).click();
        answer = 'Booked LH123 to Lisbon for 2 passengers. Confirmation ABC123.';
      } else if (decision === 'deny') {
        await part.getByRole('button', { name: 'Deny', exact: true }).click();
        answer = 'OK, I did not book anything.';
      } else {
        await part.getByRole('button', { name: 'Edit', exact: true }).click();
        const area = part.getByLabel('Arguments');
        const args = JSON.parse(await area.inputValue());
        check(args.flight === 'LH123' && args.passengers === 2, `the editor holds the proposed arguments: ${JSON.stringify(args)}`);
        await area.fill(JSON.stringify({ ...args, passengers: 3 }, null, 2));
        answer = 'Booked LH123 to Lisbon for 3 passengers. Confirmation ABC123.';
        // An edit is reviewed: it waits for the Send button.
        await form.getByRole('button', { name: 'Send answer' }).click();
      }
      await answered(page, answer);
      await page.locator('.status[data-running="false"]:not([data-waiting])').waitFor();
      check((await page.locator('.status').innerText()) === 'Idle', `the status after the answer: ${await page.locator('.status').innerText()}`);
      check((await form.count()) === 0, 'the interrupt form is gone');
      check((await card.count()) === 1, `after the resume ${await card.count()} book_flight cards, want 1`);
      // The bridge's record of the thread, which a replay or another tab
      // gets: the call has one result, and the answer is there once.
      const thread = await bridgeThread(page, bridge, 'approver');
      const callId = thread.messages.flatMap((m) => m.toolCalls ?? []).find((tc) => tc.function?.name === 'book_flight')?.id;
      const results = thread.messages.filter((m) => m.role === 'tool' && m.toolCallId === callId);
      check(results.length === 1, `the bridge's thread holds ${results.length} results for the call: ${JSON.stringify(results)}`);
      check(thread.messages.filter((m) => m.role === 'assistant' && m.content === answer).length === 1, 'the bridge\'s thread holds the answer once');
      if (decision !== 'deny') {
        check(results[0].content.includes('"status":"booked"'), `the bridge records the booking as the call's result: ${results[0].content}`);
        const result = await card.locator('.tool-result').innerText();
        check(result.includes('"status":"booked"') && result.includes('ABC123'), `the booking result on the call: ${result}`);
        check(result.includes(`"passengers":${decision === 'edit' ? 3 : 2}`), `the result books the ${decision === 'edit' ? 'edited' : 'proposed'} call: ${result}`);
      } else {
        check(!(await chatText(page)).includes('ABC123'), 'nothing was booked');
      }
      // The next turn resends the whole conversation, CopilotKit's tool
      // message for the answered call included; the agent asks anew.
      await chat(page, 'Book another one');
      const again = await interruptForm(page, 1);
      await again.locator('fieldset.approval').getByText('Approve?').waitFor();
      check((await card.count()) === 2, `after a second proposal ${await card.count()} book_flight cards, want 2`);
      check(occurrences(await chatText(page), answer) === 1, 'the first answer is still shown once');
    },
  })),
  {
    name: 'copilotkit-team',
    what: 'CopilotKit app: team concierge, two interrupts (asker, approver) answered by one resume',
    async run({ page, copilotkitURL }) {
      await openCopilotKit(page, copilotkitURL, 'concierge');
      await chat(page, 'What is the weather? And book me a flight to Lisbon');
      const form = await interruptForm(page, 2);
      const asks = form.locator('fieldset.question[data-member="asker"]');
      const approval = form.locator('fieldset.approval[data-member="approver"]');
      await asks.getByText('Which city should I check?').waitFor();
      await approval.getByText('Approve?').waitFor();
      await page.screenshot({ path: path.join(shots, 'copilotkit-team-interrupted.png') });
      const send = form.getByRole('button', { name: 'Send answers' });
      await waitingFor(page, 'approval');
      await asks.getByLabel('city').fill('Lisbon');
      check(await send.isDisabled(), 'one answer of two does not send');
      // Approving completes the answers: that click sends both, in one resume.
      await approval.getByRole('button', { name: 'Approve', exact: true }).click();
      await answered(page, 'The weather in Lisbon is sunny.');
      await answered(page, 'Booked LH123 to Lisbon for 2 passengers. Confirmation ABC123.');
      check((await form.count()) === 0, 'the interrupt form is gone');
      const card = page.locator('[data-tool="book_flight"]');
      check((await card.count()) === 1, `${await card.count()} book_flight cards, want 1`);
      check((await card.locator('.tool-result').innerText()).includes('ABC123'), 'the booking result is on the call');
    },
  },
  {
    name: 'copilotkit-state',
    what: 'CopilotKit app: dashboard state through useCoAgent, the page\'s own key sent to the agent and kept',
    async run({ page, copilotkitURL }) {
      await openCopilotKit(page, copilotkitURL, 'dashboard');
      const state = page.getByRole('region', { name: 'Shared state' });
      await state.getByLabel('Your name').fill('Ada');
      await state.getByRole('button', { name: 'Save' }).click();
      await state.locator('[data-key="userName"]').getByText('Ada', { exact: true }).waitFor();
      await chat(page, 'Show me');
      await answered(page, 'Dashboard ready for Ada.');
      const artifacts = JSON.parse(await state.locator('[data-key="artifacts"] pre').innerText());
      const { progress } = artifacts;
      check(progress?.step === 3 && progress?.of === 3 && progress?.done === true && Object.keys(progress).length === 3, `progress artifact (its three updates merged): ${JSON.stringify(artifacts)}`);
      check(JSON.stringify(artifacts.rows) === '[1,2,3]', `rows artifact: ${JSON.stringify(artifacts.rows)}`);
      check(JSON.parse(await state.locator('[data-key="ui"] pre').innerText()).theme === 'dark', 'the UI state keys arrived');
      check((await state.locator('[data-key="task"]').innerText()) === 'completed', 'the task state is in the shared state');
      check((await state.locator('[data-key="userName"]').innerText()) === 'Ada', 'the page\'s own key is kept');
    },
  },
  {
    name: 'copilotkit-frontend-tool',
    what: 'CopilotKit app: painter calls change_background, useCopilotAction runs it in the page, the result goes back',
    async run({ page, copilotkitURL }) {
      await openCopilotKit(page, copilotkitURL, 'painter');
      await chat(page, 'Paint the background');
      await page.locator('main[data-background="blue"]').waitFor();
      await answered(page, 'Background changed to blue (the page is now blue).');
      const card = page.locator('[data-tool="change_background"]');
      check((await card.count()) === 1, `${await card.count()} change_background cards, want 1`);
      check((await card.getAttribute('data-status')) === 'complete', `the call's card says ${await card.getAttribute('data-status')}`);
    },
  },
  {
    name: 'copilotkit-failer',
    what: 'CopilotKit app: the failing agent\'s error is shown, the chat takes the next message, another agent answers',
    async run({ page, copilotkitURL }) {
      await openCopilotKit(page, copilotkitURL, 'failer');
      await chat(page, 'Do it');
      const alert = page.getByRole('alert');
      await alert.getByText('upstream LLM quota exceeded').waitFor();
      await idle(page);
      check((await alert.getAttribute('data-code')) === 'a2a_failed', `the bridge's RUN_ERROR code reaches the page: ${await alert.getAttribute('data-code')}`);
      await page.screenshot({ path: path.join(shots, 'copilotkit-failer-error.png') });
      await alert.getByRole('button', { name: 'Dismiss' }).click();
      await alert.waitFor({ state: 'detached' });
      // The failed run left nothing stuck: the next message is sent, and fails the same way.
      await chat(page, 'Try again');
      await alert.getByText('upstream LLM quota exceeded').waitFor();
      await idle(page);
      check((await page.getByTestId('copilot-user-message').count()) === 2, 'both messages are in the chat');
      await page.getByRole('navigation', { name: 'Agents' }).getByRole('link', { name: 'streamer' }).click();
      await page.getByRole('heading', { name: 'streamer' }).waitFor();
      await chat(page, 'Still there');
      await answered(page, 'You said: Still there. Here is a streamed answer.');
    },
  },
];

// ---------- a bridge that can be stopped and started again ----------

async function stopChild(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

// restartableBridge serves the counter demo agent (from the demo-agents
// command, which outlives the bridge) through `bridge serve` on an embedded
// store, so a stopped bridge's successor takes its runs over.
async function restartableBridge(bin, agentsBin) {
  let agentsURL = null;
  let agents = null;
  let child = null;
  let starts = 0;
  // The port is taken at the first start, not when the suite begins: a
  // port found free minutes earlier may be another process's by then.
  let port = 0;
  let url = '';
  const config = path.join(work, 'restart-bridge.yaml');
  const store = path.join(work, 'restart-bridge.db');
  fs.rmSync(store, { force: true });
  // writeConfig writes the bridge's config; with apiKey it requires that
  // key, as principal "alice".
  const writeConfig = (apiKey) =>
    fs.writeFileSync(config, [
      '# Written by console/e2e/run.mjs for the restart and auth scenarios.',
      `listen: ${JSON.stringify(`127.0.0.1:${port}`)}`,
      `store: {kind: embedded, path: ${JSON.stringify(store)}}`,
      // A short grace, so stopping cuts the counter's ten-second run.
      'server: {shutdownGrace: 200ms}',
      ...(apiKey ? ['auth:', '  apiKeys:', `    - {key: ${JSON.stringify(apiKey)}, principal: alice}`] : []),
      'agents:',
      `  - {name: counter, url: ${JSON.stringify(agentsURL.counter.url)}}`,
      `  - {name: streamer, url: ${JSON.stringify(agentsURL.streamer.url)}}`,
      '',
    ].join('\n'));
  return {
    // start runs the bridge; with apiKey (first start only) it requires
    // that key, as principal "alice".
    async start({ apiKey } = {}) {
      if (!agentsURL) {
        agents = start(agentsBin, ['--listen', '127.0.0.1:0'], { cwd: work, logFile: path.join(work, 'restart-agents.log'), captureStdout: true });
        agentsURL = (await firstJSONLine(agents, 30_000, 'demo-agents')).agents;
      }
      // The port is picked once the agents hold theirs (a free port found
      // before they bound their two dozen may be one of them), and picked
      // again should another process take it before the bridge binds it;
      // a restart keeps it, for the page to reconnect to.
      const first = !url;
      for (let attempt = 1; ; attempt++) {
        if (!url) {
          port = await freePort();
          url = `http://127.0.0.1:${port}`;
          this.url = url;
          writeConfig(apiKey);
        }
        starts++;
        const logFile = path.join(work, `restart-bridge-${starts}.log`);
        child = start(bin, ['serve', '--config', config], { cwd: work, logFile });
        try {
          await waitReady(`${url}/readyz`, child, 30_000, 'bridge serve');
          return this;
        } catch (err) {
          const log = tail(logFile, 20);
          if (first && attempt < 3 && log.includes('address already in use')) {
            url = '';
            continue;
          }
          throw new Error(`${err.message}\n${path.relative(root, logFile)}:\n${log}`);
        }
      }
    },
    async stop() {
      await stopChild(child);
    },
    // close stops whatever the scenario left running.
    async close() {
      await stopChild(child);
      await stopChild(agents);
    },
    url,
  };
}

// ---------- main ----------

async function main() {
  const started = Date.now();
  fs.mkdirSync(work, { recursive: true });
  fs.mkdirSync(shots, { recursive: true });
  const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
  if (!fs.existsSync(executablePath)) throw new Error(`no Chromium at ${executablePath} (install Debian's chromium, or set CHROMIUM)`);

  const bin = path.join(work, 'bridge');
  const agentsBin = path.join(work, 'demo-agents');
  const dist = path.join(example, 'dist');
  if (!opts['no-build']) {
    say('== building the bridge, the demo agents and the CopilotKit app');
    await run('go', ['build', '-o', bin, './cmd/bridge'], { cwd: root });
    await run('go', ['build', '-o', agentsBin, './examples/cmd/demo-agents'], { cwd: root });
    if (!opts['no-app-build']) await run('npm', ['run', 'build'], { cwd: example });
  }

  const port = await freePort();
  const bridge = `http://127.0.0.1:${port}`;
  const bridgeLog = path.join(work, 'bridge.log');
  const child = start(bin, ['demo', '--listen', `127.0.0.1:${port}`], { cwd: work, logFile: bridgeLog });
  await waitReady(`${bridge}/readyz`, child, 30_000, 'bridge demo');
  // The CopilotKit app's runtime (examples/copilotkit/server.mjs) hosts the
  // demo bridge's agents and serves the built app from the same origin.
  const runtimeLog = path.join(work, 'copilotkit-runtime.log');
  const runtime = start('node', [path.join(example, 'server.mjs'), '--listen', `127.0.0.1:${await freePort()}`, '--bridge', bridge, '--dist', dist], {
    cwd: example,
    logFile: runtimeLog,
    captureStdout: true,
    env: { COPILOTKIT_TELEMETRY_DISABLED: 'true' },
  });
  const copilotkitURL = await firstJSONLine(runtime, 60_000, 'the CopilotKit runtime (examples/copilotkit/server.mjs)').then(
    (ready) => ready.url,
    (err) => {
      throw new Error(`${err.message}\n${path.relative(root, runtimeLog)}:\n${tail(runtimeLog, 20)}`);
    },
  );

  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  let passed = 0;
  let failed = 0;
  try {
    for (const s of scenarios) {
      if (only && !only.test(s.name)) continue;
      // No stale picture of an earlier run may pass for this one's.
      for (const f of [`${s.name}.png`, `${s.name}-failed.png`]) fs.rmSync(path.join(shots, f), { force: true });
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      context.setDefaultTimeout(STEP_TIMEOUT_MS);
      const page = await context.newPage();
      const pageErrors = [];
      page.on('pageerror', (err) => pageErrors.push(err.message));
      if (opts.verbose) page.on('console', (msg) => say(`   [${s.name}] console.${msg.type()}: ${msg.text()}`));
      const restartable = await restartableBridge(bin, agentsBin);
      const t0 = Date.now();
      try {
        await s.run({ page, bridge, copilotkitURL, restartable });
        check(pageErrors.length === 0, `uncaught errors in the page: ${pageErrors.join('; ')}`);
        await page.screenshot({ path: path.join(shots, `${s.name}.png`) });
        passed++;
        say(`ok    ${s.name} (${((Date.now() - t0) / 1000).toFixed(1)}s) — ${s.what}`);
      } catch (err) {
        failed++;
        say(`FAIL  ${s.name} — ${s.what}\n      ${String(err.message ?? err).split('\n').join('\n      ')}`);
        if (pageErrors.length) say(`      page errors: ${pageErrors.join('; ')}`);
        await page.screenshot({ path: path.join(shots, `${s.name}-failed.png`) }).catch(() => {});
      } finally {
        await context.close();
        await restartable.close();
      }
    }
  } finally {
    await browser.close();
    await stopAll();
  }
  if (failed > 0) say(`bridge log (last lines of ${path.relative(root, bridgeLog)}):\n${tail(bridgeLog, 20)}`);
  say(`screenshots in ${path.relative(root, shots)}/ · ${((Date.now() - started) / 1000).toFixed(1)}s`);
  say(`${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  async (err) => {
    say(`browser tests could not run: ${err.stack ?? err}`);
    await stopAll();
    say('0 passed, 1 failed');
    process.exit(1);
  },
);
