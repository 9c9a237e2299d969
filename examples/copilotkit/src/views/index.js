import ChatView from './ChatView.jsx';

// The page's views, chosen by ?view=NAME (default "chat"). A new demo is one
// more entry here and one component in this folder; every view renders
// inside the page's one <CopilotKit> provider (src/main.jsx).
export const views = {
  chat: { title: 'Chat with a bridge agent', Component: ChatView },
};
