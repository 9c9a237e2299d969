import { useCopilotAction } from '@copilotkit/react-core';

// BackgroundTool offers the agent a frontend tool, change_background: the
// runtime sends it with every run (RunAgentInput.tools), the bridge passes it
// to the A2A agent, and when the agent calls it CopilotKit runs the handler
// here and sends the result back in a follow-up run.
export function BackgroundTool({ onChange }) {
  useCopilotAction({
    name: 'change_background',
    description: 'Change the background colour of the page.',
    parameters: [{ name: 'color', type: 'string', description: 'A CSS colour', required: true }],
    handler: async ({ color }) => {
      onChange(color);
      return `the page is now ${color}`;
    },
    render: ({ status, args, result }) => (
      <div className="tool-card" data-tool="change_background" data-status={status}>
        <strong>change_background</strong>({args?.color ?? '…'}) — {status === 'complete' ? `done: ${result}` : status}
      </div>
    ),
  });
  return null;
}

// BookingCard renders the approver's book_flight call in the chat. The remote
// agent executes that tool (the bridge marks it server-executed), so this
// action only renders: available "disabled" keeps it out of the tools sent
// to the agent.
export function BookingCard() {
  useCopilotAction({
    name: 'book_flight',
    available: 'disabled',
    render: ({ status, args, result }) => (
      <div className="tool-card" data-tool="book_flight" data-status={status}>
        <strong>book_flight</strong>
        <pre>{JSON.stringify(args ?? {})}</pre>
        {status === 'complete' && <pre className="tool-result">{typeof result === 'string' ? result : JSON.stringify(result)}</pre>}
      </div>
    ),
  });
  return null;
}
