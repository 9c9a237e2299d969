// Tests the harness itself, without the bridge: a tiny HTTP server replays
// canned AG-UI streams (the reference streams of AGUI-PROTOCOL.md §10.4 and
// known-bad variants) to the real clients, and each verdict of lib/harness.mjs
// must match the table below. Run it after touching lib/harness.mjs or
// upgrading a client:   node conformance/harness-selftest.mjs

import http from 'node:http';
import { anyString, AUTH_REASON, CLIENT_VERSIONS, dataURL, evidence, runScenario, withAuthorizeURL } from './lib/harness.mjs';

const T = 'RUN_STARTED';
const start = (b) => ({ type: T, threadId: b.threadId, runId: b.runId });
const finish = (b, extra = {}) => ({ type: 'RUN_FINISHED', threadId: b.threadId, runId: b.runId, ...extra });
const text = (id, ...deltas) => [
  { type: 'TEXT_MESSAGE_START', messageId: id, role: 'assistant' },
  ...deltas.map((delta) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta })),
  { type: 'TEXT_MESSAGE_END', messageId: id },
];
const interrupt = (b) =>
  finish(b, {
    outcome: {
      type: 'interrupt',
      interrupts: [{ id: 'int-1', reason: 'input_required', message: 'Which city?', responseSchema: { type: 'object' } }],
    },
  });

// Tool approval (AGUI-PROTOCOL.md §4.3): run 1 proposes the call and ends in a
// tool_call interrupt; run 2 (the resume) reports the result on the same id.
const BOOK_ARGS = { flight: 'LH123', passengers: 2 };
const APPROVAL_SCHEMA = {
  type: 'object',
  properties: { approved: { type: 'boolean' }, editedArgs: { type: 'object' } },
  required: ['approved'],
};
const propose = (b, { id = 'tc-1', streamed = true, schema = APPROVAL_SCHEMA } = {}) => [
  start(b),
  ...text('m-p', 'Book LH123?'),
  ...(streamed
    ? [
        { type: 'TOOL_CALL_START', toolCallId: id, toolCallName: 'book_flight', parentMessageId: 'm-p' },
        { type: 'TOOL_CALL_ARGS', toolCallId: id, delta: JSON.stringify(BOOK_ARGS) },
        { type: 'TOOL_CALL_END', toolCallId: id },
      ]
    : []),
  finish(b, {
    outcome: {
      type: 'interrupt',
      interrupts: [{ id: 'int-t', reason: 'tool_call', toolCallId: id, message: 'Book LH123?', responseSchema: schema }],
    },
  }),
];
const toolResult = (id, content = '{"status":"booked","confirmation":"ABC123"}') => ({
  type: 'TOOL_CALL_RESULT',
  messageId: `tr-${id}`,
  toolCallId: id,
  content,
  role: 'tool',
});
/** A two-run tool approval: `resumed(b, approved)` is run 2's body after RUN_STARTED. */
const approval = (resumed) => (b) => {
  const r = b.resume?.[0];
  if (r?.interruptId !== 'int-t') return propose(b);
  return [start(b), ...resumed(b, r.payload?.approved === true), finish(b)];
};
const booked = (b, approved) => (approved ? [toolResult('tc-1'), ...text(`m-${b.runId}`, 'Booked.')] : text(`m-${b.runId}`, 'Not booked.'));
const toolExpect = { interrupt: true, reason: 'tool_call', question: 'Book LH123?', tool: 'book_flight', args: BOOK_ARGS };
const approve = { payload: { approved: true }, answer: 'Booked.', toolResult: true, resultContains: 'ABC123' };
const deny = { payload: { approved: false }, answer: 'Not booked.', toolResult: false };
const INTERRUPT_ONLY = { '1.0.0': true, '0.0.59': true };
const INTERRUPT_FAILS = { '1.0.0': false, '0.0.59': false };

// Shared state (AGUI-PROTOCOL.md §5.1): a snapshot of the client's state with
// the bridge's key, then deltas under it.
const snap = (state) => ({ type: 'STATE_SNAPSHOT', snapshot: state });
const delta = (...ops) => ({ type: 'STATE_DELTA', delta: ops });
const stateRun = (first, ...rest) => (b) => [start(b), first(b), ...rest, ...text('m-1', 'Done.'), finish(b)];
const stateScenario = (a2a = { n: 2, id: anyString }) => ({ initialState: { user: 'Ada' }, expect: { answer: 'Done.', state: { user: 'Ada', a2a } } });
const ALL = (ok) => ({ '1.0.0': ok, '0.0.59': ok, '0.0.36': ok });

// Reasoning and files: REASONING_*/ACTIVITY_SNAPSHOT for 1.0 (the request says
// protocolVersion), CUSTOM events for older clients.
const reasoning = (b, t) =>
  b.protocolVersion
    ? [
        { type: 'REASONING_START', messageId: 'r' },
        { type: 'REASONING_MESSAGE_START', messageId: 'r-1', role: 'reasoning' },
        { type: 'REASONING_MESSAGE_CONTENT', messageId: 'r-1', delta: t },
        { type: 'REASONING_MESSAGE_END', messageId: 'r-1' },
        { type: 'REASONING_END', messageId: 'r' },
      ]
    : [{ type: 'CUSTOM', name: 'a2a.reasoning', value: { text: t } }];
const CHART = { url: 'https://example.com/c.png', mediaType: 'image/png', name: 'c.png' };
const HELLO = { url: 'data:text/plain;base64,aGVsbG8=', mediaType: 'text/plain', name: 'hello.txt', size: 5 };
const filesRun = (files, stateFiles = files) => (b) => [
  start(b),
  snap({ ...b.state, a2a: { files: stateFiles } }),
  ...files.map((f, i) =>
    b.protocolVersion ? { type: 'ACTIVITY_SNAPSHOT', messageId: `f-${i}`, activityType: 'a2a.file', content: f } : { type: 'CUSTOM', name: 'a2a.file', value: f },
  ),
  ...text('m-1', 'Files.'),
  finish(b),
];
const filesExpect = { answer: 'Files.', files: [CHART, { ...HELLO, url: dataURL('hello') }] };

