package agents

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// The A2UI demo agents (github.com/google/A2UI): [Booker] speaks v0.8,
// [Monitor] and [Wizard] v0.9. Each lists its version in its card
// (capabilities.extensions with params.supportedCatalogIds), sends surfaces
// only when the request activated that version (the A2A-Extensions service
// parameter) and answers in text otherwise, as the extension specification
// asks of an agent.

// A2UI extension URIs, catalogs and the part media type the demo agents use.
const (
	A2UIv08URI       = "https://a2ui.org/a2a-extension/a2ui/v0.8"
	A2UIv09URI       = "https://a2ui.org/a2a-extension/a2ui/v0.9"
	A2UIv08Catalog   = "https://a2ui.org/specification/v0_8/standard_catalog_definition.json"
	A2UIv09Catalog   = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
	A2UIMediaType    = "application/json+a2ui"
	BookerSurface    = "booking"
	MonitorSurface   = "monitor"
	WizardSurface    = "wizard"
	BookerNoUI       = "I show a booking form to clients that activate A2UI v0.8; tell me your name, the date and how many guests."
	MonitorTicks     = 5
	MonitorDone      = "The dashboard finished its run."
	MonitorRefreshed = "The dashboard refreshed at your request."
	WizardFirstStep  = "Step 1 of 2: where do you want to go?"
	WizardSecondStep = "Step 2 of 2: how many travellers?"
)

// A2UIExtension is the card entry for the A2UI version uri.
func A2UIExtension(uri, catalog string) a2a.AgentExtension {
	return a2a.AgentExtension{URI: uri, Description: "Sends A2UI surfaces and takes the user's actions on them.",
		Params: map[string]any{"supportedCatalogIds": []any{catalog}}}
}

// A2UIPart is an A2UI data part holding data (a v0.8 message or a v0.9
// list), marked as the extension specification says (metadata mimeType).
func A2UIPart(data any) *a2a.Part {
	return &a2a.Part{Content: a2a.Data{Value: data}, MediaType: A2UIMediaType,
		Metadata: map[string]any{"mimeType": A2UIMediaType}}
}

// A2UIAction is a user's action the agent received.
type A2UIAction struct {
	Name      string
	SurfaceID string
	Context   map[string]any
}

// actionFrom finds the user's A2UI action in m: a v0.8 {userAction} part
// or a v0.9 [{action}] list.
func actionFrom(m *a2a.Message) (A2UIAction, bool) {
	if m == nil {
		return A2UIAction{}, false
	}
	for _, p := range m.Parts {
		if p == nil || !isA2UI(p) {
			continue
		}
		items, ok := p.Data().([]any)
		if !ok {
			items = []any{p.Data()}
		}
		for _, it := range items {
			obj, _ := it.(map[string]any)
			act, _ := obj["userAction"].(map[string]any)
			if act == nil {
				act, _ = obj["action"].(map[string]any)
			}
			if act == nil {
				continue
			}
			a := A2UIAction{}
			a.Name, _ = act["name"].(string)
			a.SurfaceID, _ = act["surfaceId"].(string)
			a.Context, _ = act["context"].(map[string]any)
			return a, true
		}
	}
	return A2UIAction{}, false
}

// isA2UI reports a part marked as A2UI by either field, in either spelling.
func isA2UI(p *a2a.Part) bool {
	for _, mt := range []any{p.MediaType, p.Metadata["mimeType"]} {
		if mt == A2UIMediaType || mt == A2UIv10MediaType {
			return true
		}
	}
	return false
}

// clientCatalog is the first catalog the client's a2uiClientCapabilities
// name for the version (key "" for v0.8's unkeyed form), else def.
func clientCatalog(m *a2a.Message, version, def string) string {
	if m == nil {
		return def
	}
	caps, _ := m.Metadata["a2uiClientCapabilities"].(map[string]any)
	if version != "" {
		caps, _ = caps[version].(map[string]any)
	}
	ids, _ := caps["supportedCatalogIds"].([]any)
	if len(ids) > 0 {
		if s, ok := ids[0].(string); ok && s != "" {
			return s
		}
	}
	return def
}

func lit(s string) map[string]any { return map[string]any{"literalString": s} }

func path(p string) map[string]any { return map[string]any{"path": p} }

// v08 is one v0.8 component: {"id", "component": {kind: props}}.
func v08(id, kind string, props map[string]any) map[string]any {
	return map[string]any{"id": id, "component": map[string]any{kind: props}}
}

