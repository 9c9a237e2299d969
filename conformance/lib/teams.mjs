// Teams (issue 9): several A2A agents behind one bridge endpoint, and what a
// frontend must see of who said what. A team row (`team` in scenarios.mjs) runs
// once, or twice with a resume, on one thread, and each run is judged on the
// events as the bridge sent them (the SSE body, the WebSocket envelopes) and on
// the client's messages and state afterwards:
//
// 1.0.0 (SUBAGENT_* events, subagentRunId):
//   - every member's part is SUBAGENT_STARTED{subagentRunId, name} … then
//     exactly one SUBAGENT_FINISHED or SUBAGENT_ERROR with that id, before the
//     run ends; exactly the row's members start, each once;
//   - every event between carries the subagentRunId of a member whose part is
//     open; the events without one are the team's own: RUN_*, MESSAGES_SNAPSHOT,
//     STATE_SNAPSHOT, CUSTOM a2a.route and STATE_DELTAs outside /a2a/members;
//     RUN_* and MESSAGES_SNAPSHOT never carry one;
//   - a message's or tool call's events all carry its opener's id, the opener's
//     name and metadata["a2a-bridge"].member are that member, a member's state
//     deltas stay under /a2a/members/<member>;
//   - SUBAGENT_FINISHED is "suspended" with exactly the member's interrupt ids
//     when it interrupts, else success; a failing member is SUBAGENT_ERROR with
//     the row's code;
//   - every assistant message of the thread (and tool message) carries the
//     subagentRunId of the member it is named after, and each interrupt the id
//     of its member.
// 0.0.59 and 0.0.36 (no SUBAGENT_*, no subagentRunId):
//   - every assistant TEXT_MESSAGE_START names a member of the row, and its
//     metadata["a2a-bridge"].member (a tool call's too) says the same;
//   - members are shown one after the other: once another member's events
//     started, an earlier member's never come back;
//   - a failing member is exactly one CUSTOM a2a.member_error {member, code}.
// Every generation:
//   - each expected answer (and interrupt question) appears exactly once in the
//     messages named after its member, and across the whole thread exactly as
//     often as the row's own texts contain it (a pipeline quotes its narrator);
//   - interrupts (1.0.0, 0.0.59): one per interrupting member, id
//     `<member>:…`, matching the row (reason, question, schema, the tool call
//     it proposes), naming the member and its task in metadata.a2a; 0.0.36 only
//     needs a clean RUN_FINISHED;
//   - resume: one run answers every interrupt, each with its member's payload;
//     each member's answer appears once, each task completes on the task it
//     had, nothing stays pending; a tool approval's result is reported once;
//   - router: exactly one CUSTOM a2a.route naming the row's member (with a
//     numeric score and a reason), the state's a2a.route says the same;
//   - state a2a: {team, strategy, route?, members: {<m>: {agent: m, contextId, task, …}}},
//     each member on its own contextId, kept across the resume;
//   - the thread's journal, read again as a reconnecting client would
//     (GET …/threads/<id>/events with Last-Event-ID: 0), holds the same runs
//     event for event, and judged the same way attributes every event to the
//     same member.

import {
  INTERRUPT_AWARE,
  TIMING,
  assistantText,
  countOccurrences,
  describeTerminal,
  eventShape,
  joinTextDeltas,
  genericProblems,
  newAgent,
  rawEvents,
  resumeToolProblems,
  runOnce,
  sameJSON,
  sideRequest,
  toolApprovalProblems,
} from './harness.mjs';

const RUN_SCOPED = new Set(['RUN_STARTED', 'RUN_FINISHED', 'RUN_ERROR', 'MESSAGES_SNAPSHOT']);
const SUBAGENT = new Set(['SUBAGENT_STARTED', 'SUBAGENT_FINISHED', 'SUBAGENT_ERROR']);
const BRIDGE = 'a2a-bridge';
const KEY = 'a2a';

const unescapePointer = (s) => s.replaceAll('~1', '/').replaceAll('~0', '~');

