import { useEffect, useState } from 'react';
import { useAgent, useInterrupt } from '@copilotkit/react-core/v2';

// InterruptPanel answers the run's interrupts (RUN_FINISHED with an interrupt
// outcome) through CopilotKit's useInterrupt. The bridge wants every pending
// interrupt answered in one resume, and so does useInterrupt: resolve(payload,
// id) records one answer and resumes once every open interrupt has one. A
// team's members each raise their own, so this is one form with one part per
// interrupt and one button that sends them all.
//
// onWaiting(kind) tells the page what the run waits for while the form is
// up ("approval" when an interrupt is a tool approval, else "answer"), and
// onWaiting(null) once it is answered: a finished run with an open
// interrupt is not idle.
export default function InterruptPanel({ onWaiting }) {
  const element = useInterrupt({
    renderInChat: false,
    render: ({ interrupts, resolve }) => (
      <InterruptForm key={interrupts.map((i) => i.id).join()} interrupts={interrupts} resolve={resolve} onWaiting={onWaiting} />
    ),
  });
  return element ?? null;
}

function InterruptForm({ interrupts, resolve, onWaiting }) {
  const { agent } = useAgent();
  const [answers, setAnswers] = useState({});
  const [sending, setSending] = useState(false);
  const complete = interrupts.every((i) => answers[i.id] !== undefined);
  const waitingFor = interrupts.some((i) => i.reason === 'tool_call') ? 'approval' : 'answer';

  useEffect(() => {
    onWaiting?.(waitingFor);
    return () => onWaiting?.(null);
  }, [onWaiting, waitingFor]);

  // set records one interrupt's answer. With sendNow (Approve and Deny: a
  // decision needs no review) the form is sent at once when that answer
  // completes it, so approving a lone call is one click; an edit or a typed
  // answer waits for the Send button.
  function set(id, answer, sendNow = false) {
    const next = { ...answers, [id]: answer };
    setAnswers(next);
    if (sendNow && !sending && interrupts.every((i) => next[i.id] !== undefined)) send(next);
  }

  function submit(event) {
    event.preventDefault();
    if (complete) send(answers);
  }

  async function send(all) {
    setSending(true);
    try {
      // Each call but the last only records its answer; the last resumes.
      for (const i of interrupts) await resolve(all[i.id].payload, i.id);
    } catch (err) {
      // The resume run failed: CopilotKit reports it to <CopilotChat>'s
      // onError (shown beside the chat) and drops the pending interrupts.
      console.error('resume failed', err);
      setSending(false);
    }
  }

  return (
    <form className="interrupt" onSubmit={submit} aria-label="Answer the agent">
      <h2>{interrupts.length === 1 ? 'The agent is waiting for you' : `The agents are waiting for you (${interrupts.length})`}</h2>
      {interrupts.map((i) =>
        i.reason === 'tool_call' ? (
          <ToolApproval
            key={i.id}
            interrupt={i}
            toolCall={findToolCall(agent?.messages, i.toolCallId)}
            answer={answers[i.id]}
            onAnswer={(a, sendNow) => set(i.id, a, sendNow)}
          />
        ) : (
          <Question key={i.id} interrupt={i} answer={answers[i.id]} onAnswer={(a) => set(i.id, a)} />
        ),
      )}
      <div className="actions">
        <button type="submit" disabled={!complete || sending}>
          {interrupts.length === 1 ? 'Send answer' : 'Send answers'}
        </button>
      </div>
    </form>
  );
}

const memberOf = (interrupt) => interrupt.metadata?.a2a?.agent;

// Question is one field per property of the interrupt's responseSchema
// (strings, numbers and booleans); the bridge validates the answer itself.
function Question({ interrupt, answer, onAnswer }) {
  const properties = interrupt.responseSchema?.properties ?? {};
  const required = new Set(interrupt.responseSchema?.required ?? []);
  const values = answer?.payload ?? {};
  const setValue = (name, schema, raw) => {
    const next = { ...values };
    if (schema.type === 'boolean') next[name] = Boolean(raw);
    else if (raw === '') delete next[name];
    else if (schema.type === 'number' || schema.type === 'integer') next[name] = Number(raw);
    else next[name] = raw;
    const missing = [...required].some((r) => next[r] === undefined);
    onAnswer(missing ? undefined : { payload: next });
  };
  return (
    <fieldset className="part question" data-interrupt-id={interrupt.id} data-member={memberOf(interrupt)}>
      <legend>{memberOf(interrupt) ?? 'The agent'} asks</legend>
      <p>{interrupt.message}</p>
      {Object.entries(properties).map(([name, schema]) => {
        const id = `answer-${interrupt.id}-${name}`;
        return (
          <div className="field" key={name}>
            <label htmlFor={id}>{schema.title ?? name}</label>
            {schema.type === 'boolean' ? (
              <input id={id} type="checkbox" checked={Boolean(values[name])} onChange={(e) => setValue(name, schema, e.target.checked)} />
            ) : (
              <input
                id={id}
                type={schema.type === 'number' || schema.type === 'integer' ? 'number' : 'text'}
                value={values[name] ?? ''}
                onChange={(e) => setValue(name, schema, e.target.value)}
                autoComplete="off"
              />
            )}
          </div>
        );
      })}
    </fieldset>
  );
}

// ToolApproval is an approval of a call the agent proposes: approve it as
// proposed, deny it, or approve it with edited arguments (the bridge's
// responseSchema for tool_call interrupts: {approved, editedArgs?}).
// Approve and Deny answer with sendNow; an edit is sent with the form's
// button.
function ToolApproval({ interrupt, toolCall, answer, onAnswer }) {
  const proposed = toolCall?.function?.arguments ?? '{}';
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(() => pretty(proposed));
  const [draftError, setDraftError] = useState('');
  const decision = answer?.decision;

  function editDraft(text) {
    setDraft(text);
    try {
      const args = JSON.parse(text);
      if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new Error('the arguments must be a JSON object');
      setDraftError('');
      onAnswer({ decision: 'edit', payload: { approved: true, editedArgs: args } });
    } catch (err) {
      setDraftError(err.message);
      onAnswer(undefined);
    }
  }

  return (
    <fieldset className="part approval" data-interrupt-id={interrupt.id} data-member={memberOf(interrupt)}>
      <legend>{memberOf(interrupt) ?? 'The agent'} needs your approval</legend>
      <p>{interrupt.message}</p>
      {toolCall && (
        <pre className="proposed-call">
          {toolCall.function.name}({proposed})
        </pre>
      )}
      <div className="actions">
        <button type="button" aria-pressed={decision === 'approve'} onClick={() => (setEditing(false), onAnswer({ decision: 'approve', payload: { approved: true } }, true))}>
          Approve
        </button>
        <button type="button" aria-pressed={decision === 'deny'} onClick={() => (setEditing(false), onAnswer({ decision: 'deny', payload: { approved: false } }, true))}>
          Deny
        </button>
        <button type="button" aria-pressed={editing} className="secondary" onClick={() => (setEditing(true), editDraft(draft))}>
          Edit
        </button>
      </div>
      {editing && (
        <div className="field column">
          <label htmlFor={`args-${interrupt.id}`}>Arguments</label>
          <textarea id={`args-${interrupt.id}`} rows={6} value={draft} onChange={(e) => editDraft(e.target.value)} />
          {draftError && <span className="invalid">{draftError}</span>}
        </div>
      )}
    </fieldset>
  );
}

function pretty(json) {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

function findToolCall(messages, id) {
  if (!id || !messages) return null;
  for (const m of messages) for (const tc of m.toolCalls ?? []) if (tc.id === id) return tc;
  return null;
}