// BookedText is the [Booker]'s answer to a submitted form.
func BookedText(ctx map[string]any) string {
	return fmt.Sprintf("Booked a table for %v on %v for %v guests.", ctx["name"], ctx["date"], ctx["guests"])
}

// Booker shows a v0.8 booking form (surface "booking": a heading, text,
// date, guests and a checkbox, a Book button whose action "book" carries
// the form's values) and completes. A message carrying the user's "book"
// action answers [BookedText] as an artifact and replaces the form with a
// confirmation on the same surface:
//
//	Task{SUBMITTED} → Status{WORKING, message: text, surfaceUpdate, dataModelUpdate, beginRendering}
//	→ Status{COMPLETED}
//	(action) Task{SUBMITTED} → Status{WORKING, message: surfaceUpdate} → Artifact{"booking", [BookedText]} → Status{COMPLETED}
type Booker struct {
	cancelOnly
	Delay time.Duration
}

// Execute implements [a2asrv.AgentExecutor].
func (b Booker) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, b.Delay, func(r *run) {
		if !r.start() {
			return
		}
		if !requested(ec, A2UIv08URI) {
			if r.artifact("answer", a2a.NewTextPart(BookerNoUI)) {
				r.status(a2a.TaskStateCompleted, "")
			}
			return
		}
		if act, ok := actionFrom(ec.Message); ok && act.Name == "book" {
			confirm := map[string]any{"surfaceUpdate": map[string]any{"surfaceId": BookerSurface, "components": []any{
				v08("root", "Column", map[string]any{"children": map[string]any{"explicitList": []any{"title", "summary"}}}),
				v08("title", "Text", map[string]any{"text": lit("Booked"), "usageHint": "h2"}),
				v08("summary", "Text", map[string]any{"text": lit(BookedText(act.Context))}),
			}}}
			if !r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, r.agentMessage(A2UIPart(confirm)))) || !r.pause() {
				return
			}
			if r.artifact("booking", a2a.NewTextPart(BookedText(act.Context))) {
				r.status(a2a.TaskStateCompleted, "")
			}
			return
		}
		form := map[string]any{"surfaceUpdate": map[string]any{"surfaceId": BookerSurface, "components": []any{
			v08("root", "Card", map[string]any{"child": "form"}),
			v08("form", "Column", map[string]any{"children": map[string]any{"explicitList": []any{"title", "name", "date", "guests", "terrace", "book"}}}),
			v08("title", "Text", map[string]any{"text": lit("Book a table"), "usageHint": "h2"}),
			v08("name", "TextField", map[string]any{"label": lit("Name"), "text": path("/booking/name"), "textFieldType": "shortText"}),
			v08("date", "DateTimeInput", map[string]any{"value": path("/booking/date"), "enableDate": true, "enableTime": false}),
			v08("guests", "Slider", map[string]any{"value": path("/booking/guests"), "minValue": 1, "maxValue": 12}),
			v08("terrace", "CheckBox", map[string]any{"label": lit("Terrace"), "value": path("/booking/terrace")}),
			v08("book", "Button", map[string]any{"child": "book-label", "primary": true, "action": map[string]any{"name": "book", "context": []any{
				map[string]any{"key": "name", "value": path("/booking/name")},
				map[string]any{"key": "date", "value": path("/booking/date")},
				map[string]any{"key": "guests", "value": path("/booking/guests")},
				map[string]any{"key": "terrace", "value": path("/booking/terrace")},
			}}}),
			v08("book-label", "Text", map[string]any{"text": lit("Book")}),
		}}}
		data := map[string]any{"dataModelUpdate": map[string]any{"surfaceId": BookerSurface, "path": "/booking", "contents": []any{
			map[string]any{"key": "name", "valueString": ""},
			map[string]any{"key": "date", "valueString": "2026-12-24"},
			map[string]any{"key": "guests", "valueNumber": 2},
			map[string]any{"key": "terrace", "valueBoolean": false},
		}}}
		begin := map[string]any{"beginRendering": map[string]any{"surfaceId": BookerSurface, "root": "root"}}
		msg := r.agentMessage(a2a.NewTextPart("Please fill in the booking form."), A2UIPart(form), A2UIPart(data), A2UIPart(begin))
		if r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, msg)) && r.pause() {
			r.status(a2a.TaskStateCompleted, "")
		}
	})
}

func v09(kind string, body map[string]any) map[string]any {
	return map[string]any{"version": "v0.9", kind: body}
}

