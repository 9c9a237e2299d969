package mapping

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// fuzzA2UIPart is an A2UI part of either version for the translator's
// fuzz scripts: surfaces created, updated and deleted in any order, and
// malformed messages.
func fuzzA2UIPart(op, arg byte) *a2a.Part {
	surface := []string{"s1", "s2"}[int(op)%2]
	msgs := []any{
		map[string]any{"version": "v0.9", "createSurface": map[string]any{"surfaceId": surface, "catalogId": "c"}},
		map[string]any{"version": "v0.9", "updateDataModel": map[string]any{"surfaceId": surface, "path": "/x", "value": int(arg)}},
		map[string]any{"version": "v0.9", "deleteSurface": map[string]any{"surfaceId": surface}},
		map[string]any{"surfaceUpdate": map[string]any{"surfaceId": surface, "components": []any{map[string]any{"id": "root"}}}},
		"not a message",
	}
	var data any = msgs[int(arg)%len(msgs)]
	if arg&0x08 != 0 {
		data = []any{data, msgs[int(op)%len(msgs)]}
	}
	p := a2a.NewDataPart(data)
	p.MediaType = A2UIMediaType
	if arg&0x10 != 0 {
		// Marked in the metadata beside the generic media type, as an
		// @a2a-js/sdk 1.x agent marks it.
		p.MediaType, p.Metadata = "application/json", map[string]any{"mimeType": A2UIMediaTypeV010}
	}
	return p
}

