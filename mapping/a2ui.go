package mapping

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// A2UI (github.com/google/A2UI) is how A2A agents send interactive UI:
// data parts whose metadata mimeType marks them as A2UI carry surface
// messages (v0.8: one object — surfaceUpdate, dataModelUpdate,
// beginRendering, deleteSurface; v0.9 and later: a list — createSurface,
// updateComponents, updateDataModel, deleteSurface), and the client answers
// a user's action with a part of the same kind. The bridge shows each
// surface as one AG-UI activity of type A2UIActivityType.

// A2UIVersion is a published A2UI version, spelled as its messages'
// "version" member and its extension URI spell it.
type A2UIVersion string

// The A2UI versions the bridge knows. v1.0 is what A2UI first published as
// v0.10 (A2UI #1563, #1725); cards that still list v0.10 are understood.
const (
	A2UIv08  A2UIVersion = "v0.8" // deprecated by A2UI, still spoken
	A2UIv09  A2UIVersion = "v0.9"
	A2UIv091 A2UIVersion = "v0.9.1"
	A2UIv010 A2UIVersion = "v0.10"
	A2UIv10  A2UIVersion = "v1.0"
)

// A2UIVersions are the known versions, newest first: when an agent's card
// lists several, the bridge activates the newest.
var A2UIVersions = []A2UIVersion{A2UIv10, A2UIv010, A2UIv091, A2UIv09, A2UIv08}

// ExtensionURI is the A2A extension URI of the version
// (specification/v*/docs/a2ui_extension_specification.md).
func (v A2UIVersion) ExtensionURI() string { return "https://a2ui.org/a2a-extension/a2ui/" + string(v) }

// MediaType is the media type the version's parts carry: up to v0.9.1
// application/json+a2ui, from v0.10 (v1.0) application/a2ui+json.
func (v A2UIVersion) MediaType() string {
	switch v {
	case A2UIv08, A2UIv09, A2UIv091:
		return A2UIMediaType
	}
	return A2UIMediaTypeV010
}

// CapabilitiesKey is the message metadata member that carries the
// renderer's capabilities to an agent of the version: v1.0 renamed
// a2uiClientCapabilities to a2uiRendererCapabilities (A2UI #2076), and an
// agent of v1.0 reads a message without them as one that shows no UI
// (capabilities apply per turn, A2UI #2677).
func (v A2UIVersion) CapabilitiesKey() string {
	if v == A2UIv10 {
		return A2UIRendererCapabilities
	}
	return A2UIClientCapabilitiesKey
}

// StandardCatalog is the catalog every renderer of the version supports
// (the bridge's console renders it), sent as the renderer's capabilities
// when neither the client nor the configuration names catalogs.
func (v A2UIVersion) StandardCatalog() string {
	switch v {
	case A2UIv08:
		return "https://a2ui.org/specification/v0_8/standard_catalog_definition.json"
	case A2UIv09, A2UIv091:
		return "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
	case A2UIv010:
		return "https://a2ui.org/specification/v0_10/catalogs/basic/catalog.json"
	}
	return "https://a2ui.org/specification/v1_0/catalogs/basic/catalog.json"
}

// The two names of the renderer's capabilities in message metadata (and in
// forwardedProps, where a client may use either).
const (
	A2UIClientCapabilitiesKey = "a2uiClientCapabilities"   // v0.8 to v0.10
	A2UIRendererCapabilities  = "a2uiRendererCapabilities" // v1.0 (A2UI #2076)
)

// A2UI media types: both spellings mark an A2UI part, whatever version the
// agent speaks.
const (
	A2UIMediaType     = "application/json+a2ui"
	A2UIMediaTypeV010 = "application/a2ui+json"
)

// replaceActivity is every surface snapshot's replace member: the content
// replaces what the client holds (AG-UI's default, stated as the
// middleware states it).
var replaceActivity = true

// A2UIActivityType is the activityType of a surface's activity, the
// convention of @ag-ui/a2ui-middleware and @copilotkit/a2ui-renderer.
const A2UIActivityType = "a2ui-surface"

// A2UICustomName names the CUSTOM event that carries a surface's
// operations to clients before 1.0, which reject activity events.
const A2UICustomName = "a2ui"

// Keys of an a2ui-surface activity's content. The bridge's contract names
// the operations "operations"; CopilotKit's renderer (react-core 1.74.0,
// A2UI_OPERATIONS_KEY) and @ag-ui/a2ui-middleware 0.0.10 read
// "a2ui_operations". The content holds both lists, equal, so every
// renderer paints the surface without a client-side adapter.
const (
	A2UIOperationsKey        = "operations"
	A2UICopilotOperationsKey = "a2ui_operations"
)

