// Package mapping translates between A2A and AG-UI without doing any I/O.
//
// A [Translator] is a per-run state machine: it is fed the A2A events of one
// run (a Task, status and artifact updates, or a plain Message reply) and
// returns the AG-UI events to write, closing what is open before it opens
// anything else so that the output is valid for every generation of the
// @ag-ui/client verifier (AGUI-PROTOCOL.md §6). It owns the bookkeeping that
// makes an agent's answer appear exactly once, whether the agent answers in
// artifacts, in status messages (incremental or cumulative), in both, or with
// a Message reply.
//
// A [Team] produces the run of several agents: its own run-level events
// around one plain Translator per member, nested in the team's run
// (Options.ViewPath). The Translator knows nothing of teams: a [Member]
// decorates its output as the member's (subagentRunId, the member's name,
// SUBAGENT_* events in place of RUN_STARTED and the terminal event).
//
// A2UI parts (a2ui.go) become one a2ui-surface activity per surface (CUSTOM
// a2ui for clients that take no activities), never state or text; the
// user's actions on a surface go back as A2UI parts in the agent's version
// (a2ui_input.go).
//
// Identifiers are name-based UUIDs derived from the thread, run, task,
// artifact and a counter, and timestamps come from an injected clock, so the
// same input always produces byte-identical output.
//
// The package imports only the agui and a2a type packages: no network, no
// clock, no store.
package mapping
