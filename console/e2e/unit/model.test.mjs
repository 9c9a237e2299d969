// The console's fold of AG-UI events (model.js), on event sequences the demo
// agents do not produce: sub-agents and routing (teams), snapshots bringing
// messages the page never streamed, replays overlapping the live stream.
// The browser tests cover the rest against the real bridge.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { apply, conversation, fold, newModel, userMessagesByRun } from '../../static/js/model.js';

// envelopes numbers events 1, 2, 3, … as the bridge's journal does.
const envelopes = (runId, events, from = 1) => events.map((event, i) => ({ seq: from + i, runId, event }));

const texts = (m) => m.items.filter((it) => it.kind === 'text').map((it) => it.content);

test('streamed text is shown once, however often an event is replayed', () => {
  const run = envelopes('r1', [
    { type: 'RUN_STARTED', threadId: 't', runId: 'r1' },
    { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'Hello ' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'world' },
    { type: 'TEXT_MESSAGE_END', messageId: 'm1' },
    { type: 'RUN_FINISHED', threadId: 't', runId: 'r1' },
  ]);
  const m = newModel();
  for (const env of [...run.slice(0, 4), ...run.slice(2)]) apply(m, env); // the journal replay overlaps
  assert.deepEqual(texts(m), ['Hello world']);
  assert.equal(m.lastSeq, 6);
  assert.equal(m.runs.get('r1').status, 'finished');
});

test('what the user sent in a run is shown when the run starts', () => {
  const sent = (runId) => (runId === 'r1' ? { user: [{ id: 'u1', role: 'user', content: 'Hi' }] } : null);
  const m = fold(envelopes('r1', [{ type: 'RUN_STARTED', threadId: 't', runId: 'r1' }]), sent);
  assert.deepEqual(m.items.map((it) => [it.kind, it.content]), [['user', 'Hi']]);
});