func TestChooseA2UI(t *testing.T) {
	t.Parallel()
	lists := func(vs ...A2UIVersion) func(string) bool {
		return func(uri string) bool {
			for _, v := range vs {
				if v.ExtensionURI() == uri {
					return true
				}
			}
			return false
		}
	}
	for _, tc := range []struct {
		name string
		mode A2UIMode
		card func(string) bool
		v1   bool
		want A2UIVersion
	}{
		{"auto, 1.0 client, newest listed", A2UIAuto, lists(A2UIv08, A2UIv09), true, A2UIv09},
		{"auto, v0.10", A2UIAuto, lists(A2UIv010, A2UIv08), true, A2UIv010},
		{"auto, v1.0 beside every other", A2UIAuto, lists(A2UIv08, A2UIv09, A2UIv091, A2UIv10), true, A2UIv10},
		{"auto, v0.9.1 over v0.9", A2UIAuto, lists(A2UIv09, A2UIv091, A2UIv08), true, A2UIv091},
		{"auto, older client", A2UIAuto, lists(A2UIv08), false, ""},
		{"auto, card lists none", A2UIAuto, lists(), true, ""},
		{"on, older client", A2UIOn, lists(A2UIv09), false, A2UIv09},
		{"on, card lists none", A2UIOn, lists(), false, A2UIv08},
		{"off", A2UIOff, lists(A2UIv09), true, ""},
	} {
		if got := ChooseA2UI(tc.mode, tc.card, tc.v1); got != tc.want {
			t.Errorf("%s: ChooseA2UI = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestClientRendersA2UI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v1    bool
		props string
		want  bool
	}{
		{true, ``, true},
		{false, ``, false},
		{false, `{"a2uiCatalogAvailable":true}`, true},
		{false, `{"a2uiCatalogAvailable":"yes"}`, false},
		{false, `{"a2uiCatalogAvailable":false}`, false},
		{false, `{"a2uiClientCapabilities":{"v0.9":{"supportedCatalogIds":["c"]}}}`, true},
		{false, `{"a2uiClientCapabilities":null}`, false},
		{false, `{"a2uiClientCapabilities":"c"}`, false},
		{false, `[1]`, false},
	} {
		if got := ClientRendersA2UI(tc.v1, json.RawMessage(tc.props)); got != tc.want {
			t.Errorf("ClientRendersA2UI(%v, %s) = %v, want %v", tc.v1, tc.props, got, tc.want)
		}
	}
}

func TestA2UIActionPart(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return time.Date(2026, 12, 4, 2, 0, 0, 0, time.UTC) }
	copilot := `{"a2uiAction":{"userAction":{"name":"book","surfaceId":"booking","sourceComponentId":"submit","context":{"name":"Ada","guests":2},"dataContextPath":"/"}}}`
	v09 := `{"a2uiAction":{"version":"v0.9","action":{"name":"next","surfaceId":"wizard","sourceComponentId":"b","timestamp":"2026-01-15T12:00:00Z","context":{}}}}`
	for _, tc := range []struct {
		name    string
		props   string
		version A2UIVersion
		max     int
		want    string // the part's data as JSON
		wantErr error
	}{
		{name: "no action", props: `{"other":1}`, version: A2UIv08},
		{name: "props not an object", props: `[1]`, version: A2UIv08},
		{name: "copilotkit form to v0.8", props: copilot, version: A2UIv08,
			want: `{"userAction":{"context":{"guests":2,"name":"Ada"},"name":"book","sourceComponentId":"submit","surfaceId":"booking","timestamp":"2026-12-04T02:00:00Z"}}`},
		{name: "copilotkit form to v0.9", props: copilot, version: A2UIv09,
			want: `[{"action":{"context":{"guests":2,"name":"Ada"},"name":"book","sourceComponentId":"submit","surfaceId":"booking","timestamp":"2026-12-04T02:00:00Z"},"version":"v0.9"}]`},
		{name: "v0.9 form to v0.10", props: v09, version: A2UIv010,
			want: `[{"action":{"context":{},"name":"next","sourceComponentId":"b","surfaceId":"wizard","timestamp":"2026-01-15T12:00:00Z"},"version":"v0.10"}]`},
		{name: "v0.9 form to v0.8", props: v09, version: A2UIv08,
			want: `{"userAction":{"context":{},"name":"next","sourceComponentId":"b","surfaceId":"wizard","timestamp":"2026-01-15T12:00:00Z"}}`},
		{name: "not active", props: copilot, version: "", wantErr: ErrA2UINotActive},
		{name: "too large", props: copilot, version: A2UIv08, max: 20, wantErr: ErrA2UIActionTooLarge},
		{name: "not an object", props: `{"a2uiAction":"click"}`, version: A2UIv08, wantErr: ErrA2UIActionInvalid},
		{name: "neither form", props: `{"a2uiAction":{"click":{}}}`, version: A2UIv08, wantErr: ErrA2UIActionInvalid},
		{name: "no name", props: `{"a2uiAction":{"userAction":{"surfaceId":"s"}}}`, version: A2UIv08, wantErr: ErrA2UIActionInvalid},
		{name: "no surface", props: `{"a2uiAction":{"action":{"name":"n"}}}`, version: A2UIv09, wantErr: ErrA2UIActionInvalid},
		{name: "name not a string", props: `{"a2uiAction":{"action":{"name":1,"surfaceId":"s"}}}`, version: A2UIv09, wantErr: ErrA2UIActionInvalid},
		{name: "context not an object", props: `{"a2uiAction":{"action":{"name":"n","surfaceId":"s","context":[1]}}}`, version: A2UIv09, wantErr: ErrA2UIActionInvalid},
		{name: "bad timestamp", props: `{"a2uiAction":{"action":{"name":"n","surfaceId":"s","timestamp":"yesterday"}}}`, version: A2UIv09, wantErr: ErrA2UIActionInvalid},
	} {
		p, err := A2UIActionPart(json.RawMessage(tc.props), tc.version, A2UIActionOptions{MaxBytes: tc.max, Now: now})
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
			continue
		}
		if tc.want == "" {
			if err == nil && p != nil {
				t.Errorf("%s: got a part, want none", tc.name)
			}
			continue
		}
		got, _ := json.Marshal(p.Data())
		if diff := cmp.Diff(tc.want, string(got)); diff != "" {
			t.Errorf("%s: data (-want +got):\n%s", tc.name, diff)
		}
		if p.MediaType != tc.version.MediaType() || p.Metadata["mimeType"] != tc.version.MediaType() || !isA2UIPart(p) {
			t.Errorf("%s: media type %q, metadata %v", tc.name, p.MediaType, p.Metadata)
		}
	}
}