// isA2UIPart reports a data part marked as A2UI by either its media type
// (A2A 1.0) or its metadata mimeType (v0.3, and what the A2UI extension
// specification prescribes and ADK's A2UI helper writes). Either suffices:
// an @a2a-js/sdk 1.x agent sets the generic mediaType application/json on
// every data part and marks A2UI in the metadata only.
func isA2UIPart(p *a2a.Part) bool {
	if _, ok := p.Content.(a2a.DataPart); !ok {
		return false
	}
	meta, _ := p.Metadata["mimeType"].(string)
	return isA2UIMediaType(p.MediaType) || isA2UIMediaType(meta)
}

func isA2UIMediaType(mt string) bool { return mt == A2UIMediaType || mt == A2UIMediaTypeV010 }

// a2uiOp is one server-to-client A2UI message.
type a2uiOp struct {
	raw     json.RawMessage
	kind    string
	surface string
	body    map[string]any
}

// parseA2UIOps splits an A2UI part's data into its messages: a v0.8 part
// holds one object, later versions a list. A message that is not an object
// with one operation addressing a surface is returned in bad with the
// reason, for the caller to report; the others are kept in order.
func parseA2UIOps(data any) (ops []a2uiOp, bad []map[string]any) {
	items, ok := data.([]any)
	if !ok {
		items = []any{data}
	}
	for i, item := range items {
		op, reason := parseA2UIOp(item)
		if reason != "" {
			bad = append(bad, map[string]any{"index": i, "reason": reason, "message": item})
			continue
		}
		ops = append(ops, op)
	}
	return ops, bad
}

// parseA2UIOp checks one message: an object with one operation (besides
// "version") whose body names its surface. The operation's kind is not
// checked against the published ones (v0.8: surfaceUpdate, dataModelUpdate,
// beginRendering, deleteSurface; v0.9+: createSurface, updateComponents,
// updateDataModel, deleteSurface): a later version's message that addresses
// a surface is forwarded too, for renderers that know it.
func parseA2UIOp(item any) (a2uiOp, string) {
	m, ok := item.(map[string]any)
	if !ok {
		return a2uiOp{}, "an A2UI message must be a JSON object"
	}
	var kind string
	for k := range m {
		if k == "version" {
			continue
		}
		if kind != "" {
			return a2uiOp{}, "an A2UI message must hold exactly one operation"
		}
		kind = k
	}
	body, _ := m[kind].(map[string]any)
	if kind == "" || body == nil {
		return a2uiOp{}, "an A2UI message must hold one operation object"
	}
	surface, _ := body["surfaceId"].(string)
	if surface == "" {
		return a2uiOp{}, "the operation " + strconv.Quote(kind) + " names no surfaceId"
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return a2uiOp{}, "the message cannot be encoded"
	}
	return a2uiOp{raw: raw, kind: kind, surface: surface, body: body}, ""
}

// a2uiState is the translator's A2UI bookkeeping: the surfaces this run
// shows, each as one activity, and the operations of the A2A message being
// mapped, which are shown together once the message's parts are read.
type a2uiState struct {
	surfaces map[string]*a2uiSurface
	n        int // activities opened, for fresh ids
	queued   []a2uiOp
	bad      []map[string]any
}

// a2uiSurface is one surface's activity: the operations its content holds
// on the client.
type a2uiSurface struct {
	activityID string
	ops        []a2uiOp
	size       int
}

// queueA2UI takes an A2UI part of the A2A message being mapped; flushA2UI
// shows what the message's parts hold.
func (t *Translator) queueA2UI(p *a2a.Part) {
	ops, bad := parseA2UIOps(p.Data())
	t.a2ui.queued = append(t.a2ui.queued, ops...)
	t.a2ui.bad = append(t.a2ui.bad, bad...)
}

// flushA2UI shows the A2UI operations of one A2A message, atomically per
// surface: one ACTIVITY_SNAPSHOT or ACTIVITY_DELTA per surface (1.0
// clients) or one CUSTOM a2ui event (older clients), surfaces in the order
// the message first addresses them. A Task snapshot that repeats the last
// operations shown shows nothing.
func (t *Translator) flushA2UI(out []agui.Event) []agui.Event {
	ops, bad := t.a2ui.queued, t.a2ui.bad
	t.a2ui.queued, t.a2ui.bad = nil, nil
	if len(ops) == 0 && len(bad) == 0 {
		return out
	}
	out = t.closeText(out)
	out = t.reportSent(out)
	var order []string
	bySurface := map[string][]a2uiOp{}
	for _, op := range ops {
		if _, seen := bySurface[op.surface]; !seen {
			order = append(order, op.surface)
		}
		bySurface[op.surface] = append(bySurface[op.surface], op)
	}
	for _, id := range order {
		group := bySurface[id]
		if t.snapshot && t.a2uiRepeats(id, group) {
			continue
		}
		// A deleteSurface ends the surface's activity: what follows it
		// (a new createSurface) opens another.
		for len(group) > 0 {
			n := slices.IndexFunc(group, func(op a2uiOp) bool { return op.kind == "deleteSurface" }) + 1
			if n == 0 {
				n = len(group)
			}
			out = t.showSurface(out, id, group[:n])
			group = group[n:]
		}
	}
	if len(bad) > 0 {
		out = t.custom(out, "a2a.a2ui_invalid", map[string]any{"taskId": string(t.taskID), "messages": bad})
	}
	return out
}

