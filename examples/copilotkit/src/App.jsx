import { useRef, useState } from 'react';
import { HttpAgent } from '@ag-ui/client';
import { agentName, agentURL } from './config.js';
import InterruptForm from './InterruptForm.jsx';

// One HttpAgent per page: it keeps the thread (its id, messages and state)
// and sends the whole conversation with every run, as any AG-UI client does.
function useAgent() {
  const ref = useRef(null);
  if (ref.current === null) ref.current = new HttpAgent({ url: agentURL });
  return ref.current;
}

export default function App() {
  const agent = useAgent();
  const [messages, setMessages] = useState([]);
  const [interrupts, setInterrupts] = useState([]);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState('');
  const [draft, setDraft] = useState('');

  // run starts one run and mirrors the agent's messages into React state as
  // they stream; a run that ends with an interrupt leaves it pending on the
  // agent (agent.pendingInterrupts) until the next run resumes it.
  async function run(params) {
    setRunning(true);
    setError('');
    try {
      await agent.runAgent(params, {
        onMessagesChanged: ({ messages }) => setMessages([...messages]),
        onRunErrorEvent: ({ event }) => setError(`${event.code ?? 'error'}: ${event.message}`),
      });
    } catch (err) {
      setError(err.message);
    } finally {
      setInterrupts([...(agent.pendingInterrupts ?? [])]);
      setRunning(false);
    }
  }

  function send(event) {
    event.preventDefault();
    const text = draft.trim();
    if (!text) return;
    setDraft('');
    agent.addMessage({ id: crypto.randomUUID(), role: 'user', content: text });
    setMessages([...agent.messages]);
    run({});
  }

  // The bridge wants every pending interrupt answered in one resume.
  const answer = (interrupt, payload) => run({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload }] });
  const cancel = (interrupt) => run({ resume: [{ interruptId: interrupt.id, status: 'cancelled' }] });

  const visible = messages.filter((m) => (m.role === 'user' || m.role === 'assistant') && m.content);
  const blocked = running || interrupts.length > 0;

  return (
    <main className="app">
      <header>
        <h1>{agentName}</h1>
        <p className="muted">
          An A2A agent through the bridge, with <code>@ag-ui/client</code>'s <code>HttpAgent</code> — <code>{agentURL}</code>
        </p>
      </header>

      <ol className="messages" aria-label="Conversation">
        {visible.map((m) => (
          <li key={m.id} className={`message ${m.role}`}>
            <span className="role">{m.role === 'user' ? 'You' : agentName}</span>
            <p>{m.content}</p>
          </li>
        ))}
      </ol>

      {interrupts[0] && (
        <InterruptForm
          key={interrupts[0].id}
          interrupt={interrupts[0]}
          toolCall={findToolCall(messages, interrupts[0].toolCallId)}
          onAnswer={(payload) => answer(interrupts[0], payload)}
          onCancel={() => cancel(interrupts[0])}
        />
      )}

      <form className="composer" onSubmit={send}>
        <label htmlFor="message" className="visually-hidden">
          Message
        </label>
        <input
          id="message"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          placeholder={interrupts.length ? 'Answer the question above first' : 'Ask something'}
          disabled={blocked}
          autoComplete="off"
        />
        <button type="submit" disabled={blocked || !draft.trim()}>
          Send
        </button>
      </form>
      <p className="status" role="status" data-running={running}>
        {running ? 'Running…' : error ? `Error — ${error}` : ''}
      </p>
    </main>
  );
}

function findToolCall(messages, id) {
  if (!id) return null;
  for (const m of messages) for (const tc of m.toolCalls ?? []) if (tc.id === id) return tc;
  return null;
}
