import A2UIView, { provider as a2uiProvider } from './A2UIView.jsx';
import ChatView from './ChatView.jsx';

// The page's views, chosen by ?view=NAME (default "chat"). A new demo is one
// more entry here and one component in this folder; every view renders
// inside the page's one <CopilotKit> provider (src/main.jsx), with the
// view's `provider` props added to it.
export const views = {
  chat: { title: 'Chat with a bridge agent', Component: ChatView },
  a2ui: { title: 'Generative UI (A2UI) from a bridge agent', Component: A2UIView, provider: a2uiProvider },
};
