package mapping

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// A2UIMode is an agent's A2UI switch: when the bridge activates the A2UI
// extension on the agent's calls.
type A2UIMode string

// A2UI modes.
const (
	// A2UIAuto (the default) activates A2UI for clients that render it
	// (ClientRendersA2UI) when the agent's card lists a version the bridge
	// knows.
	A2UIAuto A2UIMode = "auto"
	// A2UIOn activates it for every client (older ones get CUSTOM a2ui
	// events), and for an agent whose card lists no version (as v0.8, the
	// version agents speak without declaring it).
	A2UIOn A2UIMode = "on"
	// A2UIOff never activates it.
	A2UIOff A2UIMode = "off"
)

// ChooseA2UI is the A2UI version a run activates: the newest known version
// the agent's card lists (declares reports a listed extension URI),
// subject to the mode and whether the client renders A2UI; "" when none.
func ChooseA2UI(mode A2UIMode, declares func(uri string) bool, renders bool) A2UIVersion {
	if mode == A2UIOff || (mode != A2UIOn && !renders) {
		return ""
	}
	for _, v := range A2UIVersions {
		if declares(v.ExtensionURI()) {
			return v
		}
	}
	if mode == A2UIOn {
		return A2UIv08
	}
	return ""
}

// Names in RunAgentInput.forwardedProps the bridge reads for A2UI.
const (
	// ForwardedA2UIAction is the user's action on a surface, as
	// @copilotkit/a2ui-renderer sends it ({userAction: …}) or in the v0.9+
	// form ({version, action: …}).
	ForwardedA2UIAction = "a2uiAction"
	// ForwardedA2UICapabilities is the client's a2uiClientCapabilities
	// (the catalogs it renders), passed to the agent as they are, under
	// the name the activated version reads (A2UIVersion.CapabilitiesKey).
	ForwardedA2UICapabilities = A2UIClientCapabilitiesKey
	// ForwardedA2UIRendererCapabilities is the same under v1.0's name; a
	// client may send either.
	ForwardedA2UIRendererCapabilities = A2UIRendererCapabilities
)

// forwardedCapabilities is the client's A2UI capabilities object from
// forwardedProps under either name (v1.0's first), or nil.
func forwardedCapabilities(forwardedProps json.RawMessage) map[string]any {
	for _, name := range []string{ForwardedA2UIRendererCapabilities, ForwardedA2UICapabilities} {
		if raw := forwardedMember(forwardedProps, name); raw != nil {
			var caps map[string]any
			if json.Unmarshal(raw, &caps) == nil && caps != nil {
				return caps
			}
		}
	}
	return nil
}

// ForwardedCopilotKitCatalog is what CopilotKit's provider sets in every
// run's forwardedProps when it has an A2UI catalog to render with
// (react-core 1.74 CopilotKitProvider: properties.a2uiCatalogAvailable).
const ForwardedCopilotKitCatalog = "a2uiCatalogAvailable"

// ClientRendersA2UI reports whether the run's client renders A2UI surfaces
// as a2ui-surface activities: a 1.0 client (v1), or one that says so in
// its forwardedProps — its a2uiClientCapabilities (the A2UI specification's
// way for a client to name what it renders), or CopilotKit's
// a2uiCatalogAvailable. CopilotKit 1.74 runs on @ag-ui/client 0.0.59,
// which sends no protocolVersion but takes activity events (0.0.41 and
// later); only 0.0.36 and older reject them, and those clients have no
// A2UI renderer to say so.
func ClientRendersA2UI(v1 bool, forwardedProps json.RawMessage) bool {
	if v1 {
		return true
	}
	if forwardedCapabilities(forwardedProps) != nil {
		return true
	}
	var available bool
	return json.Unmarshal(forwardedMember(forwardedProps, ForwardedCopilotKitCatalog), &available) == nil && available
}

// DefaultMaxA2UIActionBytes bounds forwardedProps.a2uiAction.
const DefaultMaxA2UIActionBytes = 64 << 10

// Errors of A2UIActionPart; callers tell them apart with errors.Is.
var (
	ErrA2UIActionInvalid  = errors.New("invalid forwardedProps.a2uiAction")
	ErrA2UIActionTooLarge = errors.New("forwardedProps.a2uiAction is too large")
	ErrA2UINotActive      = errors.New("the agent did not activate A2UI")
)

