// The scenario table. Each row: a name, the bridge agent it talks to
// (/agents/<agent>), the user's message, and what the frontend must see.
//
// expect:
//   {answer: "…"}                  RUN_FINISHED (success) and the assistant messages of
//                                  the thread contain the text EXACTLY once (catches duplicates)
//   {error: "code", message?: "…"} RUN_ERROR with that code (message: a substring)
//   {interrupt: true, question?,   1.0.0/0.0.59: RUN_FINISHED with an interrupt outcome with
//    reason?, responseSchema?,     an interrupt of `reason` (default "input_required") whose
//    tool?, args?}                 message contains `question` and whose responseSchema is
//                                  `responseSchema` (if given). reason "tool_call": the interrupt
//                                  has a toolCallId that the run streamed (TOOL_CALL_START) and
//                                  that an assistant message holds as a call of `tool` with
//                                  arguments `args`, no result yet, and an approve-with-edits
//                                  responseSchema. 0.0.36 (no outcomes, no resume): a clean
//                                  RUN_FINISHED. The question, if shown as assistant text,
//                                  must not be shown twice.
//    auth?: (taskId) => pattern     sign-in interrupts: metadata.a2a.taskId is the state's task
//                                  and metadata.a2a.auth matches auth(taskId).
// resume: {payload, answer,        run twice on one thread: the first run must interrupt as
//   toolResult?, resultContains?,  `expect` says, the second answers with resume[{interruptId,
//   authorize?}                    status:"resolved", payload}] and must produce `answer`
//                                  exactly once. toolResult true: no TOOL_CALL_START/ARGS/END
//                                  again and exactly one TOOL_CALL_RESULT on the interrupted
//                                  toolCallId (containing `resultContains`); false (a denial):
//                                  no TOOL_CALL_RESULT at all. toolMessage true: the client also
//                                  adds {role: tool, toolCallId, content: payload JSON} (CopilotKit),
//                                  which must stand as the call's one result (no TOOL_CALL_RESULT).
//   authorize: {agent, when}       a sign-in out of band: the harness POSTs
//                                  <agent's base URL>authorize?task=<metadata.a2a.taskId> (the
//                                  runner resolves the Go agent's URL from the demo agents'
//                                  announcement) and needs 204 — when "before-resume" before
//                                  run 2, when "during-resume" once GET /agents/<agent>/threads/
//                                  <threadId> shows run 2 active. Run 2 must stay on that task.
// cancel: {when}                   cancel the run while it streams (POST …/threads/<id>/cancel):
//                                  when "mid-stream" after the first text chunk, when
//                                  "before-first-event" once the bridge shows the run active
//                                  but before the agent said anything. The run must end
//                                  cancelled (1.0.0: cancelled outcome; older: RUN_ERROR
//                                  "cancelled"), the agent must log exactly one CancelTask for
//                                  the task (<agent base URL>cancels), the thread must be free
//                                  with its task CANCELED, and a second cancel must send nothing.
// clients: [...]                   restrict to these client generations (default: all three).
// initialState: {...}              the HttpAgent's initialState (sent as RunAgentInput.state).
// tools: [...]                     RunAgentInput.tools of every run (runAgent({tools})).
// expect may also hold             (any expectation)
//   serverTools: [{name, args,     calls the agent ran itself: each exactly one TOOL_CALL_START
//     result}]                     (marked ag-ui:tool-execution server), ARGS, END, one
//                                  TOOL_CALL_RESULT containing `result`, one tool message
//   streamed: true                 the answer came in at least two TEXT_MESSAGE_CONTENT deltas
//   progress: ["…"]                status texts shown as progress (1.0.0: the a2a.status activity;
//                                  older: CUSTOM a2a.status), never as assistant text
//   never: ["…"]                   texts never shown in assistant messages or interrupt messages
//                                  (every run of the row)
//   state: pattern                 the client's final state matches (lib/harness.mjs matchJSON:
//                                  exact keys, optional()/anyString placeholders); the first
//                                  state event is STATE_SNAPSHOT and deltas stay under /a2a
//   reasoning: ["…"]               thought texts: 1.0.0 shows each once as a reasoning message;
//                                  older clients get them in CUSTOM a2a.reasoning; never in
//                                  assistant text
//   files: [pattern…],             1.0.0 a2a.file activities / older CUSTOM a2a.file values
//   stateFiles?: [pattern…]        match `files` in order, state a2a.files `stateFiles`
//                                  (default: `files`)
// team: {strategy, members,        a team (issue 9; lib/teams.mjs): run 1 has exactly `members`
//   answers?, interrupts?,         taking part, each answer ({member: text}) once in that member's
//   failed?, route?,               messages, the interrupts ({member: expectation as above}) one
//   routeReason?, resume?}         per member (ids <member>:…), `failed` ({member: code}) as
//                                  SUBAGENT_ERROR (1.0) / CUSTOM a2a.member_error (older), the
//                                  router's CUSTOM a2a.route naming `route` (reason matching
//                                  routeReason). resume: {payloads: {member: payload}, answers,
//                                  toolResults?: {member: resultContains}} answers every interrupt
//                                  in one run (1.0.0/0.0.59). Attribution rules: lib/teams.mjs.
// forwardedProps: {...}            runAgent({forwardedProps}) of the first run (team rows).
// followUp: {text, answer}         a second turn on the same thread: run 2 (user says `text`)
//                                  must answer `answer` exactly once.
// Every run of every row also gets one tool-call card per call (lib/harness.mjs toolCardProblems).
// frontendTool: {tool, args,       a frontend tool round trip: run 1 (with `tools`) ends with
//   result, answer, state?}        one pending call of `tool` with `args` (1.0.0: in
//                                  outcome.pendingToolCallIds); then a tool message with
//                                  content `result` and run 2 must answer `answer` exactly once
//                                  and leave the state matching `state` (same task as run 1).
//
// The Go agents' texts come from examples/agents/executors.go (constants and
// *Answer functions there); the JS agents' from agents/texts.mjs. When an
// agent's text changes, change the row here.

