// A2UI rows (issue 21): surfaces from the Go demo agents through the bridge
// to the real @ag-ui/client, and the user's actions back.
//
// A row's `a2ui` is {steps: [...], custom?, activities?}; the row's
// `forwardedProps` go with every step. Step 1 sends the row's text;
// each later step sends runAgent({forwardedProps: {a2uiAction: step.action}})
// on the same thread — and, when the run before it ended with interrupts (a
// 1.0 client must address them: it refuses a run that does not), a resume
// answering each with the action as payload. Each step must end as
// step.expect says ({answer} or {interrupt: true}, judged as any row), and:
//   surface: ["…"]   1.0.0: the thread's a2ui-surface activity messages, as
//                    the client's own reducer built them from the snapshots
//                    and JSON-Patch deltas, hold every string (in their
//                    JSON), with content.operations equal to
//                    content.a2ui_operations (the CopilotKit key).
//                    Older clients (the row's `custom` true: an agent under
//                    a2ui: on): the run's CUSTOM a2ui events hold them; with
//                    `activities` true (a client that declares it renders
//                    A2UI): activity messages, as for 1.0.0.
// Never, for any client: an A2UI operation in the shared state or the
// assistant text.

import { assistantText, judge, newAgent, runOnce } from './harness.mjs';

const OPERATION_KINDS = ['surfaceUpdate', 'dataModelUpdate', 'beginRendering', 'createSurface', 'updateComponents', 'updateDataModel'];

function surfaceProblems(step, rec, agent, version, { custom, activities }) {
  const p = [];
  const leaked = OPERATION_KINDS.filter((k) => JSON.stringify(agent.state ?? {}).includes(k) || assistantText(agent.messages).includes(k));
  if (leaked.length) p.push(`A2UI operations (${leaked.join(', ')}) reached the state or the assistant text`);
  let shown;
  if (version === '1.0.0' || activities) {
    const activities = agent.messages.filter((m) => m.role === 'activity' && m.activityType === 'a2ui-surface');
    for (const a of activities) {
      if (JSON.stringify(a.content?.operations) !== JSON.stringify(a.content?.a2ui_operations)) {
        p.push(`activity ${a.id}: content.operations and content.a2ui_operations differ`);
      }
    }
    if (rec.events.some((e) => e.type === 'CUSTOM' && e.name === 'a2ui')) p.push('a 1.0 client got CUSTOM a2ui events');
    shown = JSON.stringify(activities.map((a) => a.content?.operations));
  } else {
    if (rec.events.some((e) => e.type.startsWith('ACTIVITY_'))) p.push(`a ${version} client got activity events`);
    if (!custom) {
      if (rec.events.some((e) => e.type === 'CUSTOM' && e.name === 'a2ui')) p.push(`a ${version} client under a2ui: auto got CUSTOM a2ui events`);
      return p;
    }
    shown = JSON.stringify(rec.events.filter((e) => e.type === 'CUSTOM' && e.name === 'a2ui').map((e) => e.value));
  }
  for (const want of step.surface ?? []) {
    if (!shown.includes(want)) p.push(`the surfaces do not show ${JSON.stringify(want)}: ${shown.slice(0, 600)}`);
  }
  return p;
}

export async function runA2UI(s, version, url, timeoutMs, transport) {
  const agent = await newAgent(version, url, s.text, s.initialState, transport);
  const runs = [];
  let problems = [];
  let before = '';
  for (const [i, step] of s.a2ui.steps.entries()) {
    const params = s.forwardedProps ? { forwardedProps: { ...s.forwardedProps } } : {};
    if (step.action) {
      params.forwardedProps = { ...params.forwardedProps, a2uiAction: step.action };
      const pending = agent.pendingInterrupts ?? [];
      if (pending.length) params.resume = pending.map((it) => ({ interruptId: it.id, status: 'resolved', payload: step.action }));
    }
    const rec = await runOnce(agent, params, timeoutMs);
    runs.push(rec);
    // Judge the answer in what this run added: the thread keeps the earlier runs' messages.
    const after = assistantText(agent.messages);
    const added = after.startsWith(before) ? after.slice(before.length) : after;
    before = after;
    const p = [
      ...judge(step.expect, rec, [{ role: 'assistant', content: added }], version),
      ...(rec.timedOut || rec.error ? [] : surfaceProblems(step, rec, agent, version, s.a2ui)),
    ];
    problems.push(...p.map((x) => `step ${i + 1}: ${x}`));
    if (p.length) break;
  }
  return { ok: problems.length === 0, problems, runs, messages: agent.messages };
}
