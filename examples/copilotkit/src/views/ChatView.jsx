import { useState } from 'react';
import { CopilotChat, useAgent } from '@copilotkit/react-core/v2';
import { agentName, withParams } from '../config.js';
import { useRunError } from '../components/useRunError.js';
import InterruptPanel from '../components/InterruptPanel.jsx';
import SharedState from '../components/SharedState.jsx';
import { BackgroundTool, BookingCard } from '../components/Tools.jsx';

// The agents this view links to; any other bridge agent works with ?agent=NAME.
const FEATURED = ['streamer', 'asker', 'approver', 'concierge', 'dashboard', 'painter', 'failer'];

// ChatView is CopilotKit's own chat (<CopilotChat>) with the bridge agent,
// and beside it what the CopilotKit hooks add: the pending interrupts
// (useInterrupt), the shared state (useCoAgent), a frontend tool
// (useCopilotAction with a handler) and a card for the agent's own tool
// call (useCopilotAction with a render).
export default function ChatView() {
  const { agent } = useAgent();
  const [error, setError, onChatError] = useRunError(agent);
  const [background, setBackground] = useState('');
  // What a pending interrupt waits for ("approval", "answer"), from the
  // interrupt form: the run has ended, but the agent is not idle.
  const [waiting, setWaiting] = useState(null);

  return (
    <main
      className="app"
      data-thread-id={agent?.threadId}
      data-background={background || undefined}
      style={background ? { background } : undefined}
    >
      <header>
        <h1>{agentName}</h1>
        <p className="muted">
          A2A agent through the bridge, hosted by the CopilotKit runtime as an AG-UI <code>HttpAgent</code>.
        </p>
        <nav aria-label="Agents">
          {FEATURED.map((name) => (
            <a key={name} href={withParams({ agent: name })} aria-current={name === agentName ? 'page' : undefined}>
              {name}
            </a>
          ))}
        </nav>
      </header>

      <div className="layout">
        <section className="chat" aria-label="Conversation">
          <CopilotChat onError={onChatError} />
        </section>
        <aside className="side">
          <p className="status" role="status" data-running={String(Boolean(agent?.isRunning))} data-waiting={waiting ?? undefined}>
            {agent?.isRunning ? 'Running…' : waiting ? `Waiting for your ${waiting}` : 'Idle'}
          </p>
          {error && (
            <div className="error" role="alert" data-code={error.code}>
              <strong>The agent failed</strong>
              <p>{error.message}</p>
              <button type="button" className="secondary" onClick={() => setError(null)}>
                Dismiss
              </button>
            </div>
          )}
          <InterruptPanel onWaiting={setWaiting} />
          <SharedState />
        </aside>
      </div>
      <BackgroundTool onChange={setBackground} />
      <BookingCard />
    </main>
  );
}
