// Package errcode is the bridge's one table of public error codes: the
// "code" of the JSON error body answered before a run's stream starts
// ({"error": {"code", "message"}}) and of RUN_ERROR (or SUBAGENT_ERROR)
// after, with the HTTP status of each code that can be answered before a
// stream. Clients and external tests depend on these strings
// (docs/DESIGN.md), so each is written here once: package agui names the
// bridge's own codes through it, package a2a's Classify the codes of
// failed A2A calls, and the server reads the same constants when it tells
// a failure of the agent from one of its caller. It is a leaf: it imports
// only net/http, and knows neither protocol.
package errcode
