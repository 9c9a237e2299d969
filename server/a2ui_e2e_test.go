package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/config"
	"github.com/a2a-agui-bridge/bridge/examples/agents"
	"github.com/a2a-agui-bridge/bridge/mapping"
)

// a2uiBody is a run whose forwardedProps are props.
func a2uiBody(thread, run string, v1 bool, props map[string]any, messages ...agui.Message) []byte {
	in := map[string]any{"threadId": thread, "runId": run, "messages": messages, "state": map[string]any{},
		"tools": []any{}, "context": []any{}, "forwardedProps": props}
	if messages == nil {
		in["messages"] = []any{}
	}
	if v1 {
		in["protocolVersion"] = "1.0"
	}
	b, _ := json.Marshal(in)
	return b
}

// surfaces folds a run's a2ui-surface activities the way the client's
// reducer does: each activity's content, snapshots replacing and deltas
// appending. It fails the test on an A2UI operation that leaked into the
// shared state or the text.
func (r runResult) surfaces(t *testing.T) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	decode := func(raw json.RawMessage) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("operation %s: %v", raw, err)
		}
		return m
	}
	for _, e := range r.events {
		switch e := e.(type) {
		case *agui.ActivitySnapshot:
			if e.ActivityType != mapping.A2UIActivityType {
				continue
			}
			b, _ := json.Marshal(e.Content)
			var c map[string][]json.RawMessage
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			if len(c["operations"]) != len(c["a2ui_operations"]) {
				t.Fatalf("operations and a2ui_operations differ: %s", b)
			}
			out[e.MessageID] = nil
			for _, op := range c["operations"] {
				out[e.MessageID] = append(out[e.MessageID], decode(op))
			}
		case *agui.ActivityDelta:
			for _, p := range e.Patch {
				if p.Op == "add" && p.Path == "/operations/-" {
					out[e.MessageID] = append(out[e.MessageID], decode(p.Value))
				}
			}
		case *agui.StateDelta, *agui.StateSnapshot, *agui.TextMessageContent:
			b, _ := agui.Marshal(e)
			for _, kind := range []string{"surfaceUpdate", "createSurface", "updateDataModel", "beginRendering"} {
				if strings.Contains(string(b), kind) {
					t.Fatalf("an A2UI operation reached the state or the text: %s", b)
				}
			}
		}
	}
	return out
}

// allOps are every operation of every surface, in no particular order.
func allOps(s map[string][]map[string]any) []map[string]any {
	var out []map[string]any
	for _, ops := range s {
		out = append(out, ops...)
	}
	return out
}

func opsJSON(ops []map[string]any) string {
	b, _ := json.Marshal(ops)
	return string(b)
}