test('sub-agents: every item carries its subagentRunId, named by SUBAGENT_STARTED', () => {
  const m = fold(envelopes('r1', [
    { type: 'RUN_STARTED', threadId: 't', runId: 'r1' },
    { type: 'CUSTOM', name: 'a2a.route', value: { member: 'flights', score: 0.82, reason: 'mentions a flight' } },
    { type: 'SUBAGENT_STARTED', subagentRunId: 's1', name: 'flights' },
    { type: 'STEP_STARTED', stepName: 'a2a:working', subagentRunId: 's1' },
    { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant', subagentRunId: 's1' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: 'LH123', subagentRunId: 's1' },
    { type: 'TEXT_MESSAGE_END', messageId: 'm1', subagentRunId: 's1' },
    { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'search', subagentRunId: 's1', metadata: { 'ag-ui:tool-execution': 'server' } },
    { type: 'TOOL_CALL_END', toolCallId: 'c1', subagentRunId: 's1' },
    { type: 'STEP_FINISHED', stepName: 'a2a:working', subagentRunId: 's1' },
    { type: 'SUBAGENT_FINISHED', subagentRunId: 's1' },
    { type: 'SUBAGENT_STARTED', subagentRunId: 's2', name: 'hotels' },
    { type: 'SUBAGENT_ERROR', subagentRunId: 's2', message: 'no rooms', code: 'a2a_failed' },
    { type: 'RUN_FINISHED', threadId: 't', runId: 'r1' },
  ]));
  const kinds = m.items.map((it) => it.kind);
  assert.deepEqual(kinds, ['route', 'subagent', 'steps', 'text', 'tool', 'subagent', 'run-end']);
  const route = m.items[0];
  assert.equal(route.value.member, 'flights');
  assert.equal(m.debug[0].name, 'a2a.route', 'CUSTOM events go to the debug panel too');
  for (const it of m.items.filter((it) => ['steps', 'text', 'tool'].includes(it.kind))) {
    assert.equal(it.subagentRunId, 's1', `${it.kind} is attributed`);
  }
  assert.equal(m.subagents.get('s1').name, 'flights');
  assert.equal(m.items[1].status, 'finished');
  assert.equal(m.items[5].status, 'error');
  assert.equal(m.items[5].message, 'no rooms');
  assert.equal(m.items[4].execution, 'server');
  assert.equal(m.items[2].steps[0].status, 'done');
});

test('interrupts are pending from an interrupt outcome until a run finishes without one', () => {
  const interrupt = { id: 'i1', reason: 'tool_call', toolCallId: 'c1', responseSchema: { type: 'object' } };
  const events = [
    ...envelopes('r1', [
      { type: 'RUN_STARTED', threadId: 't', runId: 'r1' },
      { type: 'RUN_FINISHED', threadId: 't', runId: 'r1', outcome: { type: 'interrupt', interrupts: [interrupt] } },
    ]),
    ...envelopes('r2', [
      { type: 'RUN_STARTED', threadId: 't', runId: 'r2' },
      { type: 'RUN_ERROR', code: 'resume_payload_invalid', message: 'approved is required' },
    ], 3),
    ...envelopes('r3', [
      { type: 'RUN_STARTED', threadId: 't', runId: 'r3' },
      { type: 'RUN_FINISHED', threadId: 't', runId: 'r3' },
    ], 5),
  ];
  assert.deepEqual(fold(events, undefined, 2).interrupts, [interrupt]);
  assert.deepEqual(fold(events, undefined, 4).interrupts, [interrupt], 'a refused resume leaves them pending');
  assert.equal(fold(events, undefined, 4).runs.get('r2').status, 'error');
  assert.deepEqual(fold(events).interrupts, []);
});

test('a cancelled run: the 1.0 outcome and the older RUN_ERROR code alike', () => {
  const a = fold(envelopes('r1', [{ type: 'RUN_STARTED', threadId: 't', runId: 'r1' }, { type: 'RUN_FINISHED', threadId: 't', runId: 'r1', outcome: { type: 'cancelled' } }]));
  const b = fold(envelopes('r1', [{ type: 'RUN_STARTED', threadId: 't', runId: 'r1' }, { type: 'RUN_ERROR', code: 'cancelled', message: 'cancelled' }]));
  assert.equal(a.runs.get('r1').status, 'cancelled');
  assert.equal(b.runs.get('r1').status, 'cancelled');
});

test('MESSAGES_SNAPSHOT puts messages the page lacks where the conversation has them', () => {
  const m = fold(envelopes('r2', [
    { type: 'RUN_STARTED', threadId: 't', runId: 'r2' },
    {
      type: 'MESSAGES_SNAPSHOT',
      messages: [
        { id: 'u1', role: 'user', content: 'Book my flight' },
        { id: 'a1', role: 'assistant', content: 'Approve?', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'book', arguments: '{"to":"Lisbon"}' } }] },
        { id: 'x1', role: 'tool', toolCallId: 'c1', content: '{"status":"booked"}' },
      ],
    },
    { type: 'TEXT_MESSAGE_START', messageId: 'a2', role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a2', delta: 'Booked.' },
    { type: 'TEXT_MESSAGE_END', messageId: 'a2' },
    { type: 'RUN_FINISHED', threadId: 't', runId: 'r2' },
  ]));
  assert.deepEqual(m.items.map((it) => `${it.kind}:${it.id}`).slice(0, 4), ['user:u1', 'text:a1', 'tool:c1', 'text:a2']);
  assert.equal(m.toolCalls.get('c1').result, '{"status":"booked"}');
  // And the next run's input is that conversation, as AG-UI messages.
  assert.deepEqual(conversation(m), [
    { id: 'u1', role: 'user', content: 'Book my flight' },
    { id: 'a1', role: 'assistant', content: 'Approve?', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'book', arguments: '{"to":"Lisbon"}' } }] },
    { id: 'x1', role: 'tool', toolCallId: 'c1', content: '{"status":"booked"}' },
    { id: 'a2', role: 'assistant', content: 'Booked.' },
  ]);
});

