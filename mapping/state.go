package mapping

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// MetadataKey namespaces the bridge's own metadata on events (the "ag-ui"
// key is reserved for the protocol, AGUI-PROTOCOL.md §2.10).
const MetadataKey = "a2a-bridge"

// view is the part of the shared state the bridge owns (under StateKey):
//
//	agent, contextId, task {id, state, statusText}, artifacts {artifactId: data},
//	statusData, ui, files [...], pendingInterrupts [...]
//
// Every change goes through put, del or appendTo (viewedit.go), which
// change doc in place, record the RFC 6902 operation the client needs and
// keep the document's encoded size current. So an event costs work in
// proportion to what it carries, never to the whole state: marshalling and
// diffing the whole view on every event (jsondiff) cost ~220 s of CPU for
// 20,000 one-key updates beside a 190 KB artifact, and shallow-merging by
// copying each member cost minutes for one event of 100,000 data parts
// (issue 33, items 1 and 2).
type view struct {
	doc map[string]any
	// size mirrors doc's containers with their encoded sizes.
	size *sized
	// ops are the changes since the client last saw the view, in order.
	ops []agui.PatchOp
	// shown says the client has the view (a snapshot or whole-view delta
	// went out, or a restored journal holds it): until then a change
	// cannot go as a delta.
	shown bool
	// base is the encoded size of the client's state without the
	// bridge's key, learned once (-1: not yet).
	base int
}

func (t *Translator) stateKey() string {
	if t.opt.StateKey != "" {
		return t.opt.StateKey
	}
	return StateKey
}

// initView starts the run's view from the thread's last one: the agent's
// UI keys and the current task's data survive between runs.
func (t *Translator) initView() {
	t.view.doc = map[string]any{}
	if len(t.opt.PreviousView) > 0 {
		var prev map[string]any
		if err := json.Unmarshal(t.opt.PreviousView, &prev); err == nil && prev != nil {
			t.view.doc = prev
		}
	}
	t.view.doc["agent"] = t.opt.Agent
	delete(t.view.doc, "pendingInterrupts")
	t.view.size = sizeOf(t.view.doc)
	t.view.base = -1
	// The run's own task is learned from the agent, never assumed from the
	// previous run (timeouts and recovery must not act on an old task).
}

func str(v any) string { s, _ := v.(string); return s }

// setView changes one top-level member of the view.
func (t *Translator) setView(key string, value any) {
	t.put([]string{key}, value)
}

// noteTask records the task's identity, state and status text in the view;
// a new task starts with no artifacts, status data or files. It marks the view changed
// only when something did, since every status update passes here.
func (t *Translator) noteTask(statusText *string) {
	if t.taskID == "" {
		return
	}
	task, _ := t.view.doc["task"].(map[string]any)
	fresh := task == nil || str(task["id"]) != string(t.taskID)
	state := ""
	if t.state != "" {
		state = stepName(t.state)
	}
	moved := state != "" && task["state"] != state
	_, hasText := task["statusText"]
	if !fresh && !moved && (statusText == nil || task["statusText"] == *statusText) &&
		(t.contextID == "" || t.view.doc["contextId"] == t.contextID) {
		return
	}
	if t.contextID != "" && t.view.doc["contextId"] != t.contextID {
		t.setView("contextId", t.contextID)
	}
	if fresh {
		task = map[string]any{"id": string(t.taskID)}
		t.del([]string{"artifacts"})
		t.del([]string{"statusData"})
		t.del([]string{"files"})
		if state != "" {
			task["state"] = state
		}
		if statusText != nil {
			task["statusText"] = *statusText
		}
		t.setView("task", task)
	} else {
		// Member by member, so the delta names only what changed.
		if state != "" && task["state"] != state {
			t.put([]string{"task", "state"}, state)
		}
		switch {
		case statusText != nil:
			if task["statusText"] != *statusText {
				t.put([]string{"task", "statusText"}, *statusText)
			}
		case moved && hasText:
			// statusText explains the state the task is in: a new state
			// without a message has none.
			t.del([]string{"task", "statusText"})
		}
	}
}

// putArtifactData records a data artifact's value under its id. Appended,
// an object merges its keys into the artifact's and an array extends the
// artifact's; anything else replaces it. Each key or element is one
// operation on the view, so an append costs what it carries.
func (t *Translator) putArtifactData(id a2a.ArtifactID, value any, appendData bool) {
	if t.stateFull() {
		return
	}
	value = Redact(normalizeJSON(value), t.opt.RedactKeys)
	arts, ok := t.view.doc["artifacts"].(map[string]any)
	if !ok {
		t.put([]string{"artifacts"}, map[string]any{string(id): value})
		return
	}
	path := []string{"artifacts", string(id)}
	old, had := arts[string(id)]
	if !appendData || !had || old == nil {
		t.put(path, value)
		return
	}
	switch old.(type) {
	case map[string]any:
		if n, ok := value.(map[string]any); ok {
			t.putMembers(path, n)
			return
		}
	case []any:
		if n, ok := value.([]any); ok {
			t.appendTo(path, n)
			return
		}
	}
	t.put(path, value)
}

