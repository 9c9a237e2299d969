import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { CopilotKit } from '@copilotkit/react-core';
import '@copilotkit/react-core/v2/styles.css';
import { agentName, runtimeURL, viewName } from './config.js';
import { views } from './views/index.js';
import './styles.css';

function UnknownView() {
  return (
    <main className="app">
      <h1>No view “{viewName}”</h1>
      <p>
        Known views:{' '}
        {Object.keys(views).map((name) => (
          <a key={name} href={`?view=${name}&agent=${encodeURIComponent(agentName)}`}>
            {name}{' '}
          </a>
        ))}
      </p>
    </main>
  );
}

const View = views[viewName]?.Component ?? UnknownView;

// One CopilotKit provider for the page, talking to the runtime over its
// single-route transport (server.mjs mounts copilotRuntimeNodeHttpEndpoint,
// which serves that one route). `agent` makes the bridge agent the default
// for every hook and for <CopilotChat>. The v1 provider wraps the v2 one, so
// both the v1 hooks (useCoAgent, useCopilotAction) and the v2 ones
// (useInterrupt, useAgent) work under it.
createRoot(document.getElementById('root')).render(
  <StrictMode>
    <CopilotKit runtimeUrl={runtimeURL} agent={agentName} useSingleEndpoint showDevConsole={false} enableInspector={false}>
      <View />
    </CopilotKit>
  </StrictMode>,
);
