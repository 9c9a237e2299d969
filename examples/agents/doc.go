// Package agents holds the demo A2A agents that `bridge demo`, the Go
// end-to-end tests and the Node conformance suite talk to.
//
// Each agent is an [a2asrv.AgentExecutor] that reproduces one way real agents
// report their answer: streamed artifact chunks ([Streamer]), progress in
// status messages plus one final artifact ([Narrator], the ADK/Strands style),
// text only in status messages, incremental ([Chatter]) or cumulative
// ([Cumulative]), status text repeated by an artifact ([Repeater]), a bare
// message with no task ([Replier]), failure ([Failer]), rejection
// ([Rejecter]), a non-streaming agent ([Blocking]), a two-turn
// INPUT_REQUIRED conversation ([Asker]), a tool call that waits for the
// user's approval in ADK's long-running function-call convention
// ([Approver]), an agent that only stops when canceled ([Slow]), data/file
// artifacts ([Files]), structured state for the AG-UI shared state
// ([Dashboard]), reasoning and files ([Thinker]) and an AG-UI frontend tool
// call ([Painter]). The doc comment of each type lists the exact events it
// emits. [Loader], outside the demo catalog, streams as many chunks as a load
// test asks for, back to back or slowly (cmd/bridge-bench); [Endless], also
// outside it, is the hostile agent of issue 20: 1 KiB chunks appended to one
// artifact without end (cmd/bridge-soak -abuse).
//
// [Dashboard], [Thinker] and [Painter] declare the bridge's A2A extension
// ([ExtensionURI]) in their cards; [Dashboard] and [Painter] read the
// frontend's state and tools from it when a request activates it.
//
// [Booker] (A2UI v0.8), [Monitor] and [Wizard] (A2UI v0.9) and [Planner]
// (A2UI v1.0) list the A2UI extension in their cards and send surfaces only
// when a request activates it: a booking form whose action books, a live
// dashboard updated through its data model (and refreshed by its button), a
// two-step wizard that waits in INPUT_REQUIRED for each step's action, and a
// planning card in two parts marked the two ways agents mark A2UI.
//
// Every agent that uses a task publishes it first with [a2a.NewSubmittedTask]
// (the a2asrv execution rules require a Task or a single Message as the first
// event), stops as soon as its context is done, and answers CancelTask with a
// CANCELED status update.
//
// [Start] serves all of them from one process: one HTTP listener carries the
// agent cards, JSON-RPC, HTTP+JSON and v0.3 JSON-RPC for every agent under a
// path prefix of its name, and each agent gets its own gRPC listener, because
// a gRPC endpoint in a card is a bare host:port and cannot carry a path.
package agents