// Frontend tools (§4.5): run 1 streams a call of a tool the request offered and
// finishes (1.0: pendingToolCallIds); run 2 carries the tool message and answers.
const PAINT = [{ name: 'paint', description: 'Paints.', parameters: { type: 'object', properties: { color: { type: 'string' } } } }];
const frontend =
  ({ pendingIds = true, callMeta, finishExtra, answerRun = (b) => text(`m-${b.runId}`, 'Painted (ok).') } = {}) =>
  (b) => {
    const result = b.messages.find((m) => m.role === 'tool' && m.toolCallId === 'fc-1');
    if (result) return [start(b), ...(result.content === 'ok' ? answerRun(b) : text(`m-${b.runId}`, 'wrong result')), finish(b)];
    if (!b.tools?.some((t) => t.name === 'paint')) return [start(b), ...text('m-n', 'No paint tool.'), finish(b)];
    return [
      start(b),
      ...text('m-a', 'Painting…'),
      { type: 'TOOL_CALL_START', toolCallId: 'fc-1', toolCallName: 'paint', parentMessageId: 'm-a', ...(callMeta && { metadata: callMeta }) },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'fc-1', delta: '{"color":"blue"}' },
      { type: 'TOOL_CALL_END', toolCallId: 'fc-1' },
      finish(b, finishExtra ?? (b.protocolVersion && pendingIds ? { outcome: { type: 'success', pendingToolCallIds: ['fc-1'] } } : {})),
    ];
  };
const frontendScenario = { tools: PAINT, frontendTool: { tool: 'paint', args: { color: 'blue' }, result: 'ok', answer: 'Painted (ok).' } };

// Sign-in (AUTH_REQUIRED, docs/mapping.md "Sign-in"): a stateful fake agent+bridge. Run
// 1 ends in an a2a:auth_required interrupt carrying the sign-in details; the
// harness signs in with POST /<case>/authorize?task=… and resumes. mode
// "after": the resume answers only if the sign-in came before it; mode
// "during": the resume shows its runId at GET /<case>/threads/<id> (unless
// showActive is false) and answers only if the sign-in comes while it runs.
const SIGNIN_Q = 'Please sign in.';
const SIGNIN_A = 'Signed in.';
const signinDetails = (taskId) => [{ authorize: `/fake/authorize?task=${taskId}`, taskId }];
const authInterrupt = (b, taskId, details) =>
  finish(b, {
    outcome: {
      type: 'interrupt',
      interrupts: [{ id: `auth-${taskId}`, reason: AUTH_REASON, message: SIGNIN_Q, metadata: { a2a: { agent: 'fake', taskId, contextId: 'ctx', ...(details && { auth: details }) } } }],
    },
  });
function signin({ mode = 'after', details = signinDetails, authorizeStatus = 204, showActive = true, stillPending = false, resumedTask } = {}) {
  const tasks = new Map(); // taskId → {taskId, signedIn: null|"before"|"during", active, wake}
  const byThread = new Map();
  const taskSnap = (b, id, state) => snap({ ...b.state, a2a: { task: { id, state } } });
  const write = (res, events) => {
    for (const e of events) res.write(`data: ${JSON.stringify(e)}\n\n`);
  };
  return async (req, res, sub, query, body) => {
    if (req.method === 'GET' && sub.startsWith('threads/')) {
      const t = byThread.get(decodeURIComponent(sub.slice('threads/'.length)));
      if (!t) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ activeRunId: showActive ? (t.active ?? undefined) : undefined }));
    }
    if (req.method === 'POST' && sub === 'authorize') {
      const t = tasks.get(query.get('task'));
      if (!t) return res.writeHead(404).end('no task is waiting for that sign-in');
      if (authorizeStatus !== 204) return res.writeHead(authorizeStatus).end('sign-in refused');
      t.signedIn ??= t.active ? 'during' : 'before';
      t.wake?.();
      return res.writeHead(204).end();
    }
    if (sub !== '') return res.writeHead(404).end();
    const b = JSON.parse(body);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (!b.resume) {
      const t = { taskId: `task-${b.threadId}`, signedIn: null, active: null };
      tasks.set(t.taskId, t);
      byThread.set(b.threadId, t);
      write(res, [start(b), taskSnap(b, t.taskId, 'auth_required'), ...text('m-q', SIGNIN_Q), authInterrupt(b, t.taskId, details(t.taskId))]);
      return res.end();
    }
    const t = byThread.get(b.threadId);
    write(res, [start(b)]);
    if (mode === 'during' && !t.signedIn) {
      t.active = b.runId;
      await new Promise((resolve) => {
        t.wake = resolve;
        setTimeout(resolve, 1500);
      });
      t.active = null;
    }
    const ok = t.signedIn === (mode === 'during' ? 'during' : 'before');
    const task = resumedTask ?? t.taskId;
    write(res, [
      taskSnap(b, task, ok && !stillPending ? 'completed' : 'auth_required'),
      ...text(`m-${b.runId}`, ok ? SIGNIN_A : 'Not signed in.'),
      stillPending ? authInterrupt(b, task, details(task)) : finish(b),
    ]);
    res.end();
  };
}
const signinExpect = { interrupt: true, reason: AUTH_REASON, question: SIGNIN_Q, auth: signinDetails };
const signinResume = (when) => ({ payload: { signedIn: true }, answer: SIGNIN_A, authorize: { when } });
const INTERRUPT_FAILS_36_OK = { ...INTERRUPT_FAILS, '0.0.36': true };

// Teams (lib/teams.mjs): a fake team "duo" of members alpha and beta that
// streams as the bridge does — 1.0: SUBAGENT_STARTED … SUBAGENT_FINISHED/ERROR
// per member, every member event tagged with its subagentRunId, the lanes
// interleaved; older clients: no tags, the member's name on
// TEXT_MESSAGE_START and in metadata, one member after the other, a failing
// member as CUSTOM a2a.member_error — and keeps a journal per thread that
// GET /<case>/threads/<id>/events replays (the harness reads it again).
const sid = (b, m) => `sa-${m}-${b.runId}`;
const mtext = (m, id, content) => [
  { type: 'TEXT_MESSAGE_START', messageId: id, role: 'assistant', name: m, metadata: { 'a2a-bridge': { member: m } } },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta: content },
  { type: 'TEXT_MESSAGE_END', messageId: id },
];
const view = (m, task, extra = {}) => ({ agent: m, contextId: `ctx-${m}`, task, ...extra });
/**
 * teamRun is one run of a team: members = {name: {events, view, error?, interrupt?}}
 * (events untagged; error: the code of a member that failed; interrupt: its
 * interrupt, id "<member>:…"). mutate(events, b, v1) makes a variant.
 */