/**
 * deltaMember is the member a STATE_DELTA is about: '' when no op touches
 * /a2a/members (the team's own), the member when every op is under
 * /a2a/members/<member>, null when it mixes.
 */
export function deltaMember(e) {
  const prefix = `/${KEY}/members/`;
  const found = new Set();
  for (const op of e.delta ?? []) {
    for (const ptr of [op.path, op.from]) {
      if (ptr === undefined) continue;
      const s = String(ptr);
      found.add(s.startsWith(prefix) ? unescapePointer(s.slice(prefix.length).split('/')[0]) : '');
    }
  }
  if (found.size === 0) return '';
  return found.size === 1 ? [...found][0] : null;
}

const memberMeta = (e) => e.metadata?.[BRIDGE]?.member;

/**
 * attribution reads one run's events (as sent) and says which member each
 * belongs to: owners[i] is the member's name, '' for the team's own events,
 * undefined where the generation gives no way to tell (older clients' steps).
 * It returns the problems the rules at the top of this file find.
 *   run = {members, interrupts?, failed?}   the row's expectation of this run
 *   known = {runIds: Map subagentRunId → member, calls: Map toolCallId → member,
 *            messages: Map messageId → member}, carried from run to run (a resume
 *            reports on run 1's tool call), learnt from the events
 */
