import { useState } from 'react';

// InterruptForm answers one interrupt: Approve / Deny for a tool call the
// agent wants to make, otherwise one field per property of the interrupt's
// responseSchema (strings, numbers and booleans are enough for most
// questions; the bridge validates the answer against the schema itself).
export default function InterruptForm({ interrupt, toolCall, onAnswer, onCancel }) {
  const properties = interrupt.responseSchema?.properties ?? {};
  const required = new Set(interrupt.responseSchema?.required ?? []);
  const [values, setValues] = useState({});

  if (interrupt.reason === 'tool_call') {
    return (
      <section className="interrupt" aria-label="The agent needs your approval">
        <p>{interrupt.message}</p>
        {toolCall && (
          <pre>
            {toolCall.function.name}({toolCall.function.arguments})
          </pre>
        )}
        <div className="actions">
          <button type="button" onClick={() => onAnswer({ approved: true })}>
            Approve
          </button>
          <button type="button" onClick={() => onAnswer({ approved: false })}>
            Deny
          </button>
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </section>
    );
  }

  function submit(event) {
    event.preventDefault();
    const payload = {};
    for (const [name, schema] of Object.entries(properties)) {
      const v = values[name];
      if (schema.type === 'boolean') payload[name] = Boolean(v);
      else if (v === undefined || v === '') continue;
      else if (schema.type === 'number' || schema.type === 'integer') payload[name] = Number(v);
      else payload[name] = v;
    }
    onAnswer(payload);
  }

  return (
    <form className="interrupt" onSubmit={submit} aria-label="The agent asks">
      <p>{interrupt.message}</p>
      {Object.entries(properties).map(([name, schema]) => {
        const id = `answer-${name}`;
        const set = (v) => setValues((old) => ({ ...old, [name]: v }));
        return (
          <div className="field" key={name}>
            <label htmlFor={id}>{schema.title ?? name}</label>
            {schema.type === 'boolean' ? (
              <input id={id} type="checkbox" checked={Boolean(values[name])} onChange={(e) => set(e.target.checked)} />
            ) : (
              <input
                id={id}
                type={schema.type === 'number' || schema.type === 'integer' ? 'number' : 'text'}
                required={required.has(name)}
                value={values[name] ?? ''}
                onChange={(e) => set(e.target.value)}
              />
            )}
          </div>
        );
      })}
      <div className="actions">
        <button type="submit">Send answer</button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