func TestA2UIClientCapabilities(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		props    string
		version  A2UIVersion
		catalogs []string
		want     string
	}{
		{"v0.8 default", ``, A2UIv08, nil, `{"supportedCatalogIds":["https://a2ui.org/specification/v0_8/standard_catalog_definition.json"]}`},
		{"v0.9 configured", `{}`, A2UIv09, []string{"https://x/c.json"}, `{"v0.9":{"supportedCatalogIds":["https://x/c.json"]}}`},
		{"the client's own", `{"a2uiClientCapabilities":{"v0.10":{"supportedCatalogIds":["mine"]}}}`, A2UIv010, []string{"ignored"}, `{"v0.10":{"supportedCatalogIds":["mine"]}}`},
		{"v1.0 default", ``, A2UIv10, nil, `{"v1.0":{"supportedCatalogIds":["https://a2ui.org/specification/v1_0/catalogs/basic/catalog.json"]}}`},
		{"the client's own under v1.0's name", `{"a2uiRendererCapabilities":{"v1.0":{"supportedCatalogIds":["mine"]}}}`, A2UIv10, nil, `{"v1.0":{"supportedCatalogIds":["mine"]}}`},
	} {
		got, _ := json.Marshal(A2UIClientCapabilities(json.RawMessage(tc.props), tc.version, tc.catalogs))
		if diff := cmp.Diff(tc.want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestA2UICompaction: a live surface that keeps updating its data model
// is not an ever-growing activity: every change is a snapshot (replace:
// true, never a delta, as @ag-ui/a2ui-middleware sends them) of what still
// matters.
func TestA2UICompaction(t *testing.T) {
	t.Parallel()
	tr := New(Options{ThreadID: "th", RunID: "r", V1: true})
	tr.Start()
	part := func(msgs ...any) *a2a.Part {
		p := a2a.NewDataPart(msgs)
		p.MediaType = A2UIMediaType
		return p
	}
	status := func(p *a2a.Part) *a2a.StatusUpdate {
		return &a2a.StatusUpdate{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
			Message: &a2a.Message{ID: "m", Role: a2a.RoleAgent, Parts: []*a2a.Part{p}}}}
	}
	tr.Translate(status(part(
		map[string]any{"version": "v0.9", "createSurface": map[string]any{"surfaceId": "d", "catalogId": "c"}},
		map[string]any{"version": "v0.9", "updateComponents": map[string]any{"surfaceId": "d", "components": []any{
			map[string]any{"id": "root", "component": "Text", "text": map[string]any{"path": "/cpu"}}}}})))
	var snapshots, deltas int
	var last map[string]any
	for i := range 50 {
		for _, e := range tr.Translate(status(part(map[string]any{"version": "v0.9",
			"updateDataModel": map[string]any{"surfaceId": "d", "path": "/cpu", "value": i}}))) {
			switch e := e.(type) {
			case *agui.ActivitySnapshot:
				snapshots++
				last = e.Content
				if e.Replace == nil || !*e.Replace {
					t.Fatalf("snapshot %d without replace: true", snapshots)
				}
			case *agui.ActivityDelta:
				deltas++
			}
		}
	}
	if snapshots != 50 || deltas != 0 {
		t.Fatalf("%d snapshots and %d deltas; want a snapshot per update and no delta", snapshots, deltas)
	}
	if ops := tr.a2ui.surfaces["d"].ops; len(ops) > 10 {
		t.Errorf("the activity holds %d operations after 50 updates of one value", len(ops))
	}
	if ops, _ := last[A2UIOperationsKey].([]json.RawMessage); len(ops) != 3 {
		t.Errorf("the compacted snapshot holds %d operations, want createSurface, updateComponents and the latest value", len(ops))
	}
}

// FuzzA2UIActionPart: whatever a client forwards, the action decoder
// returns a part or one of its errors, never panics, and never yields a
// part above the bound.
func FuzzA2UIActionPart(f *testing.F) {
	f.Add([]byte(`{"a2uiAction":{"userAction":{"name":"book","surfaceId":"s","context":{"a":1}}}}`), uint8(0))
	f.Add([]byte(`{"a2uiAction":{"version":"v0.9","action":{"name":"n","surfaceId":"s","timestamp":"2026-01-15T12:00:00Z"}}}`), uint8(1))
	f.Add([]byte(`{"a2uiAction":null}`), uint8(2))
	f.Add([]byte(`{"a2uiAction":{"action":{"name":"","surfaceId":"s","context":null}}}`), uint8(1))
	f.Fuzz(func(t *testing.T, props []byte, v uint8) {
		version := A2UIVersions[int(v)%len(A2UIVersions)]
		p, err := A2UIActionPart(props, version, A2UIActionOptions{MaxBytes: 4096})
		if err != nil {
			if !errors.Is(err, ErrA2UIActionInvalid) && !errors.Is(err, ErrA2UIActionTooLarge) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if p == nil {
			return
		}
		b, err := json.Marshal(p.Data())
		if err != nil || len(b) > 2*4096+256 {
			t.Fatalf("part data of %d bytes (%v)", len(b), err)
		}
	})
}

// TestA2UITakeover: a translator taking a run over from its journal
// (Options.Prior) continues each surface's activity, and the Task snapshot
// SubscribeToTask opens with — repeating the operations the journal shows —
// shows nothing again.
func TestA2UITakeover(t *testing.T) {
	t.Parallel()
	part := func(msgs ...any) *a2a.Part {
		p := a2a.NewDataPart(msgs)
		p.MediaType = A2UIMediaType
		return p
	}
	create := part(
		map[string]any{"version": "v0.9", "createSurface": map[string]any{"surfaceId": "s", "catalogId": "c"}},
		map[string]any{"version": "v0.9", "updateComponents": map[string]any{"surfaceId": "s", "components": []any{
			map[string]any{"id": "root", "component": "Text", "text": map[string]any{"path": "/v"}}}}})
	msg := &a2a.Message{ID: "m1", Role: a2a.RoleAgent, Parts: []*a2a.Part{create}}
	for _, v1 := range []bool{true, false} {
		first := New(Options{ThreadID: "th", RunID: "r", V1: v1})
		journal := first.Start()
		journal = append(journal, first.Translate(&a2a.StatusUpdate{TaskID: "t", ContextID: "c",
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg}})...)

		next := New(Options{ThreadID: "th", RunID: "r", V1: v1, Prior: journal})
		out := next.Translate(&a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg}})
		out = append(out, next.Translate(&a2a.StatusUpdate{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted,
			Message: &a2a.Message{ID: "m2", Role: a2a.RoleAgent, Parts: []*a2a.Part{a2a.NewTextPart("Done."),
				part(map[string]any{"version": "v0.9", "updateDataModel": map[string]any{"surfaceId": "s", "path": "/v", "value": 1}})}}}})...)
		if err := agui.CheckStream(v1, append(journal, out...)); err != nil {
			t.Fatalf("v1=%v: %v", v1, err)
		}
		var shown []string
		for _, e := range out {
			switch e := e.(type) {
			case *agui.ActivitySnapshot:
				if e.MessageID != first.a2ui.surfaces["s"].activityID {
					t.Errorf("the snapshot goes to activity %s, not the journal's", e.MessageID)
				}
				if ops, _ := e.Content[A2UIOperationsKey].([]json.RawMessage); len(ops) != 3 {
					t.Errorf("the snapshot holds %d operations, want the journal's two and the new one", len(ops))
				}
				shown = append(shown, "snapshot")
			case *agui.ActivityDelta:
				shown = append(shown, "delta")
			case *agui.Custom:
				if e.Name == A2UICustomName {
					shown = append(shown, "custom")
				}
			}
		}
		want := []string{"snapshot"}
		if !v1 {
			want = []string{"custom"}
		}
		if diff := cmp.Diff(want, shown); diff != "" {
			t.Errorf("v1=%v: A2UI events after the takeover (-want +got):\n%s", v1, diff)
		}
	}
}