function teamRun(b, members, { route, strategy = 'parallel', snapshotMessages, mutate = (x) => x } = {}) {
  const v1 = b.protocolVersion === '1.0';
  const views = Object.fromEntries(Object.entries(members).map(([m, x]) => [m, x.view]));
  const out = [start(b), snap({ a2a: { team: 'duo', strategy, ...(route && { route }), members: views } })];
  if (route) out.push({ type: 'CUSTOM', name: 'a2a.route', value: route });
  const interrupts = Object.entries(members)
    .filter(([, x]) => x.interrupt)
    .map(([m, x]) => ({ ...x.interrupt, ...(v1 && { subagentRunId: sid(b, m) }) }));
  if (v1) {
    const lanes = Object.entries(members).map(([m, x]) => {
      const tag = { subagentRunId: sid(b, m) };
      const end = x.error
        ? { type: 'SUBAGENT_ERROR', message: `agent "${m}" is down`, code: x.error, ...tag }
        : { type: 'SUBAGENT_FINISHED', outcome: x.interrupt ? { type: 'suspended', interruptIds: [x.interrupt.id] } : { type: 'success' }, ...tag };
      return [{ type: 'SUBAGENT_STARTED', name: m, ...tag }, ...x.events.map((e) => ({ ...e, ...tag })), end];
    });
    for (let i = 0; lanes.some((l) => i < l.length); i++) for (const l of lanes) if (i < l.length) out.push(l[i]);
  } else {
    for (const [m, x] of Object.entries(members)) {
      out.push(...x.events);
      if (x.error) out.push({ type: 'CUSTOM', name: 'a2a.member_error', value: { member: m, code: x.error, message: `agent "${m}" is down` } });
    }
  }
  if (snapshotMessages) out.push({ type: 'MESSAGES_SNAPSHOT', messages: snapshotMessages(b, v1) });
  out.push(finish(b, interrupts.length > 0 ? { outcome: { type: 'interrupt', interrupts } } : {}));
  return mutate(out, b, v1);
}
/** teamFake serves `run(body)` and replays each thread's journal (through `replay`, a variant). */
function teamFake(run, { replay = (events) => events } = {}) {
  const journals = new Map();
  return async (req, res, sub, query, body) => {
    const m = /^threads\/([^/]+)\/events$/.exec(sub);
    if (req.method === 'GET' && m) {
      if (req.headers['last-event-id'] !== '0') return res.writeHead(400).end('want Last-Event-ID: 0');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      replay(journals.get(decodeURIComponent(m[1])) ?? []).forEach((e, i) => res.write(`id: ${i + 1}\ndata: ${JSON.stringify(e)}\n\n`));
      return res.end();
    }
    if (sub !== '') return res.writeHead(404).end();
    const b = JSON.parse(body);
    const events = run(b);
    journals.set(b.threadId, [...(journals.get(b.threadId) ?? []), ...events]);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const e of events) res.write(`data: ${JSON.stringify(e)}\n\n`);
    res.end();
  };
}
const done = (m) => view(m, { id: `t-${m}`, state: 'completed' });
const duo = (opts) => (b) =>
  teamRun(
    b,
    {
      alpha: { events: mtext('alpha', `m-a-${b.runId}`, 'Alpha says hi.'), view: done('alpha') },
      beta: { events: mtext('beta', `m-b-${b.runId}`, 'Beta says hi.'), view: done('beta') },
    },
    opts,
  );
const duoTeam = { strategy: 'parallel', members: ['alpha', 'beta'], answers: { alpha: 'Alpha says hi.', beta: 'Beta says hi.' } };
const teamScenario = (team = duoTeam) => ({ agent: 'duo', team });
/** Applies f to the events of member m's message (by its id prefix). */
const onMessage = (prefix, f) => (events) => events.map((e) => (String(e.messageId).startsWith(prefix) ? f(e) : e));
const ONLY_V1_FAILS = { '1.0.0': false, '0.0.59': true, '0.0.36': true };
const ONLY_OLDER_FAIL = { '1.0.0': true, '0.0.59': false, '0.0.36': false };
const attributedSnapshot = (b, v1) => [
  ...b.messages,
  { id: `m-a-${b.runId}`, role: 'assistant', name: 'alpha', content: 'Alpha says hi.', ...(v1 && { subagentRunId: sid(b, 'alpha') }) },
  { id: `m-b-${b.runId}`, role: 'assistant', name: 'beta', content: 'Beta says hi.', ...(v1 && { subagentRunId: sid(b, 'beta') }) },
];
// A member that is down: gamma fails, alpha answers.
const downTeam = { strategy: 'parallel', members: ['alpha', 'gamma'], answers: { alpha: 'Alpha says hi.' }, failed: { gamma: 'a2a_card_unavailable' } };
const withDown = (gamma) => (b) =>
  teamRun(b, { alpha: { events: mtext('alpha', `m-a-${b.runId}`, 'Alpha says hi.'), view: done('alpha') }, gamma: { events: [], view: { agent: 'gamma' }, ...gamma } });
// A router: alpha picked.
const routed = (member) => (b) =>
  teamRun(b, { alpha: { events: mtext('alpha', `m-a-${b.runId}`, 'Alpha says hi.'), view: done('alpha') } }, { strategy: 'router', route: { member, score: 2, reason: 'matched "hi"' } });
const routeTeam = { strategy: 'router', members: ['alpha'], route: 'alpha', answers: { alpha: 'Alpha says hi.' } };
// Both members interrupt; one resume answers both, each with its own payload.
const ASK_A = { question: 'Which city?', responseSchema: { type: 'object' } };
const ASK_B = { question: 'Proceed?' };
const asking = (m, q, i, extra = {}) => ({
  events: mtext(m, `q-${m}`, q),
  interrupt: { id: `${m}:${i}`, reason: 'input_required', message: q, responseSchema: { type: 'object' }, metadata: { a2a: { agent: m, taskId: `t-${m}`, contextId: `ctx-${m}` } }, ...extra },
  view: view(m, { id: `t-${m}`, state: 'input_required' }, { pendingInterrupts: [`${m}:${i}`] }),
});
const duoAsks = ({ mutate, resumedTask = (m) => `t-${m}`, ids = { alpha: 'alpha:i-1', beta: 'beta:i-2' } } = {}) => (b) => {
  if (!b.resume) {
    return teamRun(
      b,
      {
        alpha: asking('alpha', 'Which city?', 'i-1', { id: ids.alpha }),
        beta: asking('beta', 'Proceed?', 'i-2', { id: ids.beta }),
      },
      { mutate },
    );
  }
  const payload = (id) => b.resume.find((r) => r.interruptId === id)?.payload;
  return teamRun(b, {
    alpha: { events: mtext('alpha', `m-a-${b.runId}`, `Alpha: ${payload(ids.alpha)?.city ?? '?'}.`), view: view('alpha', { id: resumedTask('alpha'), state: 'completed' }) },
    beta: { events: mtext('beta', `m-b-${b.runId}`, payload(ids.beta)?.ok === true ? 'Beta: done.' : 'Beta: not told.'), view: done('beta') },
  });
};
const asksTeam = { strategy: 'parallel', members: ['alpha', 'beta'], interrupts: { alpha: ASK_A, beta: ASK_B } };
const resumeTeam = {
  ...asksTeam,
  resume: { payloads: { alpha: { city: 'Lisbon' }, beta: { ok: true } }, answers: { alpha: 'Alpha: Lisbon.', beta: 'Beta: done.' } },
};