// maxA2UIName bounds an action's name, surface and component ids.
const maxA2UIName = 256

// A2UIActionOptions configure A2UIActionPart.
type A2UIActionOptions struct {
	// MaxBytes bounds the action's JSON; default DefaultMaxA2UIActionBytes.
	MaxBytes int
	// Now stamps an action the client sent without a timestamp (the A2UI
	// schemas require one); nil leaves it out.
	Now func() time.Time
}

// forwardedMember returns one member of forwardedProps when they are a
// JSON object holding it.
func forwardedMember(forwardedProps json.RawMessage, name string) json.RawMessage {
	var fp map[string]json.RawMessage
	if json.Unmarshal(forwardedProps, &fp) != nil {
		return nil
	}
	if raw := fp[name]; !isNull(raw) {
		return raw
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// HasA2UIAction reports whether the run's forwardedProps carry an A2UI
// action.
func HasA2UIAction(forwardedProps json.RawMessage) bool {
	return forwardedMember(forwardedProps, ForwardedA2UIAction) != nil
}

// A2UIActionPart turns forwardedProps.a2uiAction into the A2UI data part
// the agent expects in the version it activated: v0.8 {userAction} as one
// object, v0.9 and later [{version, action}] as a list. Either form is
// accepted from the client. It returns nil without error when there is no
// action; ErrA2UINotActive when there is one and version is "";
// ErrA2UIActionInvalid or ErrA2UIActionTooLarge, wrapped with the reason,
// when the action is malformed or above the bound.
func A2UIActionPart(forwardedProps json.RawMessage, version A2UIVersion, opt A2UIActionOptions) (*a2a.Part, error) {
	raw := forwardedMember(forwardedProps, ForwardedA2UIAction)
	if raw == nil {
		return nil, nil
	}
	if version == "" {
		return nil, ErrA2UINotActive
	}
	limit := opt.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxA2UIActionBytes
	}
	if len(raw) > limit {
		return nil, fmt.Errorf("%w: %d bytes, above the limit of %d", ErrA2UIActionTooLarge, len(raw), limit)
	}
	action, err := decodeA2UIAction(raw, opt.Now)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrA2UIActionInvalid, err)
	}
	var data any
	if version == A2UIv08 {
		data = map[string]any{"userAction": action}
	} else {
		data = []any{map[string]any{"version": string(version), "action": action}}
	}
	p := a2a.NewDataPart(data)
	p.MediaType = version.MediaType()
	p.Metadata = map[string]any{"mimeType": version.MediaType()}
	return p, nil
}

// decodeA2UIAction validates an action in either form and returns its
// members the A2UI schemas define (client_to_server.json): name,
// surfaceId, sourceComponentId, timestamp, context.
func decodeA2UIAction(raw json.RawMessage, now func() time.Time) (map[string]any, error) {
	var wrapper map[string]json.RawMessage
	if err := json.Unmarshal(raw, &wrapper); err != nil || wrapper == nil {
		return nil, errors.New("it must be an object holding userAction (v0.8) or action (v0.9 and later)")
	}
	inner := wrapper["userAction"]
	if isNull(inner) {
		inner = wrapper["action"]
	}
	if isNull(inner) {
		return nil, errors.New("it holds neither userAction nor action")
	}
	var a struct {
		Name              *string         `json:"name"`
		SurfaceID         *string         `json:"surfaceId"`
		SourceComponentID *string         `json:"sourceComponentId"`
		Timestamp         *string         `json:"timestamp"`
		Context           json.RawMessage `json:"context"`
	}
	if err := json.Unmarshal(inner, &a); err != nil {
		return nil, fmt.Errorf("the action must be an object with string name, surfaceId, sourceComponentId and timestamp: %v", err)
	}
	out := map[string]any{}
	for _, f := range []struct {
		key      string
		v        *string
		required bool
	}{{"name", a.Name, true}, {"surfaceId", a.SurfaceID, true}, {"sourceComponentId", a.SourceComponentID, false}} {
		switch {
		case f.v == nil || *f.v == "":
			if f.required {
				return nil, fmt.Errorf("the action has no %s", f.key)
			}
		case len(*f.v) > maxA2UIName:
			return nil, fmt.Errorf("the action's %s is longer than %d bytes", f.key, maxA2UIName)
		default:
			out[f.key] = *f.v
		}
	}
	switch {
	case a.Timestamp != nil:
		if _, err := time.Parse(time.RFC3339Nano, *a.Timestamp); err != nil {
			return nil, fmt.Errorf("the action's timestamp is not an ISO 8601 date-time: %q", *a.Timestamp)
		}
		out["timestamp"] = *a.Timestamp
	case now != nil:
		out["timestamp"] = now().UTC().Format(time.RFC3339Nano)
	}
	ctx := map[string]any{}
	if !isNull(a.Context) {
		dec := json.NewDecoder(bytes.NewReader(a.Context))
		dec.UseNumber()
		if err := dec.Decode(&ctx); err != nil || ctx == nil {
			return nil, errors.New("the action's context must be an object")
		}
	}
	out["context"] = ctx
	return out, nil
}