import {
  JS_APPROVER_DENIED,
  JS_APPROVER_QUESTION,
  JS_APPROVER_TOOL,
  jsBookedAnswer,
  jsBookingArgs,
  JS_ASKER_QUESTION,
  JS_CHATTER_ANSWER,
  JS_FAILER_ERROR,
  js03StreamerAnswer,
  jsAskerAnswer,
  jsCitySchema,
  jsStreamerAnswer,
} from './agents/texts.mjs';
import { frameworkAgents, frameworkScenarios } from './frameworks/scenarios.mjs';
import { AUTH_REASON, anyString, dataURL, match, optional } from './lib/harness.mjs';

// Mirrors of examples/agents/executors.go.
const go = {
  streamerAnswer: (userText) => `You said: ${userText.replace(/[ .!?]+$/, '') || 'nothing'}. Here is a streamed answer.`,
  narratorAnswer: (userText) => `Here is what I found about “${userText}”: all sources agree.`,
  narratorProgress: ['Looking into it…', 'Checking sources…', 'Writing the answer…'],
  replierAnswer: (userText) => `Hello! You said: ${userText}`,
  weatherAnswer: (city) => `The weather in ${city} is sunny.`,
  chatterAnswer: 'Hello, world',
  cumulativeAnswer: 'The answer is 42.',
  repeaterAnswer: 'The capital of France is Paris.',
  blockingAnswer: 'Done after a long think.',
  filesText: 'Here is your report.',
  failerError: 'upstream LLM quota exceeded',
  rejecterReason: 'I only answer questions about travel.',
  askerQuestion: 'Which city should I check?',
  citySchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  approverTool: 'book_flight',
  approverQuestion: "I'd like to book flight LH123 to Lisbon on 2026-12-24 for 2 passengers. Approve?",
  approverDenied: 'OK, I did not book anything.',
  approverConfirmation: 'ABC123',
  bookingArgs: () => ({ flight: 'LH123', to: 'Lisbon', date: '2026-12-24', passengers: 2 }),
  bookedAnswer: (args) => `Booked ${args.flight} to ${args.to} for ${args.passengers} passengers. Confirmation ABC123.`,
  // rich.go
  dashboardAnswer: (userName) => (userName ? `Dashboard ready for ${userName}.` : 'Dashboard ready.'),
  dashboardArtifacts: () => ({ progress: { step: 3, of: 3, done: true }, rows: [1, 2, 3] }),
  dashboardStatusData: () => ({ phase: 'summarising' }),
  dashboardUI: () => ({ theme: 'dark', highlight: 'rows' }),
  thinkerThoughts: ['Let me think about this…', 'Six times seven is the classic answer.'],
  thinkerAnswer: 'The answer is 42.',
  thinkerChart: { url: 'https://example.com/chart.png', mediaType: 'image/png', name: 'chart.png' },
  thinkerFile: { text: 'hello', mediaType: 'text/plain', name: 'hello.txt' },
  painterTool: 'change_background',
  painterArgs: () => ({ color: 'blue' }),
  painterNoTool: 'I need a change_background tool.',
  painterAnswer: (response) => `Background changed to blue (${typeof response === 'string' ? response : JSON.stringify(response)}).`,
  // signin.go
  signinQuestion: 'Please sign in so I can read your files.',
  signinAnswer: 'Signed in. You have 3 new files.',
  signinDetails: (taskId) => [{ authorize: `/signin/authorize?task=${taskId}`, taskId }],
};