// Issue 17: one tool-call card per call, server-executed calls, progress
// notes kept out of the answer, a streamed answer, a second turn.
const callEvents = (id, name = 'book_flight', meta) => [
  { type: 'TOOL_CALL_START', toolCallId: id, toolCallName: name, ...(meta && { metadata: meta }) },
  { type: 'TOOL_CALL_ARGS', toolCallId: id, delta: JSON.stringify(BOOK_ARGS) },
  { type: 'TOOL_CALL_END', toolCallId: id },
];
const SERVER = { 'ag-ui:tool-execution': 'server' };
const serverTool = ({ meta = SERVER, result = true } = {}) => (b) => [
  start(b),
  ...callEvents('st-1', 'book_flight', meta),
  ...(result ? [toolResult('st-1')] : []),
  ...text('m-s', 'Booked it.'),
  finish(b),
];
const serverToolExpect = { answer: 'Booked it.', serverTools: [{ name: 'book_flight', args: BOOK_ARGS, result: 'ABC123' }] };
const snapshotWith = (toolCalls) => ({
  type: 'MESSAGES_SNAPSHOT',
  messages: [
    { id: 'u-1', role: 'user', content: 'hello' },
    { id: 'm-p', role: 'assistant', content: 'Book LH123?', toolCalls },
  ],
});
const call = (id) => ({ id, type: 'function', function: { name: 'book_flight', arguments: JSON.stringify(BOOK_ARGS) } });
/** Answers "Second." only when the thread already holds the first turn's answer. */
const secondTurn = (b) => {
  const users = b.messages.filter((m) => m.role === 'user').length;
  return [start(b), ...text(`m-${b.runId}`, users > 1 ? 'Second.' : 'First.'), finish(b)];
};

/**
 * viewFake is a bridge-like agent named "fake" that also serves the thread
 * view (GET threads/<id>): a server-executed call and its result, with the
 * view holding the result `results` times.
 */
const viewFake = (results) => async (req, res, sub, query, body) => {
  const m = /^threads\/([^/]+)$/.exec(sub);
  if (req.method === 'GET' && m) {
    const result = { id: 'tr-st-1', role: 'tool', toolCallId: 'st-1', content: '{"confirmation":"ABC123"}' };
    const messages = [
      { id: 'u-1', role: 'user', content: 'hello' },
      { id: 'm-c', role: 'assistant', content: '', toolCalls: [call('st-1')] },
      ...Array.from({ length: results }, (_, i) => ({ ...result, id: `tr-st-1-${i}` })),
      { id: 'm-s', role: 'assistant', content: 'Booked it.' },
    ];
    return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ agent: 'fake', threadId: decodeURIComponent(m[1]), messages }));
  }
  if (sub !== '') return res.writeHead(404).end();
  const b = JSON.parse(body);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const events = serverTool()(b);
  events.splice(1, 0, snap({ a2a: { agent: 'fake' } }));
  for (const e of events) res.write(`data: ${JSON.stringify(e)}\n\n`);
  res.end();
};

/** name → (body) => events; `want` = expected ok per client version. */
const A2UI_OPS = [
  { surfaceUpdate: { surfaceId: 'booking', components: [{ id: 'root', component: { Text: { text: { path: '/name' } } } }] } },
  { beginRendering: { surfaceId: 'booking', root: 'root' } },
  { dataModelUpdate: { surfaceId: 'booking', contents: [{ key: 'name', valueString: 'Ada' }] } },
];
/** An a2ui-surface activity: a snapshot of the first two operations, a delta adding the third. */
const a2uiSurface = ({ copilotKey = true } = {}) => [
  { type: 'ACTIVITY_SNAPSHOT', messageId: 'a-1', activityType: 'a2ui-surface', content: { operations: A2UI_OPS.slice(0, 2), a2ui_operations: A2UI_OPS.slice(0, 2) } },
  {
    type: 'ACTIVITY_DELTA',
    messageId: 'a-1',
    activityType: 'a2ui-surface',
    patch: [{ op: 'add', path: '/operations/-', value: A2UI_OPS[2] }, ...(copilotKey ? [{ op: 'add', path: '/a2ui_operations/-', value: A2UI_OPS[2] }] : [])],
  },
];
const a2uiScenario = ({ custom = false } = {}) => ({ a2ui: { custom, steps: [{ expect: { answer: 'Fill it.' }, surface: ['"beginRendering"', '"valueString":"Ada"'] }] } });

