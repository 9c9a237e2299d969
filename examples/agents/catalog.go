package agents

import (
	"log/slog"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// DefaultDelay is the pause between streamed events when [Options.Delay] is zero:
// short, but long enough that a UI visibly streams.
const DefaultDelay = 30 * time.Millisecond

// Options configures the demo agents and their [Server].
type Options struct {
	// Delay is the pause between streamed events. Zero means DefaultDelay (30ms);
	// a negative value means no pause at all, which is what tests want.
	// The Blocking agent works for ten times this delay (300ms by default).
	Delay time.Duration
	// Logger receives the a2asrv server logs. Nil means they are discarded.
	Logger *slog.Logger
	// CallInterceptor, when set, also sees every call the agents receive,
	// on every binding (tests read what reached the agent: its service
	// parameters, such as the traceparent the bridge sends).
	CallInterceptor a2asrv.CallInterceptor
}

func (o Options) delay() time.Duration {
	switch {
	case o.Delay == 0:
		return DefaultDelay
	case o.Delay < 0:
		return 0
	default:
		return o.Delay
	}
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// Agent is one demo agent: its executor and what its card says about it.
type Agent struct {
	Name        string
	Description string
	Streaming   bool                 // the card's capabilities.streaming
	Extensions  []a2a.AgentExtension // the card's capabilities.extensions
	Skill       a2a.AgentSkill
	Executor    a2asrv.AgentExecutor
}

// Card returns the agent's card listing the given interfaces in order.
func (a Agent) Card(interfaces ...*a2a.AgentInterface) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:                a.Name,
		Description:         a.Description,
		Version:             "1.0.0",
		Provider:            &a2a.AgentProvider{Org: "a2a-agui-bridge demo", URL: "https://github.com/a2a-agui-bridge/bridge"},
		SupportedInterfaces: interfaces,
		Capabilities:        a2a.AgentCapabilities{Streaming: a.Streaming, Extensions: a.Extensions},
		DefaultInputModes:   []string{"text/plain"},
		DefaultOutputModes:  []string{"text/plain"},
		Skills:              []a2a.AgentSkill{a.Skill},
	}
}

// Agents returns every demo agent, in the order [Server.Names] reports them.
func Agents(opts Options) []Agent {
	return catalog(opts, nil)
}

