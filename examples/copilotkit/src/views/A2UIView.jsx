import { CopilotChat, useAgent } from '@copilotkit/react-core/v2';
import { basicCatalog } from '@copilotkit/a2ui-renderer';
import { agentName, withParams } from '../config.js';
import { useRunError } from '../components/useRunError.js';
import { a2uiSurfaceRenderer } from '../a2ui/renderer.jsx';
import { V10_BASIC_CATALOG } from '../a2ui/v1.js';

// The bridge's A2UI agents this view links to. CopilotKit's renderer draws
// A2UI v0.9 surfaces (it takes v0.8's message kinds but not v0.8's
// component props); the planner's v1.0 surface goes through the adapter
// of src/a2ui/v1.js.
const A2UI_AGENTS = ['monitor', 'wizard', 'planner', 'booker'];

// The renderers of a2ui-surface activities this view adds (a stable array,
// as CopilotKit requires): CopilotKit's own with the v1.0 adapter in front.
const renderActivityMessages = [a2uiSurfaceRenderer];

// provider is what this view adds to the page's <CopilotKit> (src/main.jsx):
// the catalog @copilotkit/a2ui-renderer renders with — with it, CopilotKit
// sends a button's action back as forwardedProps.a2uiAction and sets
// forwardedProps.a2uiCatalogAvailable, which tells the bridge this client
// renders A2UI although its @ag-ui/client (0.0.59) sends no
// protocolVersion; the surface renderer above; and the renderer's
// capabilities (the A2UI specification's declaration, v1.0's name
// a2uiRendererCapabilities; the bridge passes them to the agent under the
// name its version reads), one entry per version drawn, so the agent's
// surfaces name the catalog this page has.
export const provider = {
  a2ui: { catalog: basicCatalog },
  renderActivityMessages,
  properties: {
    a2uiRendererCapabilities: {
      'v1.0': { supportedCatalogIds: [V10_BASIC_CATALOG] },
      'v0.9': { supportedCatalogIds: [basicCatalog.id] },
    },
  },
};

// A2UIView is <CopilotChat> with a bridge agent that answers with A2UI
// surfaces: @copilotkit/a2ui-renderer draws them in the conversation, and
// their buttons' actions go back to the agent through the bridge.
export default function A2UIView() {
  const { agent } = useAgent();
  const [error, , onChatError] = useRunError(agent);

  return (
    <main className="app" data-thread-id={agent?.threadId} data-view="a2ui">
      <header>
        <h1>{agentName}</h1>
        <p className="muted">
          Generative UI: the agent's A2UI surfaces, drawn by <code>@copilotkit/a2ui-renderer</code>; their
          buttons answer the agent.
        </p>
        <nav aria-label="Agents">
          {A2UI_AGENTS.map((name) => (
            <a key={name} href={withParams({ agent: name, view: 'a2ui' })} aria-current={name === agentName ? 'page' : undefined}>
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
          <p className="status" role="status" data-running={String(Boolean(agent?.isRunning))}>
            {agent?.isRunning ? 'Running…' : 'Idle'}
          </p>
          {error && (
            <div className="error" role="alert" data-code={error.code}>
              <strong>The agent failed</strong>
              <p>{error.message}</p>
            </div>
          )}
        </aside>
      </div>
    </main>
  );
}