export function attribution(events, version, run, known) {
  const v1 = version === '1.0.0';
  const p = [];
  const owners = [];
  const members = new Set(run.members);
  const messages = new Map();
  const open = new Map(); // subagentRunId → member, between STARTED and FINISHED/ERROR
  const started = new Map(); // member → subagentRunId
  const ends = new Map(); // member → SUBAGENT_FINISHED/ERROR event
  const memberErrors = new Map(); // member → CUSTOM a2a.member_error values
  for (const [i, e] of events.entries()) {
    const id = e.subagentRunId;
    const at = `event ${i + 1} (${e.type})`;
    let owner;
    if (v1) {
      if (e.type === 'SUBAGENT_STARTED') {
        owner = e.name;
        if (typeof id !== 'string' || id === '') p.push(`${at} has no subagentRunId`);
        else if (open.has(id) || [...started.values()].includes(id)) p.push(`${at} starts subagentRunId ${id} a second time`);
        else if (!members.has(e.name)) p.push(`${at} starts ${JSON.stringify(e.name)}, not a member taking part (${run.members.join(', ')})`);
        else if (started.has(e.name)) p.push(`${at} starts member ${e.name} a second time in one run`);
        else {
          open.set(id, e.name);
          started.set(e.name, id);
          known.runIds.set(id, e.name);
        }
      } else if (e.type === 'SUBAGENT_FINISHED' || e.type === 'SUBAGENT_ERROR') {
        if (!open.has(id)) p.push(`${at} for subagentRunId ${JSON.stringify(id)}, which is not open (never started, or already ended)`);
        else {
          owner = open.get(id);
          open.delete(id);
          ends.set(owner, e);
        }
      } else if (id !== undefined) {
        if (RUN_SCOPED.has(e.type)) p.push(`${at} carries subagentRunId ${JSON.stringify(id)}: run-scoped events never do`);
        else if (!open.has(id)) p.push(`${at} carries subagentRunId ${JSON.stringify(id)}, of no member whose part is open`);
        else owner = open.get(id);
      } else if (
        RUN_SCOPED.has(e.type) ||
        e.type === 'STATE_SNAPSHOT' ||
        (e.type === 'CUSTOM' && e.name === 'a2a.route') ||
        (e.type === 'STATE_DELTA' && deltaMember(e) === '')
      ) {
        owner = '';
      } else {
        p.push(`${at} carries no subagentRunId: ${JSON.stringify(e).slice(0, 200)}`);
      }
      if ((e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR') && open.size > 0) {
        p.push(`${at} while ${[...open.values()].join(', ')} did not end (no SUBAGENT_FINISHED/ERROR)`);
      }
    } else {
      if (SUBAGENT.has(e.type)) p.push(`${at} sent to a ${version} client`);
      if (id !== undefined) p.push(`${at} carries subagentRunId ${JSON.stringify(id)} on a ${version} client`);
      if (RUN_SCOPED.has(e.type) || e.type === 'STATE_SNAPSHOT') owner = '';
    }

    // What the event itself says about its member, checked against its owner
    // (1.0.0) or taken as its owner (older clients).
    const claim = (who, what) => {
      if (v1) {
        if (owner !== undefined && who !== owner) p.push(`${at} ${what} ${JSON.stringify(who)}, but its subagentRunId is ${JSON.stringify(owner)}'s`);
      } else owner = who;
    };
    switch (e.type) {
      case 'TEXT_MESSAGE_START':
        if ((e.role ?? 'assistant') === 'assistant') {
          if (!members.has(e.name)) p.push(`${at} name ${JSON.stringify(e.name)}, want one of ${run.members.join(', ')}`);
          claim(e.name, 'name');
          if (memberMeta(e) !== e.name) p.push(`${at} metadata.${BRIDGE}.member ${JSON.stringify(memberMeta(e))}, want its name ${JSON.stringify(e.name)}`);
        }
        messages.set(e.messageId, owner);
        if (owner) known.messages.set(e.messageId, owner);
        break;
      case 'TEXT_MESSAGE_CONTENT':
      case 'TEXT_MESSAGE_END':
        claim(messages.get(e.messageId), `is part of message ${e.messageId} of`);
        break;
      case 'TOOL_CALL_START':
        if (!members.has(memberMeta(e))) p.push(`${at} metadata.${BRIDGE}.member ${JSON.stringify(memberMeta(e))}, want one of ${run.members.join(', ')}`);
        claim(memberMeta(e), `has metadata.${BRIDGE}.member`);
        known.calls.set(e.toolCallId, owner);
        break;
      case 'TOOL_CALL_ARGS':
      case 'TOOL_CALL_END':
      case 'TOOL_CALL_RESULT':
        if (known.calls.has(e.toolCallId)) claim(known.calls.get(e.toolCallId), `is about tool call ${e.toolCallId} of`);
        else if (!v1) owner = undefined;
        break;
      case 'STATE_DELTA': {
        const dm = deltaMember(e);
        if (dm === null) p.push(`${at} mixes members' state: ${JSON.stringify(e.delta)}`);
        else if (!v1) owner = dm;
        else if (owner && dm !== owner) p.push(`${at} changes the state of ${JSON.stringify(dm || 'the team')}, but its subagentRunId is ${JSON.stringify(owner)}'s`);
        break;
      }
      case 'CUSTOM':
        if (e.name === 'a2a.member_error') {
          if (v1) p.push(`${at} a2a.member_error on a 1.0.0 client (want SUBAGENT_ERROR)`);
          else {
            claim(e.value?.member, 'a2a.member_error of');
            memberErrors.set(e.value?.member, [...(memberErrors.get(e.value?.member) ?? []), e.value]);
          }
        } else if (e.name === 'a2a.route') owner = '';
        break;
      default:
    }
    owners.push(owner);
  }

  if (v1) {
    for (const [id, who] of open) p.push(`SUBAGENT_STARTED of ${who} (${id}) has no SUBAGENT_FINISHED or SUBAGENT_ERROR`);
    for (const m of run.members) if (!started.has(m)) p.push(`no SUBAGENT_STARTED for member ${m}`);
    const finished = events.find((e) => e.type === 'RUN_FINISHED');
    const interruptIds = (m) => (finished?.outcome?.interrupts ?? []).filter((x) => memberOfInterrupt(x) === m).map((x) => x.id);
    for (const [m, end] of ends) {
      const code = run.failed?.[m];
      if (code !== undefined) {
        if (end.type !== 'SUBAGENT_ERROR') p.push(`${m} should fail (${code}) but ended with ${end.type} ${JSON.stringify(end.outcome ?? null)}`);
        else {
          if (end.code !== code) p.push(`SUBAGENT_ERROR of ${m} has code ${JSON.stringify(end.code)}, want ${JSON.stringify(code)}`);
          if (!end.message) p.push(`SUBAGENT_ERROR of ${m} has no message`);
        }
      } else if (end.type !== 'SUBAGENT_FINISHED') {
        p.push(`${m} ended with ${end.type} ${JSON.stringify(end.message ?? '')}, want SUBAGENT_FINISHED`);
      } else if (run.interrupts?.[m]) {
        if (end.outcome?.type !== 'suspended') p.push(`SUBAGENT_FINISHED of ${m} has outcome ${JSON.stringify(end.outcome ?? null)}, want suspended`);
        else if (!sameJSON([...(end.outcome.interruptIds ?? [])].sort(), interruptIds(m).sort())) {
          p.push(`SUBAGENT_FINISHED of ${m} suspends on ${JSON.stringify(end.outcome.interruptIds)}, RUN_FINISHED has ${JSON.stringify(interruptIds(m))} for it`);
        }
      } else if (end.outcome !== undefined && end.outcome.type !== 'success') {
        p.push(`SUBAGENT_FINISHED of ${m} has outcome ${JSON.stringify(end.outcome)}, want success`);
      }
    }
  } else {
    const seen = new Set(owners.filter((o) => o !== undefined && o !== ''));
    for (const m of run.members) if (!seen.has(m)) p.push(`nothing of member ${m} is shown (no message named after it, no a2a.member_error)`);
    for (const m of seen) if (!members.has(m)) p.push(`events of ${JSON.stringify(m)}, not a member taking part (${run.members.join(', ')})`);
    // One member's part after another: a member whose events stopped never comes back.
    const order = [];
    for (const o of owners) if (o !== undefined && o !== '' && order.at(-1) !== o) order.push(o);
    if (new Set(order).size !== order.length) p.push(`members interleave on a ${version} client (want one after the other): ${order.join(' → ')}`);
    for (const m of run.members) {
      const errs = memberErrors.get(m) ?? [];
      const code = run.failed?.[m];
      if (code === undefined) {
        if (errs.length > 0) p.push(`a2a.member_error for ${m}, which should not fail: ${JSON.stringify(errs)}`);
      } else if (errs.length !== 1) p.push(`${errs.length} CUSTOM a2a.member_error for ${m}, want 1`);
      else if (errs[0].code !== code || !errs[0].message) p.push(`a2a.member_error of ${m} is ${JSON.stringify(errs[0])}, want code ${JSON.stringify(code)} and a message`);
    }
  }
  return { problems: p, owners };
}

/** memberOfInterrupt is the member an interrupt id names (`<member>:<id>`). */
const memberOfInterrupt = (i) => (typeof i?.id === 'string' && i.id.includes(':') ? i.id.slice(0, i.id.indexOf(':')) : undefined);

/**
 * The member a message is attributed to: the one its TEXT_MESSAGE_START
 * named (0.0.36 keeps no name on streamed messages), else its name (a
 * message the client only knows from a MESSAGES_SNAPSHOT).
 */
const ownerOf = (m, known) => known.messages.get(m.id) ?? m.name;

/** The assistant text of `member`'s messages, one message per line. */
const memberText = (messages, member, known) => assistantText(messages.filter((m) => ownerOf(m, known) === member));

/**
 * messageProblems: every assistant message of the thread is attributed to a
 * member that took part, named after it (where the client keeps names: not
 * 0.0.36's streamed messages), and on 1.0.0 carries a subagentRunId of that
 * member (tool messages: of the member whose call they answer).
 */
function messageProblems(messages, version, known, everyMember) {
  const p = [];
  const callOwner = new Map();
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    const who = ownerOf(m, known);
    if (!everyMember.has(who)) p.push(`assistant message ${m.id} (${JSON.stringify(m.content)}) is attributed to ${JSON.stringify(who)}, not to a member (${[...everyMember].join(', ')})`);
    else if (m.name !== undefined ? m.name !== who : version !== '0.0.36') p.push(`assistant message ${m.id} of ${who} is named ${JSON.stringify(m.name)} in the client's messages`);
    for (const tc of m.toolCalls ?? []) callOwner.set(tc.id, who);
    if (version === '1.0.0') {
      const by = known.runIds.get(m.subagentRunId);
      if (by !== who) p.push(`message ${m.id} of ${who} carries subagentRunId ${JSON.stringify(m.subagentRunId)} (${by ?? 'no member'}'s) in the client's messages`);
    }
  }
  if (version === '1.0.0') {
    for (const m of messages) {
      if (m.role !== 'tool' || !callOwner.has(m.toolCallId)) continue;
      const who = known.runIds.get(m.subagentRunId);
      if (who !== callOwner.get(m.toolCallId)) p.push(`tool message ${m.id} for ${callOwner.get(m.toolCallId)}'s call carries subagentRunId ${JSON.stringify(m.subagentRunId)} (${who ?? 'no member'}'s)`);
    }
  }
  return p;
}

