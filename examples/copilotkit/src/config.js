// Which bridge and agent the page talks to: ?bridge=…&agent=… in the URL
// win, then VITE_BRIDGE_URL / VITE_AGENT at build time, then the demo's
// defaults. The bridge must allow this page's origin (server.corsOrigins;
// `bridge demo` allows any).
const params = new URLSearchParams(window.location.search);

export const bridgeURL = (params.get('bridge') || import.meta.env.VITE_BRIDGE_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');
export const agentName = params.get('agent') || import.meta.env.VITE_AGENT || 'streamer';
export const agentURL = `${bridgeURL}/agents/${encodeURIComponent(agentName)}`;