const cases = {
  answer: {
    stream: (b) => [start(b), ...text(`m-${b.runId}`, 'It is ', '22 degrees.'), finish(b)],
    scenario: { expect: { answer: 'It is 22 degrees.' } },
    want: { '1.0.0': true, '0.0.59': true, '0.0.36': true },
  },
  'tool-call-between-texts': {
    stream: (b) => [
      start(b),
      ...text('m-1', 'Looking that up'),
      { type: 'TOOL_CALL_START', toolCallId: 'tc-1', toolCallName: 'search', parentMessageId: 'm-1' },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'tc-1', delta: '{"q":"weather"}' },
      { type: 'TOOL_CALL_END', toolCallId: 'tc-1' },
      { type: 'TOOL_CALL_RESULT', messageId: 'tr-1', toolCallId: 'tc-1', content: '{"temp":22}', role: 'tool' },
      ...text('m-2', 'It is 22 degrees.'),
      finish(b),
    ],
    scenario: { expect: { answer: 'It is 22 degrees.' } },
    want: { '1.0.0': true, '0.0.59': true, '0.0.36': true },
  },
  'duplicate-answer': {
    stream: (b) => [start(b), ...text('m-1', 'It is 22 degrees.'), ...text('m-2', 'It is 22 degrees.'), finish(b)],
    scenario: { expect: { answer: 'It is 22 degrees.' } },
    want: { '1.0.0': false, '0.0.59': false, '0.0.36': false },
  },
  'run-error': {
    stream: (b) => [start(b), { type: 'RUN_ERROR', message: 'upstream LLM quota exceeded', code: 'a2a_failed' }],
    scenario: { expect: { error: 'a2a_failed', message: 'quota' } },
    want: { '1.0.0': true, '0.0.59': true, '0.0.36': true },
  },
  'wrong-error-code': {
    stream: (b) => [start(b), { type: 'RUN_ERROR', message: 'nope', code: 'a2a_rejected' }],
    scenario: { expect: { error: 'a2a_failed' } },
    want: { '1.0.0': false, '0.0.59': false, '0.0.36': false },
  },
  interrupt: {
    stream: (b) => [start(b), ...text('m-q', 'Which city?'), interrupt(b)],
    scenario: { expect: { interrupt: true, question: 'Which city?' } },
    want: { '1.0.0': true, '0.0.59': true, '0.0.36': true },
  },
  'finished-instead-of-interrupt': {
    stream: (b) => [start(b), ...text('m-q', 'Which city?'), finish(b)],
    scenario: { expect: { interrupt: true } },
    // 0.0.36 cannot see outcomes, so a plain finish is all it can check.
    want: { '1.0.0': false, '0.0.59': false, '0.0.36': true },
  },
  resume: {
    stream: (b) =>
      b.resume?.[0]?.interruptId === 'int-1' && b.resume[0].payload?.city === 'Paris'
        ? [start(b), ...text(`m-${b.runId}`, 'Sunny in Paris.'), finish(b)]
        : [start(b), ...text('m-q', 'Which city?'), interrupt(b)],
    scenario: { expect: { question: 'Which city?' }, resume: { payload: { city: 'Paris' }, answer: 'Sunny in Paris.' } },
    want: { '1.0.0': true, '0.0.59': true },
  },
  'resume-schema-mismatch': {
    stream: (b) => [start(b), interrupt(b)],
    scenario: { expect: { interrupt: true, responseSchema: { type: 'object', required: ['city'] } } },
    want: INTERRUPT_FAILS,
  },
  'tool-interrupt': {
    stream: (b) => propose(b),
    scenario: { expect: toolExpect },
    // 0.0.36 only has to accept the run.
    want: { '1.0.0': true, '0.0.59': true, '0.0.36': true },
  },
  'tool-interrupt-not-streamed': {
    stream: (b) => propose(b, { streamed: false }),
    scenario: { expect: toolExpect },
    want: { '1.0.0': false, '0.0.59': false, '0.0.36': true },
  },
  'tool-interrupt-no-edit-schema': {
    stream: (b) => propose(b, { schema: { type: 'object' } }),
    scenario: { expect: toolExpect },
    want: INTERRUPT_FAILS,
  },
  'tool-interrupt-wrong-args': {
    stream: (b) => propose(b),
    scenario: { expect: { ...toolExpect, args: { ...BOOK_ARGS, passengers: 3 } } },
    want: INTERRUPT_FAILS,
  },
  'tool-approve': {
    stream: approval(booked),
    scenario: { expect: toolExpect, resume: approve },
    want: INTERRUPT_ONLY,
  },
  'tool-approve-reemitted': {
    stream: approval((b, ok) => [
      { type: 'TOOL_CALL_START', toolCallId: 'tc-1', toolCallName: 'book_flight' },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'tc-1', delta: '{}' },
      { type: 'TOOL_CALL_END', toolCallId: 'tc-1' },
      ...booked(b, ok),
    ]),
    scenario: { expect: toolExpect, resume: approve },
    want: INTERRUPT_FAILS,
  },
  'tool-approve-no-result': {
    stream: approval((b) => text(`m-${b.runId}`, 'Booked.')),
    scenario: { expect: toolExpect, resume: approve },
    want: INTERRUPT_FAILS,
  },
  'tool-approve-result-twice': {
    stream: approval((b) => [toolResult('tc-1'), { ...toolResult('tc-1'), messageId: 'tr-again' }, ...text(`m-${b.runId}`, 'Booked.')]),
    scenario: { expect: toolExpect, resume: approve },
    want: INTERRUPT_FAILS,
  },
  'tool-approve-wrong-id': {
    stream: approval((b) => [toolResult('tc-2'), ...text(`m-${b.runId}`, 'Booked.')]),
    scenario: { expect: toolExpect, resume: approve },
    want: INTERRUPT_FAILS,
  },
  'tool-approve-wrong-result': {
    stream: approval((b) => [toolResult('tc-1', '{"status":"failed"}'), ...text(`m-${b.runId}`, 'Booked.')]),
    scenario: { expect: toolExpect, resume: approve },
    want: INTERRUPT_FAILS,
  },
  'tool-approve-answer-twice': {
    stream: approval((b, ok) => [...booked(b, ok), ...text('m-again', 'Booked.')]),
    scenario: { expect: toolExpect, resume: approve },
    want: INTERRUPT_FAILS,
  },
  'tool-deny': {
    stream: approval(booked),
    scenario: { expect: toolExpect, resume: deny },
    want: INTERRUPT_ONLY,
  },
  'tool-deny-with-result': {
    stream: approval((b) => [toolResult('tc-1'), ...text(`m-${b.runId}`, 'Not booked.')]),
    scenario: { expect: toolExpect, resume: deny },
    want: INTERRUPT_FAILS,
  },
  'unknown-property': {
    stream: (b) => [{ ...start(b), bridgeDebug: 1 }, ...text('m-1', 'Hi.'), finish(b)],
    scenario: { expect: { answer: 'Hi.' } },
    // 1.0.0 strips it with an [ag-ui][enforce] warning; 0.0.x passes it through.
    want: { '1.0.0': false, '0.0.59': true, '0.0.36': true },
  },
  'float-timestamp': {
    stream: (b) => [start(b), ...text('m-1', 'Hi.').map((e) => ({ ...e, timestamp: 1.5 })), finish(b)],
    scenario: { expect: { answer: 'Hi.' } },
    want: { '1.0.0': false, '0.0.59': true, '0.0.36': true },
  },
  'no-terminal-event': {
    stream: (b) => [start(b), ...text('m-1', 'Hi.')],
    scenario: { expect: { answer: 'Hi.' } },
    want: { '1.0.0': false, '0.0.59': false, '0.0.36': false },
  },
  'content-without-start': {
    stream: (b) => [start(b), { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm-1', delta: 'Hi.' }, finish(b)],
    scenario: { expect: { answer: 'Hi.' } },
    want: { '1.0.0': false, '0.0.59': false, '0.0.36': false },
  },
  state: {
    stream: stateRun((b) => snap({ ...b.state, a2a: { n: 1, id: 't-1' } }), delta({ op: 'replace', path: '/a2a/n', value: 2 })),
    scenario: stateScenario(),
    want: ALL(true),
  },
  'state-not-sent-back': {
    // initialState must reach the request: a stream that ignores it loses the user key.
    stream: stateRun(() => snap({ a2a: { n: 2, id: 't-1' } })),
    scenario: stateScenario(),
    want: ALL(false),
  },
  'state-delta-outside-key': {
    stream: stateRun((b) => snap({ ...b.state, a2a: { n: 2, id: 't-1' } }), delta({ op: 'replace', path: '/user', value: 'Ada' })),
    scenario: stateScenario(),
    want: ALL(false),
  },
  'state-delta-before-snapshot': {
    stream: stateRun(() => delta({ op: 'add', path: '/a2a', value: { n: 2, id: 't-1' } })),
    scenario: stateScenario(),
    want: ALL(false),
  },
  'state-extra-key': {
    stream: stateRun((b) => snap({ ...b.state, a2a: { n: 2, id: 't-1', extra: true } })),
    scenario: stateScenario(),
    want: ALL(false),
  },
  'state-placeholder-mismatch': {
    stream: stateRun((b) => snap({ ...b.state, a2a: { n: 2, id: 7 } })),
    scenario: stateScenario(),
    want: ALL(false),
  },
  reasoning: {
    stream: (b) => [start(b), ...reasoning(b, 'Hmm.'), ...text('m-1', '42.'), finish(b)],
    scenario: { expect: { answer: '42.', reasoning: ['Hmm.'] } },
    want: ALL(true),
  },
  'reasoning-in-answer': {
    stream: (b) => [start(b), ...reasoning(b, 'Hmm.'), ...text('m-1', 'Hmm. 42.'), finish(b)],
    scenario: { expect: { answer: '42.', reasoning: ['Hmm.'] } },
    want: ALL(false),
  },
  'reasoning-dropped': {
    stream: (b) => [start(b), ...text('m-1', '42.'), finish(b)],
    scenario: { expect: { answer: '42.', reasoning: ['Hmm.'] } },
    want: ALL(false),
  },
  files: {
    stream: filesRun([CHART, HELLO]),
    scenario: { expect: filesExpect },
    want: ALL(true),
  },
  'files-wrong-bytes': {
    stream: filesRun([CHART, { ...HELLO, url: 'data:text/plain;base64,aGVsbE8=' }]),
    scenario: { expect: filesExpect },
    want: ALL(false),
  },
  'files-missing-in-state': {
    stream: filesRun([CHART, HELLO], [CHART]),
    scenario: { expect: filesExpect },
    want: ALL(false),
  },
  'frontend-tool': {
    stream: frontend(),
    scenario: frontendScenario,
    want: ALL(true),
  },
  'frontend-tool-not-offered': {
    // the harness must pass the row's tools to runAgent
    stream: frontend(),
    scenario: { ...frontendScenario, tools: undefined },
    want: ALL(false),
  },
  'frontend-tool-no-pending-ids': {
    stream: frontend({ pendingIds: false }),
    scenario: frontendScenario,
    want: { '1.0.0': false, '0.0.59': true, '0.0.36': true },
  },
  'frontend-tool-server-marked': {
    stream: frontend({ callMeta: { 'a2a-bridge': { toolExecution: 'server' } } }),
    scenario: frontendScenario,
    want: ALL(false),
  },
  'frontend-tool-as-interrupt': {
    stream: frontend({ finishExtra: { outcome: { type: 'interrupt', interrupts: [{ id: 'i-1', reason: 'tool_call', toolCallId: 'fc-1' }] } } }),
    scenario: frontendScenario,
    // 0.0.36 cannot see outcomes.
    want: { '1.0.0': false, '0.0.59': false, '0.0.36': true },
  },
  'frontend-tool-result-echoed': {
    stream: frontend({ answerRun: (b) => [toolResult('fc-1', 'ok'), ...text(`m-${b.runId}`, 'Painted (ok).')] }),
    scenario: frontendScenario,
    want: ALL(false),
  },
  'frontend-tool-answer-twice': {
    stream: frontend({ answerRun: (b) => [...text(`m-${b.runId}`, 'Painted (ok).'), ...text('m-again', 'Painted (ok).')] }),
    scenario: frontendScenario,
    want: ALL(false),
  },
  'signin-interrupt': {
    serve: signin(),
    scenario: { expect: signinExpect },
    // 0.0.36 only has to accept the run.
    want: ALL(true),
  },
  'signin-interrupt-no-details': {
    serve: signin({ details: () => undefined }),
    scenario: { expect: signinExpect },
    want: INTERRUPT_FAILS_36_OK,
  },
  'signin-interrupt-other-task': {
    serve: signin({ details: () => signinDetails('task-other') }),
    scenario: { expect: signinExpect },
    want: INTERRUPT_FAILS_36_OK,
  },
  'signin-interrupt-wrong-reason': {
    serve: signin(),
    scenario: { expect: { ...signinExpect, reason: 'input_required' } },
    want: INTERRUPT_FAILS_36_OK,
  },
  'signin-after-oob': {
    serve: signin(),
    scenario: { expect: signinExpect, resume: signinResume('before-resume') },
    want: INTERRUPT_ONLY,
  },
  'signin-after-oob-refused': {
    serve: signin({ authorizeStatus: 403 }),
    scenario: { expect: signinExpect, resume: signinResume('before-resume') },
    want: INTERRUPT_FAILS,
  },
  'signin-after-oob-still-pending': {
    serve: signin({ stillPending: true }),
    scenario: { expect: signinExpect, resume: signinResume('before-resume') },
    want: INTERRUPT_FAILS,
  },
  'signin-after-oob-other-task': {
    serve: signin({ resumedTask: 'task-other' }),
    scenario: { expect: signinExpect, resume: signinResume('before-resume') },
    want: INTERRUPT_FAILS,
  },
  'signin-before-oob': {
    serve: signin({ mode: 'during' }),
    scenario: { expect: signinExpect, resume: signinResume('during-resume') },
    want: INTERRUPT_ONLY,
  },
  'signin-before-oob-signed-in-first': {
    // the harness must sign in while the resumed run is open, not before it
    serve: signin({ mode: 'during' }),
    scenario: { expect: signinExpect, resume: signinResume('before-resume') },
    want: INTERRUPT_FAILS,
  },
  'signin-before-oob-never-active': {
    serve: signin({ mode: 'during', showActive: false }),
    scenario: { expect: signinExpect, resume: signinResume('during-resume') },
    want: INTERRUPT_FAILS,
  },
  'team-parallel': { serve: teamFake(duo()), scenario: teamScenario(), want: ALL(true) },
  'team-member-event-untagged': {
    // 1.0: alpha's text content without its subagentRunId
    serve: teamFake(duo({ mutate: onMessage('m-a', (e) => (e.type === 'TEXT_MESSAGE_CONTENT' ? { ...e, subagentRunId: undefined } : e)) })),
    scenario: teamScenario(),
    want: ONLY_V1_FAILS,
  },
  'team-message-of-other-member': {
    // 1.0: alpha's message, named alpha, wholly tagged as beta's
    serve: teamFake(duo({ mutate: (ev, b, v1) => (v1 ? onMessage('m-a', (e) => ({ ...e, subagentRunId: sid(b, 'beta') }))(ev) : ev) })),
    scenario: teamScenario(),
    want: ONLY_V1_FAILS,
  },
  'team-subagent-unfinished': {
    serve: teamFake(duo({ mutate: (ev, b) => ev.filter((e) => !(e.type === 'SUBAGENT_FINISHED' && e.subagentRunId === sid(b, 'beta'))) })),
    scenario: teamScenario(),
    want: ONLY_V1_FAILS,
  },
  'team-member-event-after-finish': {
    // 1.0: beta's SUBAGENT_FINISHED before its own text ends
    serve: teamFake(
      duo({
        mutate: (ev, b) => {
          const i = ev.findIndex((e) => e.type === 'SUBAGENT_FINISHED' && e.subagentRunId === sid(b, 'beta'));
          if (i < 0) return ev;
          const end = ev[i];
          const rest = ev.filter((_, j) => j !== i);
          rest.splice(rest.findIndex((e) => e.type === 'TEXT_MESSAGE_END' && e.messageId.startsWith('m-b')), 0, end);
          return rest;
        },
      }),
    ),
    scenario: teamScenario(),
    want: ONLY_V1_FAILS,
  },
  'team-members-interleave-older': {
    // older clients: alpha again after beta
    serve: teamFake(duo({ mutate: (ev, b, v1) => (v1 ? ev : [...ev.slice(0, -1), ...mtext('alpha', 'm-a-again', 'Alpha again.'), ev.at(-1)]) })),
    scenario: teamScenario(),
    want: ONLY_OLDER_FAIL,
  },
  'team-message-unnamed': {
    serve: teamFake(duo({ mutate: onMessage('m-b', (e) => (e.type === 'TEXT_MESSAGE_START' ? { ...e, name: undefined } : e)) })),
    scenario: teamScenario(),
    want: ALL(false),
  },
  'team-metadata-other-member': {
    serve: teamFake(duo({ mutate: onMessage('m-b', (e) => (e.type === 'TEXT_MESSAGE_START' ? { ...e, metadata: { 'a2a-bridge': { member: 'alpha' } } } : e)) })),
    scenario: teamScenario(),
    want: ALL(false),
  },
  'team-answers-swapped': {
    serve: teamFake(duo({ mutate: (ev) => ev.map((e) => (e.type === 'TEXT_MESSAGE_CONTENT' ? { ...e, delta: e.delta.startsWith('Alpha') ? 'Beta says hi.' : 'Alpha says hi.' } : e)) })),
    scenario: teamScenario(),
    want: ALL(false),
  },
  'team-answer-twice': {
    serve: teamFake(duo({ mutate: (ev) => [...ev.slice(0, -1), ...mtext('beta', 'm-b-again', 'Alpha says hi.'), ev.at(-1)] })),
    scenario: teamScenario(),
    want: ALL(false),
  },
  'team-snapshot': { serve: teamFake(duo({ snapshotMessages: attributedSnapshot })), scenario: teamScenario(), want: ALL(true) },
  'team-snapshot-unattributed': {
    // 1.0: a MESSAGES_SNAPSHOT hands the members' messages to the parent agent
    serve: teamFake(duo({ snapshotMessages: (b) => attributedSnapshot(b, false) })),
    scenario: teamScenario(),
    want: ONLY_V1_FAILS,
  },
  'team-replay-reattributed': {
    serve: teamFake(duo(), { replay: (ev) => ev.map((e) => (e.type === 'TEXT_MESSAGE_START' && e.name === 'beta' ? { ...e, name: 'alpha', metadata: { 'a2a-bridge': { member: 'alpha' } } } : e)) }),
    scenario: teamScenario(),
    want: ALL(false),
  },
  'team-replay-untagged': {
    // 1.0: the journal lost the tags the live stream had
    serve: teamFake(duo(), { replay: (ev) => ev.map(({ subagentRunId, ...e }) => (e.type.startsWith('SUBAGENT') ? { ...e, subagentRunId } : e)) }),
    scenario: teamScenario(),
    want: ONLY_V1_FAILS,
  },
  'team-replay-empty': { serve: teamFake(duo(), { replay: () => [] }), scenario: teamScenario(), want: ALL(false) },
  'team-member-down': { serve: teamFake(withDown({ error: 'a2a_card_unavailable' })), scenario: teamScenario(downTeam), want: ALL(true) },
  'team-member-down-unreported': { serve: teamFake(withDown({})), scenario: teamScenario(downTeam), want: ALL(false) },
  'team-member-down-wrong-code': { serve: teamFake(withDown({ error: 'a2a_failed' })), scenario: teamScenario(downTeam), want: ALL(false) },
  'team-route': { serve: teamFake(routed('alpha')), scenario: teamScenario(routeTeam), want: ALL(true) },
  'team-route-other-member': { serve: teamFake(routed('beta')), scenario: teamScenario(routeTeam), want: ALL(false) },
  'team-route-missing': { serve: teamFake(duo()), scenario: teamScenario({ ...duoTeam, route: 'alpha' }), want: ALL(false) },
  'team-interrupts': { serve: teamFake(duoAsks()), scenario: teamScenario(asksTeam), want: ALL(true) },
  'team-interrupt-not-namespaced': {
    serve: teamFake(duoAsks({ ids: { alpha: 'i-1', beta: 'beta:i-2' } })),
    scenario: teamScenario(asksTeam),
    want: INTERRUPT_FAILS_36_OK,
  },
  'team-suspended-other-ids': {
    // 1.0: alpha's SUBAGENT_FINISHED suspends on beta's interrupt
    serve: teamFake(duoAsks({ mutate: (ev, b) => ev.map((e) => (e.type === 'SUBAGENT_FINISHED' && e.subagentRunId === sid(b, 'alpha') ? { ...e, outcome: { type: 'suspended', interruptIds: ['beta:i-2'] } } : e)) })),
    scenario: teamScenario(asksTeam),
    want: ONLY_V1_FAILS,
  },
  'team-resume': { serve: teamFake(duoAsks()), scenario: teamScenario(resumeTeam), want: INTERRUPT_ONLY },
  'team-resume-other-task': { serve: teamFake(duoAsks({ resumedTask: (m) => `t-${m}-new` })), scenario: teamScenario(resumeTeam), want: INTERRUPT_FAILS },
  'team-resume-payload-mixed-up': {
    // the row's payloads are the members' own: a fake that wants them crossed answers wrong
    serve: teamFake(duoAsks()),
    scenario: teamScenario({ ...resumeTeam, resume: { ...resumeTeam.resume, payloads: { alpha: { ok: true }, beta: { city: 'Lisbon' } } } }),
    want: INTERRUPT_FAILS,
  },
  // A2UI rows (lib/a2ui.mjs): the surface as the client's reducer builds it
  // from a snapshot and a JSON-Patch delta, under both content keys.
  'a2ui-surface': {
    stream: (b) => [start(b), ...text('m-f', 'Fill it.'), ...a2uiSurface(), finish(b)],
    scenario: a2uiScenario(),
    want: { '1.0.0': true },
  },
  'a2ui-keys-differ': {
    stream: (b) => [start(b), ...text('m-f', 'Fill it.'), ...a2uiSurface({ copilotKey: false }), finish(b)],
    scenario: a2uiScenario(),
    want: { '1.0.0': false },
  },
  'a2ui-no-surface': {
    stream: (b) => [start(b), ...text('m-f', 'Fill it.'), finish(b)],
    scenario: a2uiScenario(),
    want: { '1.0.0': false },
  },
  'a2ui-in-text': {
    stream: (b) => [start(b), ...text('m-f', 'Fill it.', JSON.stringify(A2UI_OPS[0])), ...a2uiSurface(), finish(b)],
    scenario: a2uiScenario(),
    want: { '1.0.0': false },
  },
  'a2ui-custom': {
    stream: (b) => [start(b), ...text('m-f', 'Fill it.'), { type: 'CUSTOM', name: 'a2ui', value: { surfaceId: 'booking', activityId: 'a-1', operations: A2UI_OPS } }, finish(b)],
    scenario: a2uiScenario({ custom: true }),
    want: { '0.0.59': true, '0.0.36': true },
  },
  'a2ui-activity-to-old-client': {
    stream: (b) => [start(b), ...text('m-f', 'Fill it.'), ...a2uiSurface(), finish(b)],
    scenario: a2uiScenario({ custom: true }),
    want: { '0.0.59': false },
  },
  'tool-call-card-twice': {
    // ADK's long-running call, as today's bridge shows it: the same call streamed twice
    stream: (b) => {
      const ev = propose(b);
      const at = ev.findIndex((e) => e.type === 'TOOL_CALL_END') + 1;
      return [...ev.slice(0, at), ...callEvents('tc-1'), ...ev.slice(at)];
    },
    scenario: { expect: toolExpect },
    want: ALL(false),
  },
  'snapshot-tool-call-twice': {
    stream: (b) => {
      const ev = propose(b);
      return [...ev.slice(0, -1), snapshotWith([call('tc-1'), call('tc-1')]), ev.at(-1)];
    },
    scenario: { expect: toolExpect },
    want: ALL(false),
  },
  'snapshot-tool-call-once': {
    stream: (b) => {
      const ev = propose(b);
      return [...ev.slice(0, -1), snapshotWith([call('tc-1')]), ev.at(-1)];
    },
    scenario: { expect: toolExpect },
    want: ALL(true),
  },
  'server-tool': { stream: serverTool(), scenario: { expect: serverToolExpect }, want: ALL(true) },
  'server-tool-unmarked': { stream: serverTool({ meta: null }), scenario: { expect: serverToolExpect }, want: ALL(false) },
  'server-tool-no-result': { stream: serverTool({ result: false }), scenario: { expect: serverToolExpect }, want: ALL(false) },
  'server-tool-missing': {
    stream: (b) => [start(b), ...text('m-s', 'Booked it.'), finish(b)],
    scenario: { expect: serverToolExpect },
    want: ALL(false),
  },
  'progress-note-shown': {
    stream: (b) => [start(b), ...text('m-g', 'Generating response...'), ...text('m-a', 'It is ', '22 degrees.'), finish(b)],
    scenario: { expect: { answer: 'It is 22 degrees.', never: ['Generating response...'] } },
    want: ALL(false),
  },
  'progress-note-in-interrupt': {
    stream: (b) => [start(b), finish(b, { outcome: { type: 'interrupt', interrupts: [{ id: 'int-1', reason: 'input_required', message: 'Generating response...\nWhich city?' }] } })],
    scenario: { expect: { interrupt: true, never: ['Generating response...'] } },
    want: { '1.0.0': false, '0.0.59': false, '0.0.36': true },
  },
  'answer-streamed': {
    stream: (b) => [start(b), ...text('m-1', 'It is ', '22 degrees.'), finish(b)],
    scenario: { expect: { answer: 'It is 22 degrees.', streamed: true } },
    want: ALL(true),
  },
  'answer-not-streamed': {
    stream: (b) => [start(b), ...text('m-1', 'It is 22 degrees.'), finish(b)],
    scenario: { expect: { answer: 'It is 22 degrees.', streamed: true } },
    want: ALL(false),
  },
  'follow-up': {
    stream: secondTurn,
    scenario: { expect: { answer: 'First.' }, followUp: { text: 'again', answer: 'Second.' } },
    want: ALL(true),
  },
  'follow-up-forgot': {
    stream: (b) => [start(b), ...text(`m-${b.runId}`, 'First.'), finish(b)],
    scenario: { expect: { answer: 'First.' }, followUp: { text: 'again', answer: 'Second.' } },
    want: ALL(false),
  },
  'tool-approve-copilotkit': {
    // the client's tool message beside the resume stands as the result: the run reports none
    stream: approval((b) => (b.messages.some((m) => m.role === 'tool' && m.toolCallId === 'tc-1') ? text(`m-${b.runId}`, 'Booked.') : booked(b, true))),
    scenario: { expect: toolExpect, resume: { ...approve, toolMessage: true } },
    want: INTERRUPT_ONLY,
  },
  'tool-approve-copilotkit-result-too': {
    stream: approval(booked),
    scenario: { expect: toolExpect, resume: { ...approve, toolMessage: true } },
    want: INTERRUPT_FAILS,
  },
  'thread-view-one-result': { serve: viewFake(1), scenario: { agent: 'fake', expect: serverToolExpect }, want: ALL(true) },
  'thread-view-two-results': { serve: viewFake(2), scenario: { agent: 'fake', expect: serverToolExpect }, want: ALL(false) },
  'http-500': {
    status: 500,
    stream: () => [],
    scenario: { expect: { answer: 'Hi.' } },
    want: { '1.0.0': false, '0.0.59': false, '0.0.36': false },
  },
};

const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    // /<case>[/<sub>][?query]: sub-routes only for cases with their own `serve`.
    const u = new URL(req.url, 'http://selftest');
    const [name, ...rest] = u.pathname.slice(1).split('/');
    const c = cases[decodeURIComponent(name)];
    const sub = rest.join('/');
    if (c?.serve) {
      c.serve(req, res, sub, u.searchParams, body).catch((err) => {
        console.log(`selftest server error: ${err?.stack ?? err}`);
        res.destroy();
      });
      return;
    }
    if (!c || sub !== '') {
      res.writeHead(404).end();
      return;
    }
    if (c.status) {
      res.writeHead(c.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'boom', message: 'server error' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const e of c.stream(JSON.parse(body))) res.write(`data: ${JSON.stringify(e)}\n\n`);
    res.end();
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

let wrong = 0;
for (const [name, c] of Object.entries(cases)) {
  for (const v of CLIENT_VERSIONS) {
    if (!(v in c.want)) continue;
    const url = `${base}/${encodeURIComponent(name)}`;
    const s = withAuthorizeURL({ name, text: 'hello', ...c.scenario }, `${url}/`);
    const r = await runScenario(s, v, url, 5000);
    const good = r.ok === c.want[v];
    if (!good) wrong++;
    console.log(`${good ? 'ok  ' : 'WRONG'} ${name.padEnd(30)} ${v.padEnd(7)} verdict=${r.ok ? 'pass' : 'fail'}${r.problems.length ? ` (${r.problems[0]})` : ''}`);
    if (!good) for (const l of evidence(r, 20)) console.log(`        ${l}`);
  }
}
server.close();
console.log(wrong === 0 ? 'harness verdicts all as expected' : `${wrong} harness verdict(s) wrong`);
process.exit(wrong === 0 ? 0 : 1);