// TestA2UIBookingForm: the booker's v0.8 form reaches a 1.0 client as one
// a2ui-surface activity; the user's action (the CopilotKit userAction
// form) goes back as an A2UI part of the agent's version, and the agent's
// answer and next surface follow. An older client under a2ui: auto does
// not activate A2UI: the agent answers in text and an action is refused.
func TestA2UIBookingForm(t *testing.T) {
	t.Parallel()
	b := startBridge(t, func(c *config.Config) {
		for _, a := range c.Agents {
			if a.Name == "booker" {
				c.Agents = append(c.Agents, config.Agent{Name: "booker-on", URL: a.URL, A2UI: config.A2UIOn})
				break
			}
		}
	})
	r := b.post(t, "booker", a2uiBody("th-book", "run-1", true, map[string]any{}, userMsg("u1", "A table please")))
	r.check(t, true)
	s := r.surfaces(t)
	if len(s) != 1 {
		t.Fatalf("want one surface activity, got %d:\n%s", len(s), r.body)
	}
	ops := opsJSON(allOps(s))
	for _, want := range []string{`"surfaceUpdate"`, `"dataModelUpdate"`, `"beginRendering"`, `"TextField"`} {
		if !strings.Contains(ops, want) {
			t.Fatalf("surface lacks %s: %s", want, ops)
		}
	}

	form := map[string]any{"name": "Ada", "date": "2026-12-31", "guests": 4, "terrace": true}
	action := map[string]any{mapping.ForwardedA2UIAction: map[string]any{"userAction": map[string]any{
		"name": "book", "surfaceId": agents.BookerSurface, "sourceComponentId": "book", "context": form}}}
	r2 := b.post(t, "booker", a2uiBody("th-book", "run-2", true, action, userMsg("u1", "A table please")))
	r2.check(t, true)
	r2.wantAnswerOnce(t, agents.BookedText(map[string]any{"name": "Ada", "date": "2026-12-31", "guests": 4}))
	if ops := opsJSON(allOps(r2.surfaces(t))); !strings.Contains(ops, "Booked a table for Ada") {
		t.Fatalf("the confirmation surface is missing: %s", ops)
	}

	old := b.post(t, "booker", a2uiBody("th-book-old", "run-1", false, map[string]any{}, userMsg("u1", "A table please")))
	old.check(t, false)
	old.wantAnswerOnce(t, agents.BookerNoUI)
	refused := b.post(t, "booker", a2uiBody("th-book-old", "run-2", false, action))
	if refused.status != http.StatusBadRequest || !strings.Contains(string(refused.body), tasksCode("a2ui_not_active")) {
		t.Fatalf("an action for an agent without A2UI: status %d %s", refused.status, refused.body)
	}

	// a2ui: on activates it for older clients too: CUSTOM a2ui events.
	on := b.post(t, "booker-on", a2uiBody("th-book-on", "run-1", false, map[string]any{}, userMsg("u1", "A table please")))
	on.check(t, false)
	var custom int
	for _, e := range on.events {
		if c, ok := e.(*agui.Custom); ok && c.Name == mapping.A2UICustomName && strings.Contains(string(c.Value), "beginRendering") {
			custom++
		}
	}
	if custom != 1 {
		t.Fatalf("want one CUSTOM a2ui with the form, got %d:\n%s", custom, on.body)
	}
}

func tasksCode(code string) string { return `"code":"` + code + `"` }

// TestA2UIWizardResumes: each step of the wizard waits in INPUT_REQUIRED
// with its surface; an action (the v0.9 form, no resume of its own)
// answers the interrupt, and the client's own catalog reached the agent.
func TestA2UIWizardResumes(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	const mine = "https://example.com/my_catalog.json"
	caps := map[string]any{mapping.ForwardedA2UICapabilities: map[string]any{"v0.9": map[string]any{"supportedCatalogIds": []string{mine}}}}
	r := b.post(t, "wizard", a2uiBody("th-wiz", "run-1", true, caps, userMsg("u1", "Plan a trip")))
	r.check(t, true)
	if o := r.outcome(); o == nil || o.Type != agui.OutcomeInterrupt {
		t.Fatalf("step 1 must interrupt:\n%s", r.body)
	}
	if ops := opsJSON(allOps(r.surfaces(t))); !strings.Contains(ops, `"catalogId":"`+mine+`"`) || !strings.Contains(ops, `"destination"`) {
		t.Fatalf("step 1 surface (with the client's catalog): %s", ops)
	}
	next := map[string]any{mapping.ForwardedA2UIAction: map[string]any{"version": "v0.9", "action": map[string]any{
		"name": "next", "surfaceId": agents.WizardSurface, "sourceComponentId": "next", "context": map[string]any{"destination": "Lisbon"}}}}
	r2 := b.post(t, "wizard", a2uiBody("th-wiz", "run-2", true, next, userMsg("u1", "Plan a trip")))
	r2.check(t, true)
	if o := r2.outcome(); o == nil || o.Type != agui.OutcomeInterrupt {
		t.Fatalf("step 2 must interrupt:\n%s", r2.body)
	}
	if ops := opsJSON(allOps(r2.surfaces(t))); !strings.Contains(ops, "Plan a trip to Lisbon") {
		t.Fatalf("step 2 surface: %s", ops)
	}
	finish := map[string]any{mapping.ForwardedA2UIAction: map[string]any{"userAction": map[string]any{
		"name": "finish", "surfaceId": agents.WizardSurface, "context": map[string]any{"travellers": 3}}}}
	r3 := b.post(t, "wizard", a2uiBody("th-wiz", "run-3", true, finish, userMsg("u1", "Plan a trip")))
	r3.check(t, true)
	r3.wantAnswerOnce(t, agents.WizardDone("Lisbon", 3))
	if ops := opsJSON(allOps(r3.surfaces(t))); !strings.Contains(ops, "deleteSurface") {
		t.Fatalf("the wizard's surface is not deleted: %s", ops)
	}
}

