// What the page shows, from its URL:
//   ?agent=NAME   the bridge agent to talk to (default VITE_AGENT, then "streamer")
//   ?view=NAME    which view of src/views/ to render (default "chat")
//   ?runtime=URL  the CopilotKit runtime (default VITE_RUNTIME_URL, then
//                 /api/copilotkit on this origin, which server.mjs serves)
const params = new URLSearchParams(window.location.search);

export const agentName = params.get('agent') || import.meta.env.VITE_AGENT || 'streamer';
export const viewName = params.get('view') || 'chat';
export const runtimeURL = params.get('runtime') || import.meta.env.VITE_RUNTIME_URL || '/api/copilotkit';

// withParams is this page's URL with some query parameters replaced, e.g.
// to switch agents: withParams({agent: 'asker'}).
export function withParams(changes) {
  const next = new URLSearchParams(window.location.search);
  for (const [k, v] of Object.entries(changes)) next.set(k, v);
  return `${window.location.pathname}?${next}`;
}