// a2uiRepeats reports operations that end what the surface's activity
// already holds: a Task snapshot (GetTask, SubscribeToTask after a
// takeover) repeating the status message mapped last.
func (t *Translator) a2uiRepeats(surfaceID string, ops []a2uiOp) bool {
	s := t.a2ui.surfaces[surfaceID]
	if s == nil || len(ops) > len(s.ops) {
		return false
	}
	tail := s.ops[len(s.ops)-len(ops):]
	for i := range ops {
		if !bytes.Equal(tail[i].raw, ops[i].raw) {
			return false
		}
	}
	return true
}

// showSurface shows one message's operations on one surface. Every change
// is a full ACTIVITY_SNAPSHOT with replace: true holding the surface's
// current operations (what later ones supersede dropped, compactA2UI), as
// @ag-ui/a2ui-middleware 0.0.10, the reference producer, sends them:
// renderers are written for snapshots, and some (assistant-ui's
// react-ag-ui) ignore ACTIVITY_DELTA, so a delta left the surface at its
// first state. A deleteSurface ends the activity: a later createSurface
// opens a new one.
func (t *Translator) showSurface(out []agui.Event, surfaceID string, ops []a2uiOp) []agui.Event {
	if t.a2ui.surfaces == nil {
		t.a2ui.surfaces = map[string]*a2uiSurface{}
	}
	s := t.a2ui.surfaces[surfaceID]
	if !t.opt.V1 && !t.opt.A2UIActivities {
		// Older clients reject activities: the message's operations, as
		// they came.
		raw := make([]json.RawMessage, len(ops))
		for i, op := range ops {
			raw[i] = op.raw
		}
		value := map[string]any{"surfaceId": surfaceID, A2UIOperationsKey: raw}
		if s == nil {
			s = t.openSurface(surfaceID)
		}
		value["activityId"] = s.activityID
		// Only the last message's operations are kept: what a Task
		// snapshot repeating them is recognised by (a2uiRepeats).
		s.ops = ops
		t.endSurfaceIfDeleted(surfaceID, ops)
		return t.custom(out, A2UICustomName, value)
	}
	if s == nil {
		s = t.openSurface(surfaceID)
	}
	s.ops = compactA2UI(append(slices.Clip(s.ops), ops...))
	s.size = opsSize(s.ops)
	out = t.emit(out, &agui.ActivitySnapshot{MessageID: s.activityID, ActivityType: A2UIActivityType,
		Content: a2uiContent(s.ops), Replace: &replaceActivity})
	t.endSurfaceIfDeleted(surfaceID, ops)
	return out
}

func (t *Translator) openSurface(surfaceID string) *a2uiSurface {
	t.a2ui.n++
	s := &a2uiSurface{activityID: t.id("a2ui", surfaceID, strconv.Itoa(t.a2ui.n))}
	t.a2ui.surfaces[surfaceID] = s
	return s
}

func (t *Translator) endSurfaceIfDeleted(surfaceID string, ops []a2uiOp) {
	if len(ops) > 0 && ops[len(ops)-1].kind == "deleteSurface" {
		delete(t.a2ui.surfaces, surfaceID)
	}
}

// a2uiContent is an activity's content: the same operations under both
// keys renderers read.
func a2uiContent(ops []a2uiOp) map[string]any {
	raw := make([]json.RawMessage, len(ops))
	for i, op := range ops {
		raw[i] = op.raw
	}
	return map[string]any{A2UIOperationsKey: raw, A2UICopilotOperationsKey: raw}
}

func opsSize(ops []a2uiOp) int {
	n := 0
	for _, op := range ops {
		n += len(op.raw)
	}
	return n
}

// compactA2UI drops the operations a later one of the same surface
// supersedes, keeping the order of the rest, so the surface renders the
// same from fewer operations:
//   - a data model update (v0.9 updateDataModel) of a path that a later
//     one overwrites (the same path or an ancestor);
//   - a v0.8 dataModelUpdate whose keys a later one at the same path sets
//     again;
//   - a components update (updateComponents, surfaceUpdate) every
//     component of which a later one redefines (components are replaced
//     by id).
func compactA2UI(ops []a2uiOp) []a2uiOp {
	keep := make([]bool, len(ops))
	for i := range ops {
		keep[i] = true
		for j := i + 1; j < len(ops) && keep[i]; j++ {
			if supersedes(ops[j], ops[i]) {
				keep[i] = false
			}
		}
	}
	out := make([]a2uiOp, 0, len(ops))
	for i, op := range ops {
		if keep[i] {
			out = append(out, op)
		}
	}
	return out
}