func catalog(opts Options, quit <-chan struct{}) []Agent {
	d := opts.delay()
	return []Agent{
		{
			Name: "streamer", Streaming: true,
			Description: "Echoes your words in one text artifact streamed in five chunks.",
			Skill:       skill("stream", "Streamed answer", "Answers in one artifact sent as append/lastChunk chunks.", "streaming", "artifact"),
			Executor:    Streamer{Delay: d},
		},
		{
			Name: "narrator", Streaming: true,
			Description: "Reports progress in status messages, then answers in one artifact (ADK/Strands style).",
			Skill:       skill("narrate", "Narrated research", "Progress updates in WORKING status messages and a final artifact.", "status", "artifact"),
			Executor:    Narrator{Delay: d},
		},
		{
			Name: "chatter", Streaming: true,
			Description: "Answers only in incremental status messages and repeats the answer when completing.",
			Skill:       skill("chat", "Status chat", "Incremental text in WORKING status messages; COMPLETED repeats it.", "status", "incremental"),
			Executor:    Chatter{Delay: d},
		},
		{
			Name: "cumulative", Streaming: true,
			Description: "Answers only in status messages whose text grows each time.",
			Skill:       skill("cumulate", "Cumulative status", "Each WORKING status message holds the whole answer so far.", "status", "cumulative"),
			Executor:    Cumulative{Delay: d},
		},
		{
			Name: "repeater", Streaming: true,
			Description: "Streams its answer in status messages, then repeats it as an artifact.",
			Skill:       skill("repeat", "Status then artifact", "Incremental WORKING text followed by an artifact with the same text.", "status", "artifact"),
			Executor:    Repeater{Delay: d},
		},
		{
			Name: "replier", Streaming: true,
			Description: "Replies with a single message and never creates a task.",
			Skill:       skill("reply", "Direct reply", "Answers with one agent Message, no task.", "message"),
			Executor:    Replier{},
		},
		{
			Name: "failer", Streaming: true,
			Description: "Starts working, then fails with an upstream quota error.",
			Skill:       skill("fail", "Failure", "WORKING, then FAILED with a status message.", "error"),
			Executor:    Failer{Delay: d},
		},
		{
			Name: "rejecter", Streaming: true,
			Description: "Rejects every request: it only answers questions about travel.",
			Skill:       skill("reject", "Rejection", "REJECTED with a status message.", "error"),
			Executor:    Rejecter{},
		},
		{
			Name: "blocking", Streaming: false,
			Description: "Cannot stream: thinks for a while, then answers in one artifact.",
			Skill:       skill("block", "Blocking answer", "Use SendMessage and GetTask; streaming is not supported.", "blocking"),
			Executor:    Blocking{Work: 10 * d},
		},
		{
			Name: "asker", Streaming: true,
			Description: "Asks which city you mean, then tells you the weather there.",
			Skill:       skill("weather", "Weather", "INPUT_REQUIRED with a JSON schema, answered on the same task.", "input-required", "weather"),
			Executor:    Asker{Delay: d},
		},
		{
			Name: "approver", Streaming: true,
			Description: "Proposes booking a flight and books it only once you approve (or edit) the call.",
			Skill:       skill("book", "Flight booking", "INPUT_REQUIRED with an ADK long-running book_flight call; approve, deny or edit its args.", "input-required", "tool-approval"),
			Executor:    Approver{Delay: d},
		},
		{
			Name: "quiet-approver", Streaming: true,
			Description: "Like approver, but never echoes the call's result: it just books and answers, as ADK agents do.",
			Skill:       skill("book-quietly", "Flight booking (no echo)", "INPUT_REQUIRED with an ADK long-running book_flight call; answers without a function_response.", "input-required", "tool-approval"),
			Executor:    Approver{Delay: d, Quiet: true},
		},
		{
			Name: "signin", Streaming: true,
			Description: "Needs you to sign in (AUTH_REQUIRED), then finishes by itself once the credential arrives out of band.",
			Skill:       skill("files", "Your files", "AUTH_REQUIRED until POST /signin/authorize?task=ID, then completes on the same stream.", "auth-required"),
			Executor:    Signin{Delay: d, Quit: quit, gates: &gates{}},
		},
		{
			Name: "slow", Streaming: true,
			Description: "Works until canceled, sending a status update every 50ms.",
			Skill:       skill("wait", "Never finishes", "Keeps the task WORKING until CancelTask; for cancel and timeout tests.", "cancel", "timeout"),
			Executor:    Slow{Quit: quit},
		},
		{
			Name: "counter", Streaming: true,
			Description: "Counts to 100, one number every 100ms, in one streamed text artifact; stops when cancelled.",
			Skill:       skill("count", "Slow stream", "Artifact chunks every 100ms for 10s; CancelTask ends it CANCELED.", "cancel", "streaming"),
			Executor:    Counter{Quit: quit},
		},
		{
			Name: "latecomer", Streaming: true,
			Description: "Like counter, but says nothing at all for the first second, not even its task.",
			Skill:       skill("count-late", "Late slow stream", "No event for 1s, then counts like counter; for cancels before the task exists.", "cancel"),
			Executor:    Counter{StartDelay: time.Second, Quit: quit},
		},
		{
			Name: "stubborn", Streaming: true,
			Description: "Counts to 15 and refuses to be cancelled (TaskNotCancelable).",
			Skill:       skill("count-stubbornly", "Uncancelable stream", "Artifact chunks every 100ms; CancelTask fails with TaskNotCancelable; completes.", "cancel"),
			Executor:    Counter{Count: 15, RefuseCancel: true, Quit: quit},
		},
		{
			Name: "files", Streaming: true,
			Description: "Answers with a data artifact, a file artifact and a short text.",
			Skill:       skill("report", "Report", "Data, file (URL) and text artifacts.", "data", "file"),
			Executor:    Files{Delay: d},
		},
		{
			Name: "dashboard", Streaming: true, Extensions: []a2a.AgentExtension{UIExtension()},
			Description: "Builds a dashboard in the shared state: data artifacts updated in place, status data, UI state keys.",
			Skill:       skill("dashboard", "Dashboard", "Data artifacts with append (object and array), status data, ui-state parts; greets state.userName.", "state", "data", "extension"),
			Executor:    Dashboard{Delay: d},
		},
		{
			Name: "thinker", Streaming: true, Extensions: []a2a.AgentExtension{UIExtension()},
			Description: "Thinks out loud (thought parts), attaches a chart and a small text file, then answers.",
			Skill:       skill("think", "Reasoning", "Status messages marked as thoughts, file artifacts (URL and raw bytes), a text answer.", "reasoning", "file"),
			Executor:    Thinker{Delay: d},
		},
		{
			Name: "painter", Streaming: true, Extensions: []a2a.AgentExtension{UIExtension()},
			Description: "Asks the frontend to change the background with its change_background tool.",
			Skill:       skill("paint", "Frontend tool", "INPUT_REQUIRED with an ADK function_call naming a frontend tool; answers with its result.", "frontend-tools", "extension"),
			Executor:    Painter{Delay: d},
		},
		{
			Name: "booker", Streaming: true, Extensions: []a2a.AgentExtension{A2UIExtension(A2UIv08URI, A2UIv08Catalog)},
			Description: "Shows an A2UI v0.8 booking form and books the table when you submit it.",
			Skill:       skill("book-table", "Booking form", "A2UI v0.8 surface (surfaceUpdate, dataModelUpdate, beginRendering); its book action gets a confirmation.", "a2ui", "generative-ui"),
			Executor:    Booker{Delay: d},
		},
		{
			Name: "monitor", Streaming: true, Extensions: []a2a.AgentExtension{A2UIExtension(A2UIv09URI, A2UIv09Catalog)},
			Description: "Streams a live A2UI v0.9 dashboard whose data model updates as it runs.",
			Skill:       skill("dashboard-live", "Live dashboard", "A2UI v0.9 surface in a streamed artifact, then data model updates.", "a2ui", "generative-ui"),
			Executor:    Monitor{Delay: d},
		},
		{
			Name: "planner", Streaming: true, Extensions: []a2a.AgentExtension{A2UIExtension(A2UIv10URI, A2UIv10Catalog)},
			Description: "Shows an A2UI v1.0 planning card and confirms it when you press Confirm.",
			Skill:       skill("plan", "Planning card", "A2UI v1.0 surface in two parts (marked by mediaType, and by metadata.mimeType); its confirm action gets an answer.", "a2ui", "generative-ui"),
			Executor:    Planner{Delay: d},
		},
		{
			Name: "wizard", Streaming: true, Extensions: []a2a.AgentExtension{A2UIExtension(A2UIv09URI, A2UIv09Catalog)},
			Description: "Plans a trip in two A2UI v0.9 steps, each waiting for you in INPUT_REQUIRED.",
			Skill:       skill("plan-trip", "Two-step wizard", "INPUT_REQUIRED with an A2UI v0.9 surface per step; actions resume the task.", "a2ui", "input-required"),
			Executor:    Wizard{Delay: d},
		},
	}
}

func skill(id, name, description string, tags ...string) a2a.AgentSkill {
	return a2a.AgentSkill{ID: id, Name: name, Description: description, Tags: tags}
}

// Team is a demo team: demo agents behind one endpoint (config teams:).
type Team struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Strategy    string   `json:"strategy"`
	Members     []string `json:"members"`
}

// Teams returns the demo teams, one per strategy, over the demo agents.
func Teams() []Team {
	return []Team{
		{Name: "concierge", Strategy: "parallel", Members: []string{"asker", "approver"},
			Description: "The weather agent and the flight booker at once: each asks its question, one resume answers both."},
		{Name: "desk", Strategy: "router", Members: []string{"asker", "approver", "streamer"},
			Description: "Sends each message to the member whose skills match it (weather, flight booking, anything else)."},
		{Name: "pipeline", Strategy: "sequential", Members: []string{"narrator", "streamer"},
			Description: "The narrator researches; its answer becomes the streamer's input."},
	}
}