// TestA2UILiveDashboard: the monitor's streamed artifact is one activity;
// every change of it is a full snapshot with replace: true (no delta, as
// @ag-ui/a2ui-middleware sends surfaces: renderers such as assistant-ui's
// react-ag-ui read snapshots only), and the last one alone holds the last
// data model values.
func TestA2UILiveDashboard(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	r := b.post(t, "monitor", a2uiBody("th-mon", "run-1", true, map[string]any{}, userMsg("u1", "Show me")))
	r.check(t, true)
	r.wantAnswerOnce(t, agents.MonitorDone)
	s := r.surfaces(t)
	var snapshots, deltas int
	var last *agui.ActivitySnapshot
	for _, e := range r.events {
		switch e := e.(type) {
		case *agui.ActivitySnapshot:
			if e.ActivityType == mapping.A2UIActivityType {
				snapshots++
				last = e
				if e.Replace == nil || !*e.Replace {
					t.Fatalf("a surface snapshot without replace: true:\n%s", r.body)
				}
			}
		case *agui.ActivityDelta:
			deltas++
		}
	}
	if len(s) != 1 || snapshots != 1+agents.MonitorTicks || deltas != 0 {
		t.Fatalf("want one surface, a snapshot per change (%d) and no delta; %d surfaces, %d snapshots, %d deltas:\n%s",
			1+agents.MonitorTicks, len(s), snapshots, deltas, r.body)
	}
	b2, _ := json.Marshal(last.Content)
	if ops := string(b2); !strings.Contains(ops, `"value":"done"`) || !strings.Contains(ops, "load 50%") || !strings.Contains(ops, "createSurface") {
		t.Fatalf("the last snapshot does not hold the surface's current operations: %s", ops)
	}
}

// TestA2UIActionRefused: malformed and oversized actions are HTTP errors
// before anything reaches the agent.
func TestA2UIActionRefused(t *testing.T) {
	t.Parallel()
	b := startBridge(t, func(c *config.Config) { c.Limits.MaxA2UIActionBytes = 512 })
	for _, tc := range []struct {
		name   string
		action any
		status int
		code   string
	}{
		{"not an object", "click", http.StatusBadRequest, "a2ui_action_invalid"},
		{"no name", map[string]any{"userAction": map[string]any{"surfaceId": "booking"}}, http.StatusBadRequest, "a2ui_action_invalid"},
		{"too large", map[string]any{"userAction": map[string]any{"name": "book", "surfaceId": "booking",
			"context": map[string]any{"note": strings.Repeat("x", 600)}}}, http.StatusRequestEntityTooLarge, "a2ui_action_too_large"},
	} {
		r := b.post(t, "booker", a2uiBody("th-refuse-"+tc.code, "run-1", true, map[string]any{mapping.ForwardedA2UIAction: tc.action}))
		if r.status != tc.status || !strings.Contains(string(r.body), tasksCode(tc.code)) {
			t.Errorf("%s: status %d %s, want %d %s", tc.name, r.status, r.body, tc.status, tc.code)
		}
	}
}