/**
 * textProblems: `text` appears exactly once in `member`'s messages, and
 * across the thread as often as the row's texts hold it (`all`).
 */
function textProblems(what, member, text, messages, all, known) {
  const p = [];
  const mine = countOccurrences(memberText(messages, member, known), text);
  if (mine !== 1) p.push(`${what} ${JSON.stringify(text)} appears ${mine} times in ${member}'s messages, want 1 (${JSON.stringify(messages.filter((m) => m.role === 'assistant').map((m) => [ownerOf(m, known), m.content]))})`);
  const want = all.reduce((n, t) => n + countOccurrences(t, text), 0);
  const total = countOccurrences(assistantText(messages), text);
  if (total !== want) p.push(`${what} ${JSON.stringify(text)} appears ${total} times in the thread, want ${want}`);
  return p;
}

/** The member views of the team's state key. */
const views = (state) => state?.[KEY]?.members ?? {};

/**
 * judgeTeamRun: the problems of one team run against `run` (see
 * attribution), and its owners (for the shape and the replay).
 *   run = {members, answers?, interrupts?, failed?, route?, routeReason?}
 *   ctx = {s, strategy, known, everyMember, texts, before?: member views after run 1}
 */
function judgeTeamRun(run, rec, agent, version, ctx) {
  const p = genericProblems(rec);
  if (rec.timedOut || rec.error) return { problems: p, owners: [] };
  const raw = rawEvents(rec);
  const t = rec.terminal;
  const interrupting = Object.keys(run.interrupts ?? {});
  const st = agent.state?.[KEY];

  if (t?.type !== 'RUN_FINISHED') p.push(`expected RUN_FINISHED, got ${describeTerminal(t)}`);
  else if (INTERRUPT_AWARE.has(version)) {
    if (interrupting.length === 0 && t.outcome !== 'success') p.push(`expected a success outcome, got ${describeTerminal(t)}`);
    if (interrupting.length > 0) {
      if (t.outcome !== 'interrupt') p.push(`expected the interrupt outcome, got ${describeTerminal(t)}`);
      const ints = t.interrupts ?? [];
      for (const i of ints) if (!interrupting.includes(memberOfInterrupt(i))) p.push(`interrupt ${JSON.stringify(i.id)} names no interrupting member (${interrupting.join(', ')})`);
      for (const m of interrupting) {
        const mine = ints.filter((i) => memberOfInterrupt(i) === m);
        if (mine.length !== 1) {
          p.push(`${mine.length} interrupts of ${m}, want 1: ${JSON.stringify(ints.map((i) => i.id))}`);
          continue;
        }
        const [i] = mine;
        const x = run.interrupts[m];
        if (i.reason !== (x.reason ?? 'input_required')) p.push(`interrupt of ${m} has reason ${JSON.stringify(i.reason)}, want ${JSON.stringify(x.reason ?? 'input_required')}`);
        if (x.question && !String(i.message ?? '').includes(x.question)) p.push(`interrupt of ${m} has message ${JSON.stringify(i.message)}, want ${JSON.stringify(x.question)}`);
        if (x.responseSchema && !sameJSON(i.responseSchema, x.responseSchema)) p.push(`interrupt of ${m} has responseSchema ${JSON.stringify(i.responseSchema)}`);
        if (i.reason === 'tool_call') p.push(...toolApprovalProblems([i], rec, agent.messages, x).map((s) => `${m}: ${s}`));
        const a2a = i.metadata?.a2a;
        if (a2a?.agent !== m) p.push(`interrupt of ${m} has metadata.a2a.agent ${JSON.stringify(a2a?.agent)}`);
        const task = views(agent.state)[m]?.task?.id;
        if (!a2a?.taskId || a2a.taskId !== task) p.push(`interrupt of ${m} names task ${JSON.stringify(a2a?.taskId)}, its state shows ${JSON.stringify(task)}`);
        if (!(views(agent.state)[m]?.pendingInterrupts ?? []).includes(i.id)) p.push(`state a2a.members.${m}.pendingInterrupts ${JSON.stringify(views(agent.state)[m]?.pendingInterrupts)} lacks ${i.id}`);
      }
    } else if ((agent.pendingInterrupts ?? []).length > 0) p.push(`pendingInterrupts ${JSON.stringify(agent.pendingInterrupts)}`);
  }

  const att = attribution(raw, version, run, ctx.known);
  p.push(...att.problems);
  // attribution() learns this run's subagentRunIds; the interrupts are judged again with them.
  if (version === '1.0.0' && t?.type === 'RUN_FINISHED') {
    for (const i of t.interrupts ?? []) {
      const m = memberOfInterrupt(i);
      if (ctx.known.runIds.get(i.subagentRunId) !== m) p.push(`interrupt ${i.id} carries subagentRunId ${JSON.stringify(i.subagentRunId)} (${ctx.known.runIds.get(i.subagentRunId) ?? 'no member'}'s), want ${m}'s`);
    }
  }
  for (const m of run.members) ctx.everyMember.add(m);
  p.push(...messageProblems(agent.messages, version, ctx.known, ctx.everyMember));
  for (const [m, text] of Object.entries(run.answers ?? {})) p.push(...textProblems('answer', m, text, agent.messages, ctx.texts, ctx.known));
  for (const [m, x] of Object.entries(run.interrupts ?? {})) if (x.question) p.push(...textProblems('question', m, x.question, agent.messages, ctx.texts, ctx.known));

  const routes = raw.filter((e) => e.type === 'CUSTOM' && e.name === 'a2a.route');
  if (run.route === undefined) {
    if (routes.length > 0) p.push(`CUSTOM a2a.route in a ${ctx.strategy} run: ${JSON.stringify(routes)}`);
  } else if (routes.length !== 1) p.push(`${routes.length} CUSTOM a2a.route events, want 1`);
  else {
    const r = routes[0].value ?? {};
    if (r.member !== run.route) p.push(`a2a.route names ${JSON.stringify(r.member)}, want ${JSON.stringify(run.route)} (${JSON.stringify(r)})`);
    if (typeof r.score !== 'number' || typeof r.reason !== 'string' || r.reason === '') p.push(`a2a.route ${JSON.stringify(r)} lacks a numeric score or a reason`);
    if (run.routeReason && !run.routeReason.test(String(r.reason))) p.push(`a2a.route reason ${JSON.stringify(r.reason)} does not match ${run.routeReason}`);
    if (st?.route?.member !== run.route) p.push(`state a2a.route ${JSON.stringify(st?.route)}, want member ${JSON.stringify(run.route)}`);
  }

  // The team's state: its name and strategy, each member's own view.
  if (st?.team !== ctx.s.agent) p.push(`state a2a.team ${JSON.stringify(st?.team)}, want ${JSON.stringify(ctx.s.agent)}`);
  if (st?.strategy !== ctx.strategy) p.push(`state a2a.strategy ${JSON.stringify(st?.strategy)}, want ${JSON.stringify(ctx.strategy)}`);
  if (st?.agent !== undefined) p.push(`state a2a.agent ${JSON.stringify(st.agent)} on a team`);
  const contexts = new Map();
  for (const m of run.members) {
    const v = views(agent.state)[m];
    if (v?.agent !== m) {
      p.push(`state a2a.members.${m} ${JSON.stringify(v)}, want agent ${JSON.stringify(m)}`);
      continue;
    }
    if (run.failed?.[m] !== undefined) continue;
    if (typeof v.contextId !== 'string' || v.contextId === '') p.push(`state a2a.members.${m} has no contextId`);
    else if (contexts.has(v.contextId)) p.push(`members ${contexts.get(v.contextId)} and ${m} share contextId ${v.contextId}`);
    else contexts.set(v.contextId, m);
    const want = run.interrupts?.[m] ? 'input_required' : 'completed';
    if (v.task?.state !== want) p.push(`state a2a.members.${m}.task ${JSON.stringify(v.task)}, want state ${want}`);
    if (!run.interrupts?.[m] && (v.pendingInterrupts ?? []).length > 0) p.push(`state a2a.members.${m}.pendingInterrupts ${JSON.stringify(v.pendingInterrupts)}`);
    const before = ctx.before?.[m];
    if (before) {
      if (v.contextId !== before.contextId) p.push(`${m}'s contextId changed from ${before.contextId} to ${v.contextId} on the resume`);
      if (v.task?.id !== before.task?.id) p.push(`${m}'s task changed from ${before.task?.id} to ${v.task?.id} on the resume (the answer goes to its task)`);
    }
  }
  return { problems: p, owners: att.owners };
}