// TestA2UICapabilitiesKey: the capabilities go under the name the
// activated version reads: a2uiRendererCapabilities for v1.0 (A2UI #2076),
// a2uiClientCapabilities before; the other name is never sent.
func TestA2UICapabilitiesKey(t *testing.T) {
	t.Parallel()
	for v, want := range map[A2UIVersion]string{A2UIv08: "a2uiClientCapabilities", A2UIv09: "a2uiClientCapabilities",
		A2UIv091: "a2uiClientCapabilities", A2UIv010: "a2uiClientCapabilities", A2UIv10: "a2uiRendererCapabilities"} {
		meta := WithA2UICapabilities(map[string]any{"k": "v"}, v, A2UIClientCapabilities(nil, v, nil))
		if _, ok := meta[want]; !ok || len(meta) != 2 || meta["k"] != "v" {
			t.Errorf("%s: metadata %v, want the capabilities under %s", v, meta, want)
		}
	}
}

// TestIsA2UIPart: either marking field makes a data part A2UI, whatever the
// other says (@a2a-js/sdk 1.x sets mediaType application/json on every data
// part; the A2UI extension specification marks metadata.mimeType).
func TestIsA2UIPart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		mediaType string
		mimeType  any
		text      bool
		want      bool
	}{
		{"mediaType v0.9", A2UIMediaType, nil, false, true},
		{"mediaType v1.0", A2UIMediaTypeV010, nil, false, true},
		{"metadata only", "", A2UIMediaType, false, true},
		{"metadata beside the generic application/json", "application/json", A2UIMediaType, false, true},
		{"metadata v1.0 beside application/json", "application/json", A2UIMediaTypeV010, false, true},
		{"mediaType A2UI, metadata something else", A2UIMediaTypeV010, "application/json", false, true},
		{"neither", "application/json", "application/json", false, false},
		{"metadata not a string", "", 7, false, false},
		{"a text part", A2UIMediaType, A2UIMediaType, true, false},
	} {
		p := a2a.NewDataPart([]any{})
		if tc.text {
			p = a2a.NewTextPart("x")
		}
		p.MediaType = tc.mediaType
		if tc.mimeType != nil {
			p.Metadata = map[string]any{"mimeType": tc.mimeType}
		}
		if got := isA2UIPart(p); got != tc.want {
			t.Errorf("%s: isA2UIPart = %v, want %v", tc.name, got, tc.want)
		}
	}
}