// TestA2UIInATeam: in a parallel team, each member's surface is its own
// activity attributed to the member's invocation (subagentRunId), shown
// once.
func TestA2UIInATeam(t *testing.T) {
	t.Parallel()
	b := startBridge(t, func(c *config.Config) {
		c.Teams = append(c.Teams, config.Team{Name: "ui-team", Strategy: config.StrategyParallel, Members: []string{"booker", "monitor"}})
	})
	r := b.post(t, "ui-team", a2uiBody("th-team", "run-1", true, map[string]any{}, userMsg("u1", "Both please")))
	r.check(t, true)
	s := r.surfaces(t)
	if len(s) != 2 {
		t.Fatalf("want the two members' surfaces, got %d:\n%s", len(s), r.body)
	}
	members := map[string]string{} // activity id → subagentRunId
	for _, e := range r.events {
		if a, ok := e.(*agui.ActivitySnapshot); ok && a.ActivityType == mapping.A2UIActivityType {
			if a.SubagentRunID == "" {
				t.Fatalf("an activity without subagentRunId: %+v", a)
			}
			members[a.MessageID] = a.SubagentRunID
		}
	}
	if len(members) != 2 || members[firstKey(s, agents.BookerSurface)] == members[firstKey(s, agents.MonitorSurface)] {
		t.Fatalf("surfaces not attributed to two members: %v", members)
	}
	if n := strings.Count(opsJSON(allOps(s)), `"beginRendering"`); n != 1 {
		t.Fatalf("the booking form is shown %d times", n)
	}
}

// firstKey is the activity whose operations address surface.
func firstKey(s map[string][]map[string]any, surface string) string {
	for id, ops := range s {
		if strings.Contains(opsJSON(ops), `"surfaceId":"`+surface+`"`) {
			return id
		}
	}
	return ""
}

// TestA2UIActionWithResume: a 1.0 client must address pending interrupts
// itself (@ag-ui/client refuses a run that does not), so the action comes
// with a resume; the action is still the answer the agent gets. A resume
// that cancels cannot come with an action.
func TestA2UIActionWithResume(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	r := b.post(t, "wizard", a2uiBody("th-wiz-resume", "run-1", true, map[string]any{}, userMsg("u1", "Plan a trip")))
	r.check(t, true)
	o := r.outcome()
	if o == nil || len(o.Interrupts) != 1 {
		t.Fatalf("want one interrupt:\n%s", r.body)
	}
	action := map[string]any{"version": "v0.9", "action": map[string]any{"name": "next", "surfaceId": agents.WizardSurface,
		"sourceComponentId": "next", "context": map[string]any{"destination": "Porto"}}}
	body := func(run, status string) []byte {
		var in map[string]any
		_ = json.Unmarshal(a2uiBody("th-wiz-resume", run, true, map[string]any{mapping.ForwardedA2UIAction: action}, userMsg("u1", "Plan a trip")), &in)
		in["resume"] = []any{map[string]any{"interruptId": o.Interrupts[0].ID, "status": status, "payload": action}}
		b, _ := json.Marshal(in)
		return b
	}
	cancel := b.post(t, "wizard", body("run-2", "cancelled"))
	if cancel.status != http.StatusBadRequest || !strings.Contains(string(cancel.body), tasksCode("a2ui_action_invalid")) {
		t.Fatalf("an action with a cancelling resume: %d %s", cancel.status, cancel.body)
	}
	r2 := b.post(t, "wizard", body("run-3", "resolved"))
	r2.check(t, true)
	if ops := opsJSON(allOps(r2.surfaces(t))); !strings.Contains(ops, "Plan a trip to Porto") {
		t.Fatalf("step 2 surface: %s\n%s", ops, r2.body)
	}
}

// extensionsSeen records the A2A-Extensions of every call the demo agents
// receive, by method.
type extensionsSeen struct {
	a2asrv.PassthroughCallInterceptor
	mu   sync.Mutex
	seen []string // "method extensions"
}