// Mirrors of examples/agents/a2ui.go.
const goA2UI = {
  bookerForm: 'Please fill in the booking form.',
  bookerNoUI: 'I show a booking form to clients that activate A2UI v0.8; tell me your name, the date and how many guests.',
  booked: (c) => `Booked a table for ${c.name} on ${c.date} for ${c.guests} guests.`,
  wizardFirst: 'Step 1 of 2: where do you want to go?',
  wizardSecond: 'Step 2 of 2: how many travellers?',
  wizardDone: (dest, n) => `Your trip to ${dest} for ${n} travellers is planned.`,
  monitorDone: 'The dashboard finished its run.',
  monitorRefreshed: 'The dashboard refreshed at your request.',
  plannerShown: 'Here is your plan.',
  plannerConfirmed: (note) => `Planner confirmed: ${note}.`,
};

const weather = 'What is the weather?';
const booking = 'Book me a flight to Lisbon';
const goAskerExpect = { interrupt: true, question: go.askerQuestion, responseSchema: go.citySchema };
const jsAskerExpect = { interrupt: true, question: JS_ASKER_QUESTION, responseSchema: jsCitySchema() };
const approvalExpect = {
  interrupt: true,
  reason: 'tool_call',
  question: go.approverQuestion,
  tool: go.approverTool,
  args: go.bookingArgs(),
};
const edited = { ...go.bookingArgs(), passengers: 3 };
const files = 'Show my new files';
const signinExpect = { interrupt: true, reason: AUTH_REASON, question: go.signinQuestion, auth: go.signinDetails };
/** A sign-in resume: `when` the harness authorizes (signin's own endpoint, resolved by the runner). */
const signinResume = (when) => ({ payload: { signedIn: true }, answer: go.signinAnswer, authorize: { agent: 'signin', when } });

const INTERRUPT_CLIENTS = ['1.0.0', '0.0.59'];

// Shared state, rich content and frontend tools (the bridge's extension, issue 4).
const emptyList = match('an empty list', (v) => Array.isArray(v) && v.length === 0);
const dashboardUser = { userName: 'Ada', theme: 'light' };
/** The client's whole state after the dashboard run: its own keys untouched, the bridge's under a2a. */
const dashboardState = {
  ...dashboardUser,
  a2a: {
    agent: 'dashboard',
    contextId: anyString,
    task: { id: anyString, state: 'completed', statusText: optional(match('a string', (v) => typeof v === 'string')) },
    artifacts: go.dashboardArtifacts(),
    statusData: go.dashboardStatusData(),
    ui: go.dashboardUI(),
    files: optional(emptyList),
    pendingInterrupts: optional(emptyList),
  },
};
// A file as shown (1.0 activity content, older clients' CUSTOM value) and as
// kept in state a2a.files, which describes inline files without their bytes.
// The bridge adds the A2A artifactId (not in docs/mapping.md's list of fields).
const artifactId = optional(anyString);
const thinkerChart = { artifactId, ...go.thinkerChart };
const thinkerHello = { artifactId, mediaType: go.thinkerFile.mediaType, name: go.thinkerFile.name, size: go.thinkerFile.text.length };
const thinkerFiles = [thinkerChart, { ...thinkerHello, url: dataURL(go.thinkerFile.text) }];
const thinkerStateFiles = [thinkerChart, thinkerHello];
const paintTools = [
  {
    name: go.painterTool,
    description: "Changes the page's background color.",
    parameters: { type: 'object', properties: { color: { type: 'string', description: 'a CSS color' } }, required: ['color'] },
  },
];