// supersedes reports whether later makes earlier (of the same surface)
// irrelevant to the rendered result.
func supersedes(later, earlier a2uiOp) bool {
	if later.surface != earlier.surface || later.kind != earlier.kind {
		return false
	}
	switch later.kind {
	case "updateDataModel":
		lp, ep := dataPath(later.body), dataPath(earlier.body)
		return lp == "/" || ep == lp || strings.HasPrefix(ep, lp+"/")
	case "dataModelUpdate":
		if dataPath(later.body) != dataPath(earlier.body) {
			return false
		}
		return keySet(later.body["contents"]).covers(keySet(earlier.body["contents"]))
	case "updateComponents", "surfaceUpdate":
		return componentIDs(later.body).covers(componentIDs(earlier.body))
	}
	return false
}

// dataPath is a data model update's path, "/" when absent.
func dataPath(body map[string]any) string {
	p, _ := body["path"].(string)
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return "/"
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

type idSet map[string]bool

// covers reports whether s holds every member of o, and o is not empty (an
// update with nothing to identify is never dropped).
func (s idSet) covers(o idSet) bool {
	if len(o) == 0 || s == nil {
		return false
	}
	for id := range o {
		if !s[id] {
			return false
		}
	}
	return true
}

// keySet is the keys a v0.8 dataModelUpdate's contents set; nil when an
// entry has no key (such an update is never dropped).
func keySet(contents any) idSet {
	items, _ := contents.([]any)
	set := idSet{}
	for _, it := range items {
		m, _ := it.(map[string]any)
		k, _ := m["key"].(string)
		if k == "" {
			return nil
		}
		set[k] = true
	}
	return set
}

// componentIDs is the ids a components update defines; nil when one has
// none.
func componentIDs(body map[string]any) idSet {
	items, _ := body["components"].([]any)
	set := idSet{}
	for _, it := range items {
		m, _ := it.(map[string]any)
		id, _ := m["id"].(string)
		if id == "" {
			return nil
		}
		set[id] = true
	}
	return set
}

// restoreSurface rebuilds a surface's activity from the journal of a run
// this translator takes over (resumeFrom), so later operations go to the
// same activity and a Task snapshot repeating them shows nothing. raw are
// the operations an event shows: the whole content (replace) or appended.
func (t *Translator) restoreSurface(activityID string, raw []json.RawMessage, replace bool) {
	var ops []a2uiOp
	for _, r := range raw {
		var v any
		if json.Unmarshal(r, &v) != nil {
			continue
		}
		if op, reason := parseA2UIOp(v); reason == "" {
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		return
	}
	if t.a2ui.surfaces == nil {
		t.a2ui.surfaces = map[string]*a2uiSurface{}
	}
	surfaceID := ops[0].surface
	s := t.a2ui.surfaces[surfaceID]
	if s == nil || s.activityID != activityID {
		t.a2ui.n++
		s = &a2uiSurface{activityID: activityID}
		t.a2ui.surfaces[surfaceID] = s
	}
	if replace {
		s.ops = ops
	} else {
		s.ops = append(s.ops, ops...)
	}
	s.size = opsSize(s.ops)
	t.endSurfaceIfDeleted(surfaceID, s.ops)
}

// restoreA2UI feeds restoreSurface from one journaled event.
func (t *Translator) restoreA2UI(e agui.Event) {
	switch e := e.(type) {
	case *agui.ActivitySnapshot:
		var raw []json.RawMessage
		b, _ := json.Marshal(e.Content[A2UIOperationsKey])
		_ = json.Unmarshal(b, &raw)
		t.restoreSurface(e.MessageID, raw, true)
	case *agui.ActivityDelta:
		var raw []json.RawMessage
		for _, op := range e.Patch {
			if op.Op == "add" && op.Path == "/"+A2UIOperationsKey+"/-" {
				raw = append(raw, op.Value)
			}
		}
		t.restoreSurface(e.MessageID, raw, false)
	case *agui.Custom:
		var v struct {
			ActivityID string            `json:"activityId"`
			Operations []json.RawMessage `json:"operations"`
		}
		if json.Unmarshal(e.Value, &v) == nil {
			// As showSurface keeps them for older clients: the last event's.
			t.restoreSurface(v.ActivityID, v.Operations, true)
		}
	}
}