// Monitor streams a live v0.9 dashboard in one artifact ("dashboard"):
// createSurface, updateComponents and updateDataModel first, then
// [MonitorTicks] data model updates of /load, /requests and /status
// appended to the artifact, then the text [MonitorDone] and COMPLETED. Its
// Refresh button's action ("refresh") runs it again: the last status is
// then "refreshed" and the answer [MonitorRefreshed].
type Monitor struct {
	cancelOnly
	Delay time.Duration
}

// Execute implements [a2asrv.AgentExecutor].
func (m Monitor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, m.Delay, func(r *run) {
		if !r.start() || !r.status(a2a.TaskStateWorking, "") {
			return
		}
		if !requested(ec, A2UIv09URI) {
			if r.artifact("answer", a2a.NewTextPart("I draw a live dashboard for clients that activate A2UI v0.9.")) {
				r.status(a2a.TaskStateCompleted, "")
			}
			return
		}
		catalog := clientCatalog(ec.Message, "v0.9", A2UIv09Catalog)
		act, acted := actionFrom(ec.Message)
		refreshed := acted && act.Name == "refresh"
		chunk := func(first, last bool, msgs ...any) bool {
			ev := a2a.NewArtifactEvent(ec, A2UIPart(msgs))
			ev.Artifact.ID, ev.Artifact.Name = "dashboard", "dashboard"
			ev.Append, ev.LastChunk = !first, last
			return r.emit(ev) && r.pause()
		}
		if !chunk(true, false,
			v09("createSurface", map[string]any{"surfaceId": MonitorSurface, "catalogId": catalog}),
			v09("updateComponents", map[string]any{"surfaceId": MonitorSurface, "components": []any{
				map[string]any{"id": "root", "component": "Column", "children": []any{"title", "row", "status", "refresh"}},
				map[string]any{"id": "title", "component": "Text", "text": "Service health", "variant": "h2"},
				map[string]any{"id": "row", "component": "Row", "children": []any{"load", "requests"}},
				map[string]any{"id": "load", "component": "Text", "text": path("/load")},
				map[string]any{"id": "requests", "component": "Text", "text": path("/requests")},
				map[string]any{"id": "status", "component": "Text", "text": path("/status"), "variant": "caption"},
				map[string]any{"id": "refresh", "component": "Button", "child": "refresh-label",
					"action": map[string]any{"event": map[string]any{"name": "refresh", "context": map[string]any{"status": path("/status")}}}},
				map[string]any{"id": "refresh-label", "component": "Text", "text": "Refresh"},
			}}),
			v09("updateDataModel", map[string]any{"surfaceId": MonitorSurface, "path": "/", "value": map[string]any{
				"load": "load 0%", "requests": "0 requests", "status": "starting"}})) {
			return
		}
		for i := 1; i <= MonitorTicks; i++ {
			last := i == MonitorTicks
			status := fmt.Sprintf("tick %d of %d", i, MonitorTicks)
			switch {
			case last && refreshed:
				status = "refreshed"
			case last:
				status = "done"
			}
			if !chunk(false, last,
				v09("updateDataModel", map[string]any{"surfaceId": MonitorSurface, "path": "/load", "value": fmt.Sprintf("load %d%%", 10*i)}),
				v09("updateDataModel", map[string]any{"surfaceId": MonitorSurface, "path": "/requests", "value": fmt.Sprintf("%d requests", 100*i)}),
				v09("updateDataModel", map[string]any{"surfaceId": MonitorSurface, "path": "/status", "value": status})) {
				return
			}
		}
		answer := MonitorDone
		if refreshed {
			answer = MonitorRefreshed
		}
		if r.artifact("answer", a2a.NewTextPart(answer)) {
			r.status(a2a.TaskStateCompleted, "")
		}
	})
}

// WizardDone is the [Wizard]'s answer.
func WizardDone(dest, travellers any) string {
	return fmt.Sprintf("Your trip to %v for %v travellers is planned.", dest, travellers)
}

// Wizard plans a trip in two v0.9 steps, each waiting in INPUT_REQUIRED
// with a surface ("wizard") whose button's action answers it:
//
//	Task{SUBMITTED} → Status{INPUT_REQUIRED, message: [WizardFirstStep], createSurface, updateComponents, updateDataModel}
//	(action "next", context {destination}) → Status{WORKING} → Status{INPUT_REQUIRED, [WizardSecondStep], updateComponents, updateDataModel}
//	(action "finish", context {travellers}) → Status{WORKING} → Status{WORKING, deleteSurface}
//	→ Artifact{"trip", [WizardDone]} → Status{COMPLETED}
//
// A plain text answer works for either step too.
type Wizard struct {
	cancelOnly
	Delay time.Duration
}