/**
 * teamShape is what the SSE and WebSocket runs of a team row must share:
 * per run, the team's own events in order, then each member's in order
 * (members interleave, or take turns, by timing), steps and state left out.
 */
function teamShape(runs) {
  return runs
    .map(({ raw, owners }) => {
      const by = new Map();
      raw.forEach((e, i) => {
        if (TIMING.has(e.type)) return;
        const o = owners[i] ?? '?';
        by.set(o, [...(by.get(o) ?? []), e]);
      });
      return [...by.keys()]
        .sort()
        .map((o) => `[${o || 'team'}]\n${joinTextDeltas(by.get(o)).map(eventShape).join('\n')}`)
        .join('\n');
    })
    .join('\n--- next run ---\n');
}

/** parseSSE is the JSON events of an SSE body, in order. */
export function parseSSE(body) {
  const out = [];
  for (const frame of body.split(/\r?\n\r?\n/)) {
    const data = frame
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data !== '') out.push(JSON.parse(data));
  }
  return out;
}

/**
 * replayProblems reads the thread's journal again as a client reconnecting
 * from scratch would (GET <url>/threads/<id>/events, Last-Event-ID: 0) and
 * wants the runs it holds to be, event for event, the runs the client got,
 * and attributed to the same members by the same rules.
 */