// A2UIClientCapabilities is the renderer's capabilities object every
// message to the agent carries in its metadata: the client's own, when
// its forwardedProps hold one (under either name), else the catalogs given
// (default: the version's standard catalog), shaped as the version's
// schema says (v0.8: {supportedCatalogIds}; later: keyed by version).
func A2UIClientCapabilities(forwardedProps json.RawMessage, version A2UIVersion, catalogs []string) any {
	if caps := forwardedCapabilities(forwardedProps); caps != nil {
		return caps
	}
	if len(catalogs) == 0 {
		catalogs = []string{version.StandardCatalog()}
	}
	ids := make([]any, len(catalogs))
	for i, c := range catalogs {
		ids[i] = c
	}
	caps := map[string]any{"supportedCatalogIds": ids}
	if version == A2UIv08 {
		return caps
	}
	return map[string]any{string(version): caps}
}

// WithA2UICapabilities returns msg's metadata with the renderer's A2UI
// capabilities added under the name the version reads
// (A2UIVersion.CapabilitiesKey), copying rather than changing a shared map.
func WithA2UICapabilities(meta map[string]any, version A2UIVersion, caps any) map[string]any {
	out := maps.Clone(meta)
	if out == nil {
		out = map[string]any{}
	}
	out[version.CapabilitiesKey()] = caps
	return out
}

// A2UIActionSurfaceID is the surfaceId of an action part A2UIActionPart
// made ("" for any other part).
func A2UIActionSurfaceID(p *a2a.Part) string {
	var action any
	switch d := p.Data().(type) {
	case map[string]any:
		action = d["userAction"]
	case []any:
		if len(d) > 0 {
			if m, ok := d[0].(map[string]any); ok {
				action = m["action"]
			}
		}
	}
	m, _ := action.(map[string]any)
	id, _ := m["surfaceId"].(string)
	return id
}

// ShowsA2UISurface reports whether event, a journaled AG-UI event's JSON,
// shows the A2UI surface id: an a2ui-surface activity (snapshot or delta)
// or a CUSTOM a2ui event whose operations name it. A user's action is
// checked against the surfaces its thread has shown (issue 33 item 10), so
// a client cannot address to the agent an action on a surface the agent
// never drew.
func ShowsA2UISurface(event []byte, id string) bool {
	quoted, _ := json.Marshal(id)
	if id == "" || !bytes.Contains(event, quoted) {
		return false
	}
	var e struct {
		Type         string          `json:"type"`
		ActivityType string          `json:"activityType"`
		Name         string          `json:"name"`
		Content      json.RawMessage `json:"content"`
		Patch        json.RawMessage `json:"patch"`
		Value        json.RawMessage `json:"value"`
	}
	if json.Unmarshal(event, &e) != nil {
		return false
	}
	var body json.RawMessage
	switch {
	case e.Type == string(agui.EventActivitySnapshot) && e.ActivityType == A2UIActivityType:
		body = e.Content
	case e.Type == string(agui.EventActivityDelta) && e.ActivityType == A2UIActivityType:
		body = e.Patch
	case e.Type == string(agui.EventCustom) && strings.HasPrefix(e.Name, "a2ui"):
		body = e.Value
	default:
		return false
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	return namesSurface(v, id)
}

// namesSurface finds a "surfaceId": id member at any depth of v.
func namesSurface(v any, id string) bool {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x["surfaceId"].(string); ok && s == id {
			return true
		}
		for _, e := range x {
			if namesSurface(e, id) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if namesSurface(e, id) {
				return true
			}
		}
	}
	return false
}