// Execute implements [a2asrv.AgentExecutor].
func (w Wizard) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, w.Delay, func(r *run) {
		if !r.start() {
			return
		}
		ui := requested(ec, A2UIv09URI)
		catalog := clientCatalog(ec.Message, "v0.9", A2UIv09Catalog)
		// The destination rides on the second question (its message
		// metadata), which the task keeps until the answer.
		var dest any
		ask := func(text string, msgs ...any) {
			parts := []*a2a.Part{a2a.NewTextPart(text)}
			if ui && len(msgs) > 0 {
				parts = append(parts, A2UIPart(msgs))
			}
			q := r.agentMessage(parts...)
			if dest != nil {
				q.Metadata = map[string]any{"destination": dest}
			}
			r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, q))
		}
		answer := func(key string) (any, bool) {
			if act, ok := actionFrom(ec.Message); ok {
				v, ok := act.Context[key]
				return v, ok
			}
			if t := userText(ec.Message); t != "" {
				return t, true
			}
			return nil, false
		}
		step := 0
		if st := ec.StoredTask; st != nil && st.Status.State == a2a.TaskStateInputRequired {
			step = 1
			if q := st.Status.Message; q != nil && q.Metadata["destination"] != nil {
				step, dest = 2, q.Metadata["destination"]
			}
		}
		switch step {
		case 0:
			ask(WizardFirstStep,
				v09("createSurface", map[string]any{"surfaceId": WizardSurface, "catalogId": catalog}),
				v09("updateComponents", map[string]any{"surfaceId": WizardSurface, "components": []any{
					map[string]any{"id": "root", "component": "Column", "children": []any{"title", "destination", "next"}},
					map[string]any{"id": "title", "component": "Text", "text": "Plan a trip (1/2)", "variant": "h3"},
					map[string]any{"id": "destination", "component": "TextField", "label": "Destination", "value": path("/destination")},
					map[string]any{"id": "next", "component": "Button", "child": "next-label", "variant": "primary",
						"action": map[string]any{"event": map[string]any{"name": "next", "context": map[string]any{"destination": path("/destination")}}}},
					map[string]any{"id": "next-label", "component": "Text", "text": "Next"},
				}}),
				v09("updateDataModel", map[string]any{"surfaceId": WizardSurface, "path": "/", "value": map[string]any{"destination": ""}}))
		case 1:
			d, ok := answer("destination")
			if !ok || !r.status(a2a.TaskStateWorking, "") {
				ask(WizardFirstStep)
				return
			}
			dest = d
			ask(WizardSecondStep,
				v09("updateComponents", map[string]any{"surfaceId": WizardSurface, "components": []any{
					map[string]any{"id": "root", "component": "Column", "children": []any{"title", "travellers", "finish"}},
					map[string]any{"id": "title", "component": "Text", "text": fmt.Sprintf("Plan a trip to %v (2/2)", d), "variant": "h3"},
					map[string]any{"id": "travellers", "component": "Slider", "label": "Travellers", "min": 1, "max": 9, "value": path("/travellers")},
					map[string]any{"id": "finish", "component": "Button", "child": "finish-label", "variant": "primary",
						"action": map[string]any{"event": map[string]any{"name": "finish", "context": map[string]any{"travellers": path("/travellers")}}}},
					map[string]any{"id": "finish-label", "component": "Text", "text": "Finish"},
				}}),
				v09("updateDataModel", map[string]any{"surfaceId": WizardSurface, "path": "/travellers", "value": 2}))
		case 2:
			n, ok := answer("travellers")
			if !ok || !r.status(a2a.TaskStateWorking, "") {
				ask(WizardSecondStep)
				return
			}
			if ui && !r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, r.agentMessage(A2UIPart([]any{
				v09("deleteSurface", map[string]any{"surfaceId": WizardSurface})})))) {
				return
			}
			if r.artifact("trip", a2a.NewTextPart(WizardDone(dest, n))) {
				r.status(a2a.TaskStateCompleted, "")
			}
		}
	})
}

