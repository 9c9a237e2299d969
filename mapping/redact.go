package mapping

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode"

	"github.com/a2a-agui-bridge/bridge/agui"
)

// Redacted replaces the value of a sensitive key.
const Redacted = "[REDACTED]"

// What is redacted, and where (issue 33 item 7). Every object an agent or
// a client supplies passes Redact once on its way to a client, the journal,
// a thread's snapshot or its record:
//
//   - the bridge's part of the shared state (artifact data, status data,
//     UI state), as it merges (state.go);
//   - interrupts' metadata (an AUTH_REQUIRED part's
//     credentials), as the interrupt is made, so RUN_FINISHED, the thread
//     record and its snapshot's pendingInterrupts see the same;
//   - the arguments of tool calls the agent executes and results in
//     TOOL_CALL_ARGS, TOOL_CALL_RESULT and every message's toolCalls (the
//     client's own messages included) in MESSAGES_SNAPSHOT, the record and
//     the snapshot;
//   - activities (A2UI data models, files), CUSTOM and RAW values.
//
// Not rewritten: the arguments of a call to one of the client's own tools
// (the client executes it with them), the client's own state keys (the client holds them; a
// snapshot hands them back as sent), text (it is not an object), and what
// the bridge sends to the agent (a tool call's arguments go back as the
// agent wrote them). Logs carry none of these payloads.
//
// A key is sensitive when, case and separators ignored, it is one of keys
// or ends with one as its last words: with "secret" and "token",
// client_secret, clientSecret and accessToken are, max_tokens and
// tokenCount are not. In A2A's A2UI data models a value's key can be data
// too: a v0.8 entry {key, value…} with a sensitive key and a v0.9
// {path, value} whose path ends in one have their values redacted.

// Redact returns v (plain JSON: maps, slices, scalars) with the value of
// every sensitive object key replaced by Redacted, at any depth. v itself
// is not modified; unchanged subtrees are shared.
func Redact(v any, keys []string) any {
	if len(keys) == 0 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		entry := false // an A2UI v0.8 {key, value…} or v0.9 {path, value}
		if k, ok := x["key"].(string); ok && sensitive(k, keys) {
			entry = true
		} else if p, ok := x["path"].(string); ok && sensitive(p[strings.LastIndexByte(p, '/')+1:], keys) {
			entry = true
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			switch {
			case sensitive(k, keys), entry && strings.HasPrefix(k, "value"):
				out[k] = Redacted
			default:
				out[k] = Redact(e, keys)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Redact(e, keys)
		}
		return out
	}
	return v
}

// sensitive says whether object key k names a secret (see above).
func sensitive(k string, keys []string) bool {
	if k == "" {
		return false
	}
	// norm is k lowercased without separators; start marks where each of
	// its words begins.
	norm := make([]byte, 0, len(k))
	start := make([]bool, 0, len(k))
	prevLower, boundary := false, true
	for _, r := range k {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			boundary = true
			continue
		}
		up := unicode.IsUpper(r)
		if up && prevLower {
			boundary = true
		}
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
		for _, b := range []byte(string(unicode.ToLower(r))) {
			norm = append(norm, b)
			start = append(start, boundary)
			boundary = false
		}
	}
	for _, s := range keys {
		ns := normKey(s)
		if ns == "" || len(ns) > len(norm) {
			continue
		}
		at := len(norm) - len(ns)
		if string(norm[at:]) == ns && start[at] {
			return true
		}
	}
	return false
}