async function replayProblems(url, threadId, version, judged, timeoutMs) {
  const u = `${url}/threads/${encodeURIComponent(threadId)}/events`;
  const r = await sideRequest('GET', u, Date.now() + timeoutMs, { 'Last-Event-ID': '0', Accept: 'text/event-stream' });
  if (r.status !== 200) return [`replay: GET ${u}: ${r.status ?? r.error} ${String(r.text ?? '').slice(0, 200)}`];
  let events;
  try {
    events = parseSSE(r.text);
  } catch (err) {
    return [`replay: the journal is not SSE of JSON events: ${err.message}`];
  }
  const runs = [];
  for (const e of events) {
    if (e.type === 'RUN_STARTED') runs.push([]);
    if (runs.length === 0) return [`replay: the journal starts with ${e.type}, not RUN_STARTED`];
    runs.at(-1).push(e);
  }
  if (runs.length !== judged.length) return [`replay: the journal holds ${runs.length} runs, the client ran ${judged.length}`];
  const p = [];
  const known = { runIds: new Map(), calls: new Map(), messages: new Map() };
  runs.forEach((replayed, k) => {
    const { raw, owners, run } = judged[k];
    if (replayed.length !== raw.length || !replayed.every((e, i) => sameJSON(e, raw[i]))) {
      const i = replayed.findIndex((e, j) => !sameJSON(e, raw[j]));
      p.push(`replay: run ${k + 1} differs from what the client got at event ${i + 1}: ${JSON.stringify(replayed[i] ?? null).slice(0, 200)} vs ${JSON.stringify(raw[i] ?? null).slice(0, 200)}`);
    }
    const again = attribution(replayed, version, run, known);
    p.push(...again.problems.map((x) => `replay: run ${k + 1}: ${x}`));
    if (!sameJSON(again.owners, owners)) p.push(`replay: run ${k + 1} attributes events to other members than the live run did`);
  });
  return p;
}

