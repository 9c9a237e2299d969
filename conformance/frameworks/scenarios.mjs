// The framework rows of the scenario table (issue 17): the ADK JS and
// Mastra agents of this directory (adk.mjs, mastra.mjs) behind the bridge,
// driven by the real @ag-ui/client generations like every other row (the
// fields are documented at the top of ../scenarios.mjs). Their texts come
// from texts.mjs, which the agents' scripted models use too.
//
// Every row checks the answer exactly once, and every run — here and in the
// rest of the table — one tool-call card per tool call (lib/harness.mjs
// toolCardProblems, threadToolCardProblems) and exactly one terminal event.
// What the agents send is recorded in ../agents/recordings (NOTES.md there).

import { adk, mastra } from './texts.mjs';

/** Mastra's progress note at the start of every task: status text, never the answer. */
export const MASTRA_PROGRESS = 'Generating response...';

const INTERRUPT_CLIENTS = ['1.0.0', '0.0.59'];

const hello = 'Hello';

// ADK: a long-running call is proposed as a function_call (artifact, then
// the INPUT_REQUIRED status message, same id); the bridge shows it as one
// tool_call interrupt with its approve-with-edits schema.
const adkApproval = { interrupt: true, reason: 'tool_call', tool: 'book_trip', args: adk.bookingArgs() };
const adkEdited = { ...adk.bookingArgs(), nights: 5 };

// Mastra: the suspension's data part {suspendPayload: {toolCallId, toolName,
// args, suspendPayload: <the tool's own payload>}, resumeSchema: "<JSON
// Schema>"} is a first-class tool_call interrupt whose responseSchema is that
// schema, parsed, and whose message is the tool's question.
const mastraApproval = {
  interrupt: true,
  reason: 'tool_call',
  question: mastra.bookQuestion,
  tool: 'book_trip',
  args: mastra.bookingArgs(),
  responseSchema: mastra.resumeSchema(),
  never: [MASTRA_PROGRESS],
};
const mastraEdited = { ...mastra.bookingArgs(), nights: 4 };

/**
 * approvals is the approve, deny and edit rows of one agent's approval tool,
 * and an approval sent the way CopilotKit sends it. The result the resumed
 * run reports is the decision the bridge sent (the agents report the tool's
 * own result later, or never): resultContains.
 */
function approvals(prefix, agent, text, expect, args, edited, booked, denied) {
  return [
    ['approve', { approved: true }, booked(args), '"approved":true'],
    ['deny', { approved: false }, denied, '"approved":false'],
    ['edit', { approved: true, editedArgs: edited }, booked(edited), `"nights":${edited.nights}`],
  ].map(([what, payload, answer, resultContains]) => ({
    name: `${prefix}-${what}`,
    agent,
    text,
    expect,
    resume: { payload, answer, toolResult: true, resultContains },
    clients: INTERRUPT_CLIENTS,
  })).concat({
    // As CopilotKit's useInterrupt resolves it: the resume and the call's tool message.
    name: `${prefix}-approve-copilotkit`,
    agent,
    text,
    expect,
    resume: { payload: { approved: true }, answer: booked(args), toolResult: true, toolMessage: true },
    clients: INTERRUPT_CLIENTS,
  });
}

export const frameworkScenarios = [
  // ---- Google ADK for JS 2.0.0, toA2a(), A2A v0.3 ----
  // Partial chunks, then the full text again on the same artifact (append: false).
  { name: 'adk-stream', agent: 'adk', text: hello, expect: { answer: adk.echo(hello), streamed: true } },
  // get_weather: a function_call artifact, then a function_response artifact, then the answer.
  {
    name: 'adk-tool',
    agent: 'adk',
    text: 'weather in Paris?',
    expect: {
      answer: adk.afterTool('get_weather', adk.weather('Paris')),
      serverTools: [{ name: 'get_weather', args: { city: 'Paris' }, result: '"forecast":"sunny"' }],
    },
  },
  { name: 'adk-approval', agent: 'adk', text: 'book a trip', expect: adkApproval },
  ...approvals('adk-approval', 'adk', 'book a trip', adkApproval, adk.bookingArgs(), adkEdited, adk.booked, adk.denied),
  // The model's errorCode: a FAILED task whose message is the model's errorMessage.
  { name: 'adk-model-error', agent: 'adk', text: 'fail now', expect: { error: 'a2a_failed', message: adk.script('fail').error.message } },

  // ---- Mastra 1.71.0, @mastra/server 1.69.0 A2A routes, A2A v1.0 ----
  { name: 'mastra-stream', agent: 'mastra', text: hello, expect: { answer: mastra.echo(hello), streamed: true, never: [MASTRA_PROGRESS] } },
  // get_weather runs inside Mastra: the stream carries only the answer; the
  // call is in the finished task's metadata.execution.toolCalls/toolResults.
  {
    name: 'mastra-tool',
    agent: 'mastra',
    text: 'weather in Oslo?',
    expect: {
      answer: mastra.afterTool('get_weather', mastra.weather('Oslo')),
      serverTools: [{ name: 'get_weather', args: { city: 'Oslo' }, result: '"forecast":"snowy"' }],
      never: [MASTRA_PROGRESS],
    },
  },
  { name: 'mastra-approval', agent: 'mastra', text: 'book a trip', expect: mastraApproval },
  ...approvals('mastra-approval', 'mastra', 'book a trip', mastraApproval, mastra.bookingArgs(), mastraEdited, mastra.booked, mastra.denied),
  {
    name: 'mastra-model-error',
    agent: 'mastra',
    text: 'fail now',
    expect: { error: 'a2a_failed', message: mastra.script('fail').error, never: [MASTRA_PROGRESS] },
  },
  // Mastra's memory (thread = the A2A contextId, kept by the bridge per thread).
  {
    name: 'mastra-memory',
    agent: 'mastra',
    text: 'My name is Ada',
    expect: { answer: mastra.greet('Ada'), never: [MASTRA_PROGRESS] },
    followUp: { text: 'What is my name?', answer: mastra.recall('Ada') },
  },
];

/**
 * frameworkAgents lists the bridge config's entries for the framework
 * agents (frameworks/serve.mjs's announcement): ADK's card is at the
 * well-known path of its base URL; Mastra's is not, so its entry names it.
 */
export function frameworkAgents(announced) {
  const list = [];
  if (announced.adk) list.push({ name: 'adk', url: announced.adk.url });
  if (announced.mastra) list.push({ name: 'mastra', url: announced.mastra.url, card: announced.mastra.card });
  return list;
}