func normKey(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// mayHold says whether raw JSON text could hold a sensitive key, so that
// text which cannot is passed on without being decoded.
func mayHold(raw []byte, keys []string) bool {
	if len(keys) == 0 || len(raw) == 0 {
		return false
	}
	lower := bytes.ToLower(raw)
	for _, s := range keys {
		// The key's last word is in the text whatever its separators.
		w := strings.ToLower(s)
		if i := strings.LastIndexAny(w, "_-. "); i >= 0 {
			w = w[i+1:]
		}
		if w != "" && bytes.Contains(lower, []byte(w)) {
			return true
		}
	}
	return false
}

// redactRaw is Redact over JSON text; text that is not JSON is returned as
// it is.
func redactRaw(raw json.RawMessage, keys []string) json.RawMessage {
	if !mayHold(raw, keys) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	b, err := json.Marshal(Redact(v, keys))
	if err != nil {
		return raw
	}
	return b
}

func redactMap(m map[string]any, keys []string) map[string]any {
	if m == nil || len(keys) == 0 {
		return m
	}
	r, _ := Redact(normalizeJSON(m), keys).(map[string]any)
	return r
}

// redactEvent applies Redact to what an event carries from an agent or a
// client, in place (the translator's events are its own). State events
// are not touched: the view is redacted as it merges, and the client's
// own keys are the client's.
func redactEvent(e agui.Event, keys []string) {
	if len(keys) == 0 {
		return
	}
	switch e := e.(type) {
	case *agui.ToolCallArgs:
		// A call to the client's own tool (no server marker) is the
		// client's to execute: it needs the arguments as they are.
		if e.Metadata[ToolExecutionKey] == "server" {
			e.Delta = string(redactRaw(json.RawMessage(e.Delta), keys))
		}
	case *agui.ToolCallResult:
		e.Content = string(redactRaw(json.RawMessage(e.Content), keys))
	// MESSAGES_SNAPSHOT is built from Conversation, which is redacted.
	case *agui.ActivitySnapshot:
		e.Content = redactMap(e.Content, keys)
	case *agui.ActivityDelta:
		for i := range e.Patch {
			e.Patch[i].Value = redactRaw(e.Patch[i].Value, keys)
			if last := e.Patch[i].Path[strings.LastIndexByte(e.Patch[i].Path, '/')+1:]; len(e.Patch[i].Value) > 0 && sensitive(last, keys) {
				e.Patch[i].Value = json.RawMessage(`"` + Redacted + `"`)
			}
		}
	case *agui.Custom:
		e.Value = redactRaw(e.Value, keys)
	case *agui.Raw:
		e.Event = redactRaw(e.Event, keys)
	case *agui.RunFinished:
		e.Result = redactRaw(e.Result, keys)
		if e.Outcome != nil {
			e.Outcome.Interrupts = redactInterrupts(e.Outcome.Interrupts, keys)
		}
	}
}

// redactInterrupt redacts an interrupt's metadata. Its response schema is
// left whole: a property named password there is a field the user fills,
// and the resume is validated against it.
func redactInterrupt(in agui.Interrupt, keys []string) agui.Interrupt {
	in.Metadata = redactMap(in.Metadata, keys)
	return in
}

func redactInterrupts(ins []agui.Interrupt, keys []string) []agui.Interrupt {
	if len(keys) == 0 || len(ins) == 0 {
		return ins
	}
	out := make([]agui.Interrupt, len(ins))
	for i, in := range ins {
		out[i] = redactInterrupt(in, keys)
	}
	return out
}

// redactMessages returns msgs with every tool call's arguments (but those
// of calls in frontend: the client's own tools), a tool message's JSON
// content and metadata redacted; msgs itself (often the client's input) is
// not modified.
func redactMessages(msgs []agui.Message, keys []string, frontend []ToolCallRef) []agui.Message {
	if len(keys) == 0 || len(msgs) == 0 {
		return msgs
	}
	out := make([]agui.Message, len(msgs))
	for i, m := range msgs {
		if len(m.ToolCalls) > 0 {
			calls := make([]agui.ToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				if slices.ContainsFunc(frontend, func(r ToolCallRef) bool { return r.ToolCallID == c.ID }) {
					calls[j] = c
					continue
				}
				c.Function.Arguments = string(redactRaw(json.RawMessage(c.Function.Arguments), keys))
				c.Metadata = redactMap(c.Metadata, keys)
				calls[j] = c
			}
			m.ToolCalls = calls
		}
		if m.Role == agui.RoleTool && m.Content != nil && m.Content.Kind == agui.ContentText {
			if r := string(redactRaw(json.RawMessage(m.Content.Text), keys)); r != m.Content.Text {
				m.Content = agui.TextContent(r)
			}
		}
		m.Metadata = redactMap(m.Metadata, keys)
		out[i] = m
	}
	return out
}