const story = 'Tell me about Lisbon';
const search = 'Find the tallest tower';

// Teams (examples/agents/catalog.go Teams(), plus `panel` with a member that
// is down, configured by bridgeTeams below).
const askerInterrupt = { question: go.askerQuestion, responseSchema: go.citySchema };
const approverInterrupt = { reason: 'tool_call', question: go.approverQuestion, tool: go.approverTool, args: go.bookingArgs() };
const weatherAndBooking = 'What is the weather? And book me a flight to Lisbon';
const concierge = { strategy: 'parallel', members: ['asker', 'approver'], interrupts: { asker: askerInterrupt, approver: approverInterrupt } };
const desk = { strategy: 'router' };
/** The code of a member the bridge cannot reach (its card cannot be fetched). */
const OFFLINE_CODE = 'a2a_card_unavailable';

export const scenarios = [
  // Go demo agents (a2a-go), every binding of the streamer.
  { name: 'go-streamer-jsonrpc', agent: 'streamer', text: story, expect: { answer: go.streamerAnswer(story) } },
  { name: 'go-streamer-rest', agent: 'streamer-rest', text: story, expect: { answer: go.streamerAnswer(story) } },
  { name: 'go-streamer-grpc', agent: 'streamer-grpc', text: story, expect: { answer: go.streamerAnswer(story) } },
  { name: 'go-streamer-v03', agent: 'streamer-v03', text: story, expect: { answer: go.streamerAnswer(story) } },
  // Status texts followed by an answer artifact are progress (statusText: auto).
  { name: 'go-narrator', agent: 'narrator', text: search, expect: { answer: go.narratorAnswer(search), progress: go.narratorProgress } },
  { name: 'go-chatter', agent: 'chatter', text: 'Say hello', expect: { answer: go.chatterAnswer } },
  { name: 'go-cumulative', agent: 'cumulative', text: 'What is the answer?', expect: { answer: go.cumulativeAnswer } },
  { name: 'go-repeater', agent: 'repeater', text: 'Capital of France?', expect: { answer: go.repeaterAnswer } },
  { name: 'go-replier', agent: 'replier', text: 'Good morning', expect: { answer: go.replierAnswer('Good morning') } },
  { name: 'go-failer', agent: 'failer', text: 'Summarise this', expect: { error: 'a2a_failed', message: go.failerError } },
  { name: 'go-rejecter', agent: 'rejecter', text: 'Write me a poem', expect: { error: 'a2a_rejected', message: go.rejecterReason } },
  { name: 'go-blocking', agent: 'blocking', text: 'Think hard', expect: { answer: go.blockingAnswer } },
  { name: 'go-files', agent: 'files', text: 'Send the report', expect: { answer: go.filesText } },
  // Interrupts: every client, 0.0.36 included, must accept a run that ends in one.
  { name: 'go-asker', agent: 'asker', text: weather, expect: goAskerExpect },
  { name: 'go-approver', agent: 'approver', text: booking, expect: approvalExpect },
  // Sign-in (AUTH_REQUIRED): the interrupt carries the agent's sign-in details.
  { name: 'go-signin', agent: 'signin', text: files, expect: signinExpect },
  // Resume: the answer goes to the same A2A task, which completes.
  {
    name: 'go-asker-resume',
    agent: 'asker',
    text: weather,
    expect: goAskerExpect,
    resume: { payload: { city: 'Paris' }, answer: go.weatherAnswer('Paris') },
    clients: INTERRUPT_CLIENTS,
  },
  // Tool approval: the bridge shows the approver's proposed call, the interrupt
  // answers it, and the resumed run reports the result on the same toolCallId.
  {
    name: 'go-approver-approve',
    agent: 'approver',
    text: booking,
    expect: approvalExpect,
    resume: {
      payload: { approved: true },
      answer: go.bookedAnswer(go.bookingArgs()),
      toolResult: true,
      resultContains: go.approverConfirmation,
    },
    clients: INTERRUPT_CLIENTS,
  },
  {
    name: 'go-approver-deny',
    agent: 'approver',
    text: booking,
    expect: approvalExpect,
    // A denial is a result too: the bridge reports the decision it sent.
    resume: { payload: { approved: false }, answer: go.approverDenied, toolResult: true, resultContains: '"approved":false' },
    clients: INTERRUPT_CLIENTS,
  },
  {
    name: 'go-approver-edit',
    agent: 'approver',
    text: booking,
    expect: approvalExpect,
    resume: {
      payload: { approved: true, editedArgs: edited },
      answer: go.bookedAnswer(edited),
      toolResult: true,
      resultContains: go.approverConfirmation,
    },
    clients: INTERRUPT_CLIENTS,
  },
  // An agent that never echoes the call's result (as ADK agents do): the
  // resumed run reports the decision the bridge sent, before the answer.
  ...quietApproval('go-quiet-approver', 'quiet-approver', approvalExpect, go.bookingArgs(), go.bookedAnswer, go.approverDenied),
  // Cancel while the agent streams, and before it has said anything.
  { name: 'go-counter-cancel', agent: 'counter', text: 'Count for me', cancel: { when: 'mid-stream' } },
  { name: 'go-latecomer-cancel', agent: 'latecomer', text: 'Count for me', cancel: { when: 'before-first-event' } },
  // Sign-in: the credential arrives out of band (POST <signin base>authorize?task=…,
  // standing in for an OAuth callback) and the agent finishes on its own stream,
  // which the bridge keeps following. after-oob: sign in, then resume — the
  // resumed run shows what happened meanwhile. before-oob: resume, then sign in
  // while the resumed run is open on the bridge.
  {
    name: 'go-signin-after-oob',
    agent: 'signin',
    text: files,
    expect: signinExpect,
    resume: signinResume('before-resume'),
    clients: INTERRUPT_CLIENTS,
  },
  {
    name: 'go-signin-before-oob',
    agent: 'signin',
    text: files,
    expect: signinExpect,
    resume: signinResume('during-resume'),
    clients: INTERRUPT_CLIENTS,
  },
  // Shared state: data artifacts with append, status data, ui-state parts;
  // the client's own keys untouched; the agent reads the client's state.
  {
    name: 'go-dashboard-state',
    agent: 'dashboard',
    text: 'Show my dashboard',
    initialState: dashboardUser,
    expect: { answer: go.dashboardAnswer(dashboardUser.userName), state: dashboardState },
  },
  // Reasoning (thought parts) and files (URL and raw bytes).
  {
    name: 'go-thinker-reasoning-files',
    agent: 'thinker',
    text: 'What is the answer?',
    expect: { answer: go.thinkerAnswer, reasoning: go.thinkerThoughts, files: thinkerFiles, stateFiles: thinkerStateFiles },
  },
  // Frontend tools: the agent asks the frontend to run one, the next run answers.
  {
    name: 'go-painter-frontend-tool',
    agent: 'painter',
    text: 'Make the background blue',
    tools: paintTools,
    frontendTool: {
      tool: go.painterTool,
      args: go.painterArgs(),
      result: 'ok',
      answer: go.painterAnswer('ok'),
      // The task completed with no closing message: no statusText left (docs/mapping.md: it is the
      // message of the state the task is in, so the question goes once the task moves on).
      state: { a2a: { agent: 'painter', contextId: anyString, task: { id: anyString, state: 'completed' }, pendingInterrupts: optional(emptyList) } },
    },
  },
  { name: 'go-painter-no-tools', agent: 'painter', text: 'Make the background blue', expect: { answer: go.painterNoTool } },

  // Generative UI (A2UI, issue 21; lib/a2ui.mjs): the Go agents' surfaces as
  // a2ui-surface activities (1.0) or CUSTOM a2ui events (older clients, under
  // a2ui: on), and the user's actions (forwardedProps.a2uiAction) back.
  ...a2uiRows(),

  // Teams: several agents behind one endpoint, every event attributed to its
  // member (1.0: SUBAGENT_* and subagentRunId; older: TEXT_MESSAGE_START.name,
  // members one after the other), the journal replay attributed the same.
  // parallel: both members interrupt; one resume answers both.
  { name: 'team-concierge-parallel', agent: 'concierge', text: weatherAndBooking, team: concierge },
  {
    name: 'team-concierge-parallel-resume',
    agent: 'concierge',
    text: weatherAndBooking,
    team: {
      ...concierge,
      resume: {
        payloads: { asker: { city: 'Lisbon' }, approver: { approved: true } },
        answers: { asker: go.weatherAnswer('Lisbon'), approver: go.bookedAnswer(go.bookingArgs()) },
        toolResults: { approver: go.approverConfirmation },
      },
    },
    clients: INTERRUPT_CLIENTS,
  },
  // router: by the members' card skills, or the member forwardedProps.agent names.
  { name: 'team-desk-router-weather', agent: 'desk', text: weather, team: { ...desk, members: ['asker'], route: 'asker', interrupts: { asker: askerInterrupt } } },
  {
    name: 'team-desk-router-booking',
    agent: 'desk',
    text: booking,
    team: { ...desk, members: ['approver'], route: 'approver', interrupts: { approver: approverInterrupt } },
  },
  {
    name: 'team-desk-router-forwarded',
    agent: 'desk',
    text: weather, // the skills would pick the asker
    forwardedProps: { agent: 'streamer' },
    team: { ...desk, members: ['streamer'], route: 'streamer', routeReason: /forwardedProps/, answers: { streamer: go.streamerAnswer(weather) } },
  },
  // sequential: the narrator's answer is the streamer's input.
  {
    name: 'team-pipeline-sequential',
    agent: 'pipeline',
    text: search,
    team: {
      strategy: 'sequential',
      members: ['narrator', 'streamer'],
      answers: { narrator: go.narratorAnswer(search), streamer: go.streamerAnswer(go.narratorAnswer(search)) },
    },
  },
  // A member that is down does not sink the team's run.
  {
    name: 'team-panel-member-down',
    agent: 'panel',
    text: story,
    team: {
      strategy: 'parallel',
      members: ['streamer', 'narrator', 'offline'],
      answers: { streamer: go.streamerAnswer(story), narrator: go.narratorAnswer(story) },
      failed: { offline: OFFLINE_CODE },
    },
  },

  // @a2a-js/sdk 1.3.0 agents (A2A v1.0).
  { name: 'js-streamer-jsonrpc', agent: 'js-streamer', text: story, expect: { answer: jsStreamerAnswer(story) } },
  { name: 'js-streamer-grpc', agent: 'js-streamer-grpc', text: story, expect: { answer: jsStreamerAnswer(story) } },
  { name: 'js-chatter', agent: 'js-chatter', text: 'Say hello', expect: { answer: JS_CHATTER_ANSWER } },
  { name: 'js-failer', agent: 'js-failer', text: 'Summarise this', expect: { error: 'a2a_failed', message: JS_FAILER_ERROR } },
  { name: 'js-asker', agent: 'js-asker', text: weather, expect: jsAskerExpect },
  {
    name: 'js-asker-resume',
    agent: 'js-asker',
    text: weather,
    expect: jsAskerExpect,
    resume: { payload: { city: 'Paris' }, answer: jsAskerAnswer('Paris') },
    clients: INTERRUPT_CLIENTS,
  },

  { name: 'js-counter-cancel', agent: 'js-counter', text: 'Count for me', cancel: { when: 'mid-stream' } },
  ...quietApproval(
    'js-quiet-approver',
    'js-quiet-approver',
    { interrupt: true, reason: 'tool_call', question: JS_APPROVER_QUESTION, tool: JS_APPROVER_TOOL, args: jsBookingArgs() },
    jsBookingArgs(),
    jsBookedAnswer,
    JS_APPROVER_DENIED,
  ),

  // @a2a-js/sdk 0.3.14 agents (A2A v0.3 JSON-RPC).
  { name: 'js03-streamer', agent: 'js03-streamer', text: story, expect: { answer: js03StreamerAnswer(story) } },
  { name: 'js03-asker', agent: 'js03-asker', text: weather, expect: jsAskerExpect },
  {
    name: 'js03-asker-resume',
    agent: 'js03-asker',
    text: weather,
    expect: jsAskerExpect,
    resume: { payload: { city: 'Paris' }, answer: jsAskerAnswer('Paris') },
    clients: INTERRUPT_CLIENTS,
  },

  // The same agents offering ONLY HTTP+JSON (the 0.3.14 REST server), through
  // a2a-go v2.4.0's v0.3 REST client: streaming, interrupt, resume.
  { name: 'js03rest-streamer', agent: 'js03rest-streamer', text: story, expect: { answer: js03StreamerAnswer(story) } },
  {
    name: 'js03rest-asker-resume',
    agent: 'js03rest-asker',
    text: weather,
    // The 0.3.14 REST server drops a part's metadata on the wire (the same
    // agent over JSON-RPC keeps it; a2a-go's v0.3 REST client keeps what it
    // gets), so the schema's media type marker is lost and the schema stays
    // plain data in state: no responseSchema on this binding.
    expect: { interrupt: true, question: JS_ASKER_QUESTION },
    resume: { payload: { city: 'Paris' }, answer: jsAskerAnswer('Paris') },
    clients: INTERRUPT_CLIENTS,
  },

  // Agents built with Google ADK for JS and Mastra (issue 17): frameworks/scenarios.mjs.
  ...frameworkScenarios,
];