/**
 * runTeam runs a team row: run 1 (judged against s.team), then on 1.0.0 and
 * 0.0.59, when s.team.resume is given, one resume answering every interrupt
 * with its member's payload (judged against resume.answers), then the
 * journal replay. Returns a runScenario result with its own `shape`.
 *   s.team = {strategy, members, answers?, interrupts?, failed?, route?, routeReason?,
 *             resume?: {payloads: {member: payload}, answers: {member: text}, toolResults?: {member: text}}}
 *   s.forwardedProps: runAgent({forwardedProps}) of run 1
 */
export async function runTeam(s, version, url, timeoutMs, transport = 'sse') {
  const tm = s.team;
  const agent = await newAgent(version, url, s.text, s.initialState, transport);
  const texts = [
    ...Object.values(tm.answers ?? {}),
    ...Object.values(tm.interrupts ?? {}).map((x) => x.question ?? ''),
    ...Object.values(tm.resume?.answers ?? {}),
  ];
  const ctx = { s, strategy: tm.strategy, known: { runIds: new Map(), calls: new Map(), messages: new Map() }, everyMember: new Set(), texts };
  const runs = [];
  const judged = [];
  const first = await runOnce(agent, s.forwardedProps ? { forwardedProps: s.forwardedProps } : {}, timeoutMs);
  runs.push(first);
  const run1 = { members: tm.members, answers: tm.answers, interrupts: tm.interrupts, failed: tm.failed, route: tm.route, routeReason: tm.routeReason };
  const j1 = judgeTeamRun(run1, first, agent, version, ctx);
  let problems = j1.problems;
  judged.push({ raw: rawEvents(first), owners: j1.owners, run: run1 });

  if (tm.resume && problems.length === 0) {
    const pending = [...(agent.pendingInterrupts ?? [])];
    const resume = [];
    for (const i of pending) {
      const m = memberOfInterrupt(i);
      if (!(m in tm.resume.payloads)) problems.push(`no payload for the interrupt ${i.id} of ${m}`);
      resume.push({ interruptId: i.id, status: 'resolved', payload: tm.resume.payloads[m] });
    }
    ctx.before = structuredClone(views(agent.state));
    const second = await runOnce(agent, { resume }, timeoutMs);
    runs.push(second);
    const run2 = { members: Object.keys(tm.resume.payloads), answers: tm.resume.answers };
    const j2 = judgeTeamRun(run2, second, agent, version, ctx);
    const p2 = j2.problems;
    judged.push({ raw: rawEvents(second), owners: j2.owners, run: run2 });
    if (!second.timedOut && !second.error) {
      const raw = rawEvents(second);
      for (const [m, contains] of Object.entries(tm.resume.toolResults ?? {})) {
        const mine = { events: raw.filter((_, i) => j2.owners[i] === m) };
        const answered = pending.filter((i) => memberOfInterrupt(i) === m);
        p2.push(...resumeToolProblems({ toolResult: true, resultContains: contains }, mine, agent.messages, answered).map((x) => `${m}: ${x}`));
      }
      if ((agent.pendingInterrupts ?? []).length > 0) p2.push(`pendingInterrupts still ${JSON.stringify(agent.pendingInterrupts)}`);
    }
    problems.push(...p2.map((x) => `resumed run: ${x}`));
  }
  if (problems.length === 0) problems = await replayProblems(url, agent.threadId, version, judged, timeoutMs);
  return { ok: problems.length === 0, problems, runs, messages: agent.messages, shape: teamShape(judged) };
}