// mergeInto shallow-merges an object into the view member key (statusData,
// ui); a non-object replaces it.
func (t *Translator) mergeInto(key string, value any) {
	if t.stateFull() {
		return
	}
	value = Redact(normalizeJSON(value), t.opt.RedactKeys)
	n, isObj := value.(map[string]any)
	if _, oldObj := t.view.doc[key].(map[string]any); isObj && oldObj {
		t.putMembers([]string{key}, n)
		return
	}
	t.put([]string{key}, value)
}

// putMembers sets each member of m in the object at path, in key order so
// the deltas are deterministic.
func (t *Translator) putMembers(path []string, m map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if t.stateFull() {
			return
		}
		t.put(append(slices.Clip(path), k), m[k])
	}
}

func (t *Translator) addFile(f map[string]any) {
	if _, ok := t.view.doc["files"].([]any); !ok {
		t.put([]string{"files"}, []any{f})
		return
	}
	t.appendTo([]string{"files"}, []any{f})
}

// normalizeJSON turns any Go value into its plain JSON form (maps, slices,
// float64, string, bool, nil), so diffs and merges compare like with like.
func normalizeJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil
	}
	return out
}

// stateSnapshot is the full shared state: the client's own keys as the
// request carried them, and the bridge's key replaced by the view. A state
// that is not an object cannot hold the bridge's key and is replaced.
func (t *Translator) stateSnapshot() json.RawMessage {
	return sharedState(t.opt.Input, t.stateKey(), t.view.doc)
}

// sharedState is the client's state as the request carried it with key set
// to doc. A client state that is not an object cannot hold the key and is
// replaced.
func sharedState(in *agui.RunAgentInput, key string, doc any) json.RawMessage {
	state := map[string]any{}
	if in != nil && len(in.State) > 0 {
		var client map[string]any
		dec := json.NewDecoder(bytes.NewReader(in.State))
		dec.UseNumber()
		if err := dec.Decode(&client); err == nil && client != nil {
			state = client
		}
	}
	state[key] = doc
	b, err := json.Marshal(state)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// emitSnapshot writes STATE_SNAPSHOT and makes the view current.
func (t *Translator) emitSnapshot(out []agui.Event) []agui.Event {
	t.viewShown()
	return t.emit(out, &agui.StateSnapshot{Base: agui.Base{Metadata: t.stateMeta()}, Snapshot: t.stateSnapshot()})
}

// emitWholeView writes the whole view with a new state version: a
// STATE_SNAPSHOT, or for a nested run (Options.ViewPath), which cannot
// snapshot the enclosing run's state, the view in place as a STATE_DELTA.
func (t *Translator) emitWholeView(out []agui.Event) []agui.Event {
	t.stateVersion++
	if t.opt.ViewPath == "" {
		return t.emitSnapshot(out)
	}
	t.viewShown()
	doc, _ := json.Marshal(t.view.doc)
	return t.emit(out, &agui.StateDelta{Base: agui.Base{Metadata: t.stateMeta()},
		Delta: []agui.PatchOp{{Op: "add", Path: t.opt.ViewPath, Value: doc}}})
}

// viewShown records that the client now holds the whole view.
func (t *Translator) viewShown() {
	t.view.ops = t.view.ops[:0]
	t.view.shown = true
}

func (t *Translator) stateMeta() map[string]any {
	return map[string]any{MetadataKey: map[string]any{"stateVersion": t.stateVersion}}
}

// syncState writes what changed in the view since the client last saw it
// as one STATE_DELTA (RFC 6902: the operations put, del and appendTo
// recorded), only under the bridge's key. Each delta bumps the state
// version carried in its metadata, so a client can tell it missed one.
func (t *Translator) syncState(out []agui.Event) []agui.Event {
	if len(t.view.ops) == 0 || t.done || (t.open != nil && !t.opt.V1) {
		// ≤0.0.36 clients allow nothing inside an open text message: the
		// change goes out when it closes.
		return out
	}
	if !t.view.shown {
		return t.emitWholeView(out)
	}
	prefix := "/" + escapePointer(t.stateKey())
	if t.opt.ViewPath != "" {
		prefix = t.opt.ViewPath
	}
	ops := make([]agui.PatchOp, len(t.view.ops))
	for i, op := range t.view.ops {
		op.Path = prefix + op.Path
		ops[i] = op
	}
	t.view.ops = t.view.ops[:0]
	t.stateVersion++
	return t.emit(out, &agui.StateDelta{Base: agui.Base{Metadata: t.stateMeta()}, Delta: ops})
}

// escapePointer escapes a key as one RFC 6901 reference token.
func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return pointerEscaper.Replace(s)
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// StateVersion is the version of the shared state after this run's last
// snapshot or delta.
func (t *Translator) StateVersion() int64 { return t.stateVersion }

// View is the bridge's part of the shared state as the run left it, for
// the thread record and the next run.
func (t *Translator) View() json.RawMessage {
	b, err := json.Marshal(t.view.doc)
	if err != nil {
		return nil
	}
	return b
}