test('a team member\'s message keeps its attribution, from a snapshot and back into the next run', () => {
  const m = fold(envelopes('r2', [
    { type: 'RUN_STARTED', threadId: 't', runId: 'r2' },
    {
      type: 'MESSAGES_SNAPSHOT',
      messages: [
        { id: 'u1', role: 'user', content: 'Weather and a flight' },
        { id: 'a1', role: 'assistant', content: 'Which city?', name: 'asker', subagentRunId: 's-asker' },
      ],
    },
    { type: 'SUBAGENT_STARTED', subagentRunId: 's-asker-2', name: 'asker' },
    { type: 'TEXT_MESSAGE_START', messageId: 'a2', role: 'assistant', name: 'asker', subagentRunId: 's-asker-2' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a2', delta: 'Sunny.', subagentRunId: 's-asker-2' },
    { type: 'TEXT_MESSAGE_END', messageId: 'a2', subagentRunId: 's-asker-2' },
    { type: 'SUBAGENT_FINISHED', subagentRunId: 's-asker-2' },
    { type: 'RUN_FINISHED', threadId: 't', runId: 'r2' },
  ]));
  const a1 = m.messages.get('a1');
  assert.equal(a1.name, 'asker');
  assert.equal(a1.subagentRunId, 's-asker');
  assert.deepEqual(conversation(m), [
    { id: 'u1', role: 'user', content: 'Weather and a flight' },
    { id: 'a1', role: 'assistant', content: 'Which city?', name: 'asker', subagentRunId: 's-asker' },
    { id: 'a2', role: 'assistant', content: 'Sunny.', name: 'asker', subagentRunId: 's-asker-2' },
  ]);
});

test('the user messages of a thread another browser started are placed by run', () => {
  const journal = [
    ...envelopes('r1', [
      { type: 'RUN_STARTED', threadId: 't', runId: 'r1' },
      { type: 'TEXT_MESSAGE_START', messageId: 'a1', role: 'assistant' },
      { type: 'TEXT_MESSAGE_END', messageId: 'a1' },
      { type: 'RUN_FINISHED', threadId: 't', runId: 'r1' },
    ]),
    ...envelopes('r2', [
      { type: 'RUN_STARTED', threadId: 't', runId: 'r2' },
      { type: 'TEXT_MESSAGE_START', messageId: 'a2', role: 'assistant' },
      { type: 'TEXT_MESSAGE_END', messageId: 'a2' },
      { type: 'RUN_FINISHED', threadId: 't', runId: 'r2' },
    ], 5),
    ...envelopes('r3', [{ type: 'RUN_STARTED', threadId: 't', runId: 'r3' }], 9), // still running, nothing said yet
  ];
  const snapshot = [
    { id: 'u1', role: 'user', content: 'first' },
    { id: 'a1', role: 'assistant', content: '' },
    { id: 'u2', role: 'user', content: [{ type: 'text', text: 'second' }] },
    { id: 'a2', role: 'assistant', content: '' },
    { id: 'u3', role: 'user', content: 'third' },
  ];
  const byRun = userMessagesByRun(snapshot, journal);
  assert.deepEqual([...byRun.entries()].map(([run, us]) => [run, us.map((u) => u.content)]), [['r1', ['first']], ['r2', ['second']], ['r3', ['third']]]);
  const m = fold(journal, (runId) => ({ user: byRun.get(runId) ?? [] }));
  assert.deepEqual(m.items.filter((it) => it.kind === 'user' || it.kind === 'text').map((it) => it.id), ['u1', 'a1', 'u2', 'a2', 'u3']);
});

test('time travel: a prefix of the journal gives the state as of then', () => {
  const journal = envelopes('r1', [
    { type: 'RUN_STARTED', threadId: 't', runId: 'r1' },
    { type: 'STATE_SNAPSHOT', snapshot: { a2a: { agent: 'dashboard' }, mine: 1 } },
    { type: 'STATE_DELTA', delta: [{ op: 'add', path: '/a2a/artifacts', value: { progress: { step: 1 } } }] },
    { type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/a2a/artifacts/progress/step', value: 2 }] },
    { type: 'STATE_DELTA', delta: [{ op: 'remove', path: '/nothing/here' }] },
    { type: 'RUN_FINISHED', threadId: 't', runId: 'r1' },
  ]);
  assert.deepEqual(fold(journal, undefined, 3).state, { a2a: { agent: 'dashboard', artifacts: { progress: { step: 1 } } }, mine: 1 });
  const end = fold(journal);
  assert.equal(end.state.a2a.artifacts.progress.step, 2, 'a delta that does not apply leaves the state as it was');
  assert.equal(end.debug.at(-1).kind, 'warning');
});

test('files and other activities', () => {
  const m = fold(envelopes('r1', [
    { type: 'RUN_STARTED', threadId: 't', runId: 'r1' },
    { type: 'ACTIVITY_SNAPSHOT', messageId: 'f1', activityType: 'a2a.file', content: { url: 'https://example.com/chart.png', mediaType: 'image/png', name: 'chart.png' } },
    { type: 'ACTIVITY_SNAPSHOT', messageId: 'p1', activityType: 'PLAN', content: { steps: ['a'] } },
    { type: 'ACTIVITY_DELTA', messageId: 'p1', activityType: 'PLAN', patch: [{ op: 'add', path: '/steps/-', value: 'b' }] },
    { type: 'RUN_FINISHED', threadId: 't', runId: 'r1' },
  ]));
  const [file, plan] = m.items;
  assert.equal(file.kind, 'file');
  assert.equal(file.file.name, 'chart.png');
  assert.equal(plan.kind, 'activity');
  assert.deepEqual(plan.content, { steps: ['a', 'b'] });
});

test('frontend tool calls left by a run are pending for the page', () => {
  const m = fold(envelopes('r1', [
    { type: 'RUN_STARTED', threadId: 't', runId: 'r1' },
    { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'change_background' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"color":"blue"}' },
    { type: 'TOOL_CALL_END', toolCallId: 'c1' },
    { type: 'RUN_FINISHED', threadId: 't', runId: 'r1' },
  ]));
  assert.deepEqual(m.pendingToolCallIds, ['c1'], 'derived as clients do when the outcome does not list them');
  assert.equal(m.toolCalls.get('c1').execution, 'frontend');
});