/**
 * quietApproval is the approve, deny and edit rows of an agent that never
 * echoes the call's result: each resumed run must hold exactly one
 * TOOL_CALL_RESULT, before the answer, carrying the decision the bridge sent.
 */
function quietApproval(prefix, agent, expect, args, bookedAnswer, denied) {
  const more = { ...args, passengers: 3 };
  return [
    ['approve', { approved: true }, bookedAnswer(args), '"approved":true'],
    ['deny', { approved: false }, denied, '"approved":false'],
    ['edit', { approved: true, editedArgs: more }, bookedAnswer(more), '"passengers":3'],
  ].map(([what, payload, answer, resultContains]) => ({
    name: `${prefix}-${what}`,
    agent,
    text: booking,
    expect,
    resume: { payload, answer, toolResult: true, resultContains },
    clients: INTERRUPT_CLIENTS,
  }));
}


function a2uiRows() {
  const form = { name: 'Ada', date: '2026-12-31', guests: 4, terrace: true };
  // The form CopilotKit's renderer sends (v0.8 userAction); the bridge turns it into the agent's version.
  const book = { userAction: { name: 'book', surfaceId: 'booking', sourceComponentId: 'book', context: form } };
  const bookingSteps = [
    { expect: { answer: goA2UI.bookerForm }, surface: ['"beginRendering"', '"TextField"', '"surfaceId":"booking"'] },
    { action: book, expect: { answer: goA2UI.booked(form) }, surface: [`Booked a table for ${form.name}`] },
  ];
  const v09 = (name, context) => ({ version: 'v0.9', action: { name, surfaceId: 'wizard', sourceComponentId: name, timestamp: '2026-12-04T02:00:00Z', context } });
  return [
    { name: 'go-booker-a2ui', agent: 'booker', text: 'A table please', a2ui: { steps: bookingSteps }, clients: ['1.0.0'] },
    // a2ui: auto activates A2UI for 1.0 clients only: the others get the agent's text answer.
    { name: 'go-booker-a2ui-auto-legacy', agent: 'booker', text: 'A table please', a2ui: { steps: [{ expect: { answer: goA2UI.bookerNoUI } }] }, clients: ['0.0.59', '0.0.36'] },
    { name: 'go-booker-a2ui-on-legacy', agent: 'booker-on', text: 'A table please', a2ui: { steps: bookingSteps, custom: true }, clients: ['0.0.59', '0.0.36'] },
    {
      name: 'go-wizard-a2ui',
      agent: 'wizard',
      text: 'Plan a trip',
      a2ui: {
        steps: [
          { expect: { interrupt: true, question: goA2UI.wizardFirst }, surface: ['"createSurface"', '"destination"'] },
          { action: v09('next', { destination: 'Lisbon' }), expect: { interrupt: true, question: goA2UI.wizardSecond }, surface: ['Plan a trip to Lisbon (2/2)'] },
          { action: v09('finish', { travellers: 3 }), expect: { answer: goA2UI.wizardDone('Lisbon', 3) }, surface: ['"deleteSurface"'] },
        ],
      },
      clients: ['1.0.0'],
    },
    // A2UI v1.0 (the planner's card lists only v1.0): the bridge sends a2uiRendererCapabilities
    // (without them the agent shows no UI), and shows both parts, one marked by mediaType
    // alone, one by metadata.mimeType beside mediaType application/json; the action reaches it.
    {
      name: 'go-planner-a2ui-v1.0',
      agent: 'planner',
      text: 'Plan it',
      a2ui: {
        steps: [
          { expect: { answer: goA2UI.plannerShown }, surface: ['"version":"v1.0"', '"createSurface"', '"window seat"'] },
          { action: { version: 'v1.0', action: { name: 'confirm', surfaceId: 'planner', sourceComponentId: 'confirm', timestamp: '2026-12-06T05:00:00Z', context: { note: 'aisle' } } }, expect: { answer: goA2UI.plannerConfirmed('aisle') } },
        ],
      },
      clients: ['1.0.0'],
    },
    // A client before 1.0 that declares what it renders (a2uiClientCapabilities, as CopilotKit's
    // example does) gets activities under a2ui: auto; every change is a replacing snapshot.
    {
      name: 'go-monitor-a2ui-declared',
      agent: 'monitor',
      text: 'Show the dashboard',
      forwardedProps: { a2uiClientCapabilities: { 'v0.9': { supportedCatalogIds: ['https://a2ui.org/specification/v0_9/basic_catalog.json'] } } },
      a2ui: {
        activities: true,
        steps: [
          { expect: { answer: goA2UI.monitorDone }, surface: ['load 50%', '"value":"done"', '"catalogId":"https://a2ui.org/specification/v0_9/basic_catalog.json"'] },
          { action: { version: 'v0.9', action: { name: 'refresh', surfaceId: 'monitor', sourceComponentId: 'refresh', context: { status: 'done' } } }, expect: { answer: goA2UI.monitorRefreshed }, surface: ['"value":"refreshed"'] },
        ],
      },
      clients: ['0.0.59'],
    },
    { name: 'go-monitor-a2ui', agent: 'monitor', text: 'Show the dashboard', a2ui: { steps: [{ expect: { answer: goA2UI.monitorDone }, surface: ['load 50%', '500 requests', '"value":"done"'] }] }, clients: ['1.0.0'] },
  ];
}