// The [Planner]'s A2UI v1.0 names (A2UI v0.10 renamed v1.0, A2UI #1563).
const (
	A2UIv10URI       = "https://a2ui.org/a2a-extension/a2ui/v1.0"
	A2UIv10Catalog   = "https://a2ui.org/specification/v1_0/catalogs/basic/catalog.json"
	A2UIv10MediaType = "application/a2ui+json"
	PlannerSurface   = "planner"
	PlannerNoUI      = "I show a planning card to clients that activate A2UI v1.0 and send a2uiRendererCapabilities."
)

// PlannerConfirmed is the [Planner]'s answer to its confirm action.
func PlannerConfirmed(note any) string { return fmt.Sprintf("Planner confirmed: %v.", note) }

// Planner speaks A2UI v1.0 only. Its card declares the v1.0 extension; it
// shows its surface only when the call activated v1.0 and the message
// carries a2uiRendererCapabilities (capabilities apply per turn: a message
// without them withdraws A2UI for that turn, A2UI #2677), else it answers
// [PlannerNoUI]. The surface comes in two parts marked the two ways agents
// mark A2UI: the first by its A2A 1.0 mediaType alone, the second by
// metadata.mimeType beside the generic mediaType application/json (what an
// @a2a-js/sdk 1.x agent following the A2UI extension specification writes):
//
//	Task{SUBMITTED} → Status{WORKING, message: text, [createSurface, updateComponents], [updateDataModel]}
//	→ Status{COMPLETED}
//	(action "confirm", context {note}) → Artifact{"plan", [PlannerConfirmed]} → Status{COMPLETED}
type Planner struct {
	cancelOnly
	Delay time.Duration
}

// Execute implements [a2asrv.AgentExecutor].
func (p Planner) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, p.Delay, func(r *run) {
		if !r.start() {
			return
		}
		caps, _ := ec.Message.Metadata["a2uiRendererCapabilities"].(map[string]any)
		if !requested(ec, A2UIv10URI) || caps == nil {
			if r.artifact("answer", a2a.NewTextPart(PlannerNoUI)) {
				r.status(a2a.TaskStateCompleted, "")
			}
			return
		}
		if act, ok := actionFrom(ec.Message); ok && act.Name == "confirm" {
			if r.artifact("plan", a2a.NewTextPart(PlannerConfirmed(act.Context["note"]))) {
				r.status(a2a.TaskStateCompleted, "")
			}
			return
		}
		catalog := A2UIv10Catalog
		if v, _ := caps["v1.0"].(map[string]any); v != nil {
			if ids, _ := v["supportedCatalogIds"].([]any); len(ids) > 0 {
				if id, _ := ids[0].(string); id != "" {
					catalog = id
				}
			}
		}
		v10 := func(kind string, body map[string]any) map[string]any {
			return map[string]any{"version": "v1.0", kind: body}
		}
		byMediaType := &a2a.Part{Content: a2a.Data{Value: []any{
			v10("createSurface", map[string]any{"surfaceId": PlannerSurface, "catalogId": catalog}),
			v10("updateComponents", map[string]any{"surfaceId": PlannerSurface, "components": []any{
				map[string]any{"id": "root", "component": "Column", "children": []any{"title", "note", "confirm"}},
				// No "h3": v1.0's basic catalog has Text variants caption and body only.
				map[string]any{"id": "title", "component": "Text", "text": "Plan (A2UI v1.0)"},
				map[string]any{"id": "note", "component": "TextField", "label": "Note", "value": path("/note")},
				map[string]any{"id": "confirm", "component": "Button", "child": "confirm-label", "variant": "primary",
					"action": map[string]any{"event": map[string]any{"name": "confirm", "context": map[string]any{"note": path("/note")}}}},
				map[string]any{"id": "confirm-label", "component": "Text", "text": "Confirm"},
			}}),
		}}, MediaType: A2UIv10MediaType}
		byMetadata := &a2a.Part{Content: a2a.Data{Value: []any{
			v10("updateDataModel", map[string]any{"surfaceId": PlannerSurface, "path": "/", "value": map[string]any{"note": "window seat"}}),
		}}, MediaType: "application/json", Metadata: map[string]any{"mimeType": A2UIMediaType}}
		msg := r.agentMessage(a2a.NewTextPart("Here is your plan."), byMediaType, byMetadata)
		if r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, msg)) && r.pause() {
			r.status(a2a.TaskStateCompleted, "")
		}
	})
}

var (
	_ a2asrv.AgentExecutor = Planner{}
	_ a2asrv.AgentExecutor = Booker{}
	_ a2asrv.AgentExecutor = Monitor{}
	_ a2asrv.AgentExecutor = Wizard{}
)