func (e *extensionsSeen) Before(ctx context.Context, cc *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	v, _ := cc.ServiceParams().Get("A2A-Extensions")
	e.mu.Lock()
	e.seen = append(e.seen, cc.Method()+" "+strings.Join(v, ","))
	e.mu.Unlock()
	return ctx, nil, nil
}

// TestA2UIOnEveryCall: every call of a run activates the agent's A2UI
// version — the send, and the CancelTask of a resume that cancels the
// wizard's question — and only that version, once.
func TestA2UIOnEveryCall(t *testing.T) {
	t.Parallel()
	seen := &extensionsSeen{}
	b := startBridgeWith(t, agents.Options{Delay: -1, CallInterceptor: seen}, nil)
	r := b.post(t, "wizard", a2uiBody("th-every", "run-1", true, map[string]any{}, userMsg("u1", "Plan a trip")))
	r.check(t, true)
	o := r.outcome()
	if o == nil || len(o.Interrupts) != 1 {
		t.Fatalf("want one interrupt:\n%s", r.body)
	}
	var in map[string]any
	_ = json.Unmarshal(a2uiBody("th-every", "run-2", true, map[string]any{}), &in)
	in["resume"] = []any{map[string]any{"interruptId": o.Interrupts[0].ID, "status": "cancelled"}}
	body, _ := json.Marshal(in)
	r2 := b.post(t, "wizard", body)
	r2.check(t, true)
	seen.mu.Lock()
	defer seen.mu.Unlock()
	methods := map[string]bool{}
	for _, s := range seen.seen {
		method, exts, _ := strings.Cut(s, " ")
		methods[method] = true
		if exts != agents.A2UIv09URI {
			t.Errorf("%s carried A2A-Extensions %q, want %q", method, exts, agents.A2UIv09URI)
		}
	}
	if !methods["SendStreamingMessage"] || !methods["CancelTask"] {
		t.Fatalf("calls seen: %v", seen.seen)
	}
}

// TestA2UIForARendererBefore1_0: CopilotKit 1.74 runs on @ag-ui/client
// 0.0.59 (no protocolVersion) and says it renders A2UI in forwardedProps
// (a2uiCatalogAvailable), as any client may with a2uiClientCapabilities:
// A2UI is activated under a2ui: auto and its surfaces come as activities,
// which 0.0.59 takes; the stream holds to 0.0.59's rules.
func TestA2UIForARendererBefore1_0(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	for i, props := range []map[string]any{
		{mapping.ForwardedCopilotKitCatalog: true},
		{mapping.ForwardedA2UICapabilities: map[string]any{"supportedCatalogIds": []string{agents.A2UIv08Catalog}}},
	} {
		thread := "th-pre10-" + strconv.Itoa(i)
		r := b.post(t, "booker", a2uiBody(thread, "run-1", false, props, userMsg("u1", "A table please")))
		if r.status != http.StatusOK {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		v := agui.NewVerifier(agui.Gen0_0_59)
		for i, e := range r.events {
			if err := v.Check(e); err != nil {
				t.Fatalf("event %d: %v\n%s", i, err, r.body)
			}
		}
		if s := r.surfaces(t); len(s) != 1 || !strings.Contains(opsJSON(allOps(s)), `"beginRendering"`) {
			t.Fatalf("props %v: want the form as one activity:\n%s", props, r.body)
		}
	}
	// Without the signal an older client under auto gets the agent's text.
	r := b.post(t, "booker", a2uiBody("th-pre10-none", "run-1", false, map[string]any{mapping.ForwardedCopilotKitCatalog: false}, userMsg("u1", "A table please")))
	r.check(t, false)
	r.wantAnswerOnce(t, agents.BookerNoUI)
}

// TestA2UIDashboardRefresh: the dashboard's Refresh button (its action, a
// new turn: the task completed) runs it again.
func TestA2UIDashboardRefresh(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	r := b.post(t, "monitor", a2uiBody("th-refresh", "run-1", true, map[string]any{}, userMsg("u1", "Show me")))
	r.check(t, true)
	refresh := map[string]any{mapping.ForwardedA2UIAction: map[string]any{"version": "v0.9", "action": map[string]any{
		"name": "refresh", "surfaceId": agents.MonitorSurface, "sourceComponentId": "refresh", "context": map[string]any{"status": "done"}}}}
	r2 := b.post(t, "monitor", a2uiBody("th-refresh", "run-2", true, refresh, userMsg("u1", "Show me")))
	r2.check(t, true)
	r2.wantAnswerOnce(t, agents.MonitorRefreshed)
	if ops := opsJSON(allOps(r2.surfaces(t))); !strings.Contains(ops, `"value":"refreshed"`) {
		t.Fatalf("the refreshed dashboard: %s", ops)
	}
}

// TestA2UICapabilities: GET /agents/{name} says which A2UI versions the
// agent's card lists and how the bridge activates them.
func TestA2UICapabilities(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	for agent, want := range map[string]string{
		"booker":   `{"activityType":"a2ui-surface","mode":"auto","supported":true,"versions":["v0.8"]}`,
		"wizard":   `{"activityType":"a2ui-surface","mode":"auto","supported":true,"versions":["v0.9"]}`,
		"streamer": `{"activityType":"a2ui-surface","mode":"auto","supported":false,"versions":[]}`,
	} {
		resp, err := http.Get(b.url + "/agents/" + agent)
		if err != nil {
			t.Fatal(err)
		}
		var info struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		}
		err = json.NewDecoder(resp.Body).Decode(&info)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := string(info.Capabilities["a2ui"]); got != want {
			t.Errorf("%s: capabilities.a2ui = %s, want %s", agent, got, want)
		}
	}
}

