import { useState } from 'react';
import { useCoAgent } from '@copilotkit/react-core';
import { agentName } from '../config.js';

// SharedState is the agent's state through useCoAgent: the bridge keeps what
// the A2A agent produces (data artifacts, status data, UI keys) under its own
// "a2a" key and never overwrites the page's keys, such as userName here,
// which goes to the agent with every run.
export default function SharedState() {
  const { state, setState } = useCoAgent({ name: agentName });
  const [name, setName] = useState('');
  const bridged = state?.a2a ?? {};

  function save(event) {
    event.preventDefault();
    setState({ userName: name.trim() });
  }

  return (
    <section className="state" aria-label="Shared state">
      <h2>Shared state</h2>
      <form onSubmit={save} className="field">
        <label htmlFor="user-name">Your name</label>
        <input id="user-name" value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" />
        <button type="submit" className="secondary">
          Save
        </button>
      </form>
      <dl>
        <dt>userName</dt>
        <dd data-key="userName">{state?.userName ?? '—'}</dd>
        <dt>task</dt>
        <dd data-key="task">{bridged.task ? `${bridged.task.state}` : '—'}</dd>
        {bridged.artifacts && (
          <>
            <dt>artifacts</dt>
            <dd data-key="artifacts">
              <pre>{JSON.stringify(bridged.artifacts)}</pre>
            </dd>
          </>
        )}
        {bridged.ui && (
          <>
            <dt>ui</dt>
            <dd data-key="ui">
              <pre>{JSON.stringify(bridged.ui)}</pre>
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}