/**
 * bridgeAgents lists the bridge config's agents from the agent processes'
 * announcements: every Go agent under its own name plus the streamer pinned
 * to each binding, every JS agent under its own name, and the framework
 * agents (frameworks/scenarios.mjs frameworkAgents).
 */
export function bridgeAgents(goAgents, jsAgents, fwAgents = {}) {
  const list = [];
  for (const [name, a] of Object.entries(goAgents)) list.push({ name, url: a.url });
  const s = goAgents.streamer;
  if (s) {
    list.push({ name: 'streamer-grpc', url: s.url, transports: ['GRPC'] });
    list.push({ name: 'streamer-rest', url: s.url, transports: ['HTTP+JSON'] });
    if (s.urlV03) list.push({ name: 'streamer-v03', url: s.urlV03 });
  }
  for (const [name, a] of Object.entries(jsAgents)) {
    list.push(name.endsWith('-grpc') ? { name, url: a.url, transports: ['GRPC'] } : { name, url: a.url });
  }
  // The booking form under a2ui: on, for the clients before 1.0 (CUSTOM a2ui).
  if (goAgents.booker) list.push({ name: 'booker-on', url: goAgents.booker.url, a2ui: 'on' });
  // Nothing listens on the discard port: a member that is down (team panel).
  if (s) list.push({ name: 'offline', url: 'http://127.0.0.1:9/' });
  list.push(...frameworkAgents(fwAgents));
  return list;
}

/**
 * bridgeTeams lists the bridge config's teams: the ones the Go demo agents
 * announce (examples/agents/catalog.go Teams()), and `panel`, a parallel team
 * whose member `offline` cannot be reached.
 */
export function bridgeTeams(goTeams, agents) {
  const names = new Set(agents.map((a) => a.name));
  const list = (goTeams ?? []).map(({ name, strategy, members }) => ({ name, strategy, members }));
  const panel = { name: 'panel', strategy: 'parallel', members: ['streamer', 'narrator', 'offline'] };
  if (panel.members.every((m) => names.has(m))) list.push(panel);
  return list.filter((t) => t.members.every((m) => names.has(m)));
}
