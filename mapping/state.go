package mapping

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"

	"github.com/wI2L/jsondiff"

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
// It is rebuilt into JSON only when something in it changed.
type view struct {
	doc   map[string]any
	dirty bool
	// sent is the JSON of doc as the client last saw it.
	sent []byte
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
	// The run's own task is learned from the agent, never assumed from the
	// previous run (timeouts and recovery must not act on an old task).
}

func str(v any) string { s, _ := v.(string); return s }

// setView changes one top-level member of the view.
func (t *Translator) setView(key string, value any) {
	t.view.doc[key] = value
	t.view.dirty = true
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
	if fresh {
		task = map[string]any{"id": string(t.taskID)}
		delete(t.view.doc, "artifacts")
		delete(t.view.doc, "statusData")
		delete(t.view.doc, "files")
	} else {
		task = maps.Clone(task)
	}
	if state != "" {
		task["state"] = state
	}
	switch {
	case statusText != nil:
		task["statusText"] = *statusText
	case moved && hasText:
		// statusText explains the state the task is in: a new state
		// without a message has none.
		delete(task, "statusText")
	}
	t.setView("task", task)
	if t.contextID != "" && t.view.doc["contextId"] != t.contextID {
		t.setView("contextId", t.contextID)
	}
}

// applyData sets or appends a data value: append on objects merges keys,
// on arrays concatenates, and otherwise replaces.
func applyData(old, value any, appendData bool) any {
	if !appendData || old == nil {
		return value
	}
	switch o := old.(type) {
	case map[string]any:
		if n, ok := value.(map[string]any); ok {
			merged := maps.Clone(o)
			maps.Copy(merged, n)
			return merged
		}
	case []any:
		if n, ok := value.([]any); ok {
			return append(append([]any(nil), o...), n...)
		}
	}
	return value
}

// putArtifactData records a data artifact's value under its id.
func (t *Translator) putArtifactData(id a2a.ArtifactID, value any, appendData bool) {
	arts, _ := t.view.doc["artifacts"].(map[string]any)
	arts = maps.Clone(arts)
	if arts == nil {
		arts = map[string]any{}
	}
	arts[string(id)] = applyData(arts[string(id)], Redact(normalizeJSON(value), t.opt.RedactKeys), appendData)
	t.setView("artifacts", arts)
}

// mergeInto shallow-merges an object into the view member key (statusData,
// ui); a non-object replaces it.
func (t *Translator) mergeInto(key string, value any) {
	value = Redact(normalizeJSON(value), t.opt.RedactKeys)
	old, _ := t.view.doc[key].(map[string]any)
	if n, ok := value.(map[string]any); ok && old != nil {
		merged := maps.Clone(old)
		maps.Copy(merged, n)
		value = merged
	}
	t.setView(key, value)
}

func (t *Translator) addFile(f map[string]any) {
	files, _ := t.view.doc["files"].([]any)
	t.setView("files", append(append([]any(nil), files...), f))
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
	t.view.sent, _ = json.Marshal(t.view.doc)
	t.view.dirty = false
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
	t.view.sent, _ = json.Marshal(t.view.doc)
	t.view.dirty = false
	return t.emit(out, &agui.StateDelta{Base: agui.Base{Metadata: t.stateMeta()},
		Delta: []agui.PatchOp{{Op: "add", Path: t.opt.ViewPath, Value: t.view.sent}}})
}

func (t *Translator) stateMeta() map[string]any {
	return map[string]any{MetadataKey: map[string]any{"stateVersion": t.stateVersion}}
}

// syncState writes what changed in the view since the client last saw it
// as one STATE_DELTA (RFC 6902, computed by a JSON diff), only under the
// bridge's key. Each delta bumps the state version carried in its
// metadata, so a client can tell it missed one.
func (t *Translator) syncState(out []agui.Event) []agui.Event {
	if !t.view.dirty || t.done || (t.open != nil && !t.opt.V1) {
		// ≤0.0.36 clients allow nothing inside an open text message: the
		// change goes out when it closes.
		return out
	}
	t.view.dirty = false
	now, err := json.Marshal(t.view.doc)
	if err != nil {
		return out
	}
	patch, err := jsondiff.CompareJSON(t.view.sent, now)
	prefix := "/" + escapePointer(t.stateKey())
	if t.opt.ViewPath != "" {
		prefix = t.opt.ViewPath
	}
	if err != nil {
		return t.emitWholeView(out)
	}
	if len(patch) == 0 {
		return out
	}
	ops := make([]agui.PatchOp, 0, len(patch))
	for _, op := range patch {
		p := agui.PatchOp{Op: op.Type, Path: prefix + op.Path}
		if op.From != "" {
			p.From = prefix + op.From
		}
		switch op.Type {
		case "add", "replace", "test":
			p.Value, _ = json.Marshal(op.Value)
		}
		ops = append(ops, p)
	}
	t.view.sent = now
	t.stateVersion++
	return t.emit(out, &agui.StateDelta{Base: agui.Base{Metadata: t.stateMeta()}, Delta: ops})
}

// escapePointer escapes a key as one RFC 6901 reference token.
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

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