// TestA2UIv10Planner: the planner's card lists only A2UI v1.0. The bridge
// activates v1.0 and sends the renderer's capabilities as
// a2uiRendererCapabilities (without them the agent shows no UI, A2UI
// #2677); both of its parts are shown in one surface, the one marked by
// mediaType alone and the one marked by metadata.mimeType beside the
// generic mediaType application/json; an action reaches the agent as a
// v1.0 A2UI part and gets its answer.
func TestA2UIv10Planner(t *testing.T) {
	t.Parallel()
	b := startBridge(t, nil)
	r := b.post(t, "planner", a2uiBody("th-plan", "run-1", true, map[string]any{}, userMsg("u1", "Plan it")))
	r.check(t, true)
	s := r.surfaces(t)
	if len(s) != 1 {
		t.Fatalf("want one surface activity, got %d:\n%s", len(s), r.body)
	}
	ops := opsJSON(allOps(s))
	for _, want := range []string{`"createSurface"`, `"updateComponents"`, `"window seat"`, `"version":"v1.0"`, agents.A2UIv10Catalog} {
		if !strings.Contains(ops, want) {
			t.Fatalf("surface lacks %s: %s", want, ops)
		}
	}
	if strings.Contains(string(r.body), "statusData") || strings.Contains(string(r.body), agents.PlannerNoUI) {
		t.Fatalf("an A2UI part went to state, or the agent got no renderer capabilities:\n%s", r.body)
	}

	action := map[string]any{mapping.ForwardedA2UIAction: map[string]any{"version": "v1.0", "action": map[string]any{
		"name": "confirm", "surfaceId": agents.PlannerSurface, "sourceComponentId": "confirm",
		"timestamp": "2026-12-06T05:00:00Z", "context": map[string]any{"note": "aisle"}}}}
	r2 := b.post(t, "planner", a2uiBody("th-plan", "run-2", true, action, userMsg("u1", "Plan it")))
	r2.check(t, true)
	r2.wantAnswerOnce(t, agents.PlannerConfirmed("aisle"))
}
