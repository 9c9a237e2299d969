package agents

import (
	"context"
	"iter"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Texts the agents send, exported so tests of other packages can assert on them.
const (
	FailerError      = "upstream LLM quota exceeded"
	RejecterReason   = "I only answer questions about travel."
	AskerQuestion    = "Which city should I check?"
	ChatterAnswer    = "Hello, world"
	CumulativeAnswer = "The answer is 42."
	RepeaterAnswer   = "The capital of France is Paris."
	BlockingAnswer   = "Done after a long think."
	FilesText        = "Here is your report."
	FilesReportURL   = "https://example.com/report.pdf"
	SchemaMediaType  = "application/schema+json"
)

// Defaults of the [Slow] agent.
const (
	DefaultSlowTick  = 50 * time.Millisecond
	DefaultSlowLimit = 5 * time.Minute
)

const (
	streamerChunks    = 5
	slowGaveUpMessage = "slow agent gave up waiting to be canceled"
)

// CitySchema is the JSON schema the [Asker] attaches to its question.
func CitySchema() map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required":   []any{"city"},
	}
}

// StreamerAnswer is the text the [Streamer] streams back for the user's text.
func StreamerAnswer(userText string) string {
	said := strings.TrimRight(userText, " .!?")
	if said == "" {
		said = "nothing"
	}
	return "You said: " + said + ". Here is a streamed answer."
}

// NarratorAnswer is the text of the [Narrator]'s final artifact.
func NarratorAnswer(userText string) string {
	if userText == "" {
		userText = "your question"
	}
	return "Here is what I found about “" + userText + "”: all sources agree."
}

// ReplierAnswer is the text of the [Replier]'s message.
func ReplierAnswer(userText string) string {
	return "Hello! You said: " + userText
}

// WeatherAnswer is the [Asker]'s answer once it knows the city.
func WeatherAnswer(city string) string {
	return "The weather in " + city + " is sunny."
}

// Status texts of the agents that answer in status messages; see each type's doc.
var (
	narratorProgress = []string{"Looking into it…", "Checking sources…", "Writing the answer…"}
	chatterPieces    = []string{"Hel", "lo, ", "world"}
	cumulativeSteps  = []string{"The", "The answer", CumulativeAnswer}
	repeaterPieces   = []string{"The capital ", "of France ", "is Paris."}
)

// Streamer answers in one text artifact streamed in chunks, the way most
// LLM-backed agents stream tokens.
//
//	Task{SUBMITTED} → Status{WORKING} → Artifact{append=false} → Artifact{append=true} ×3
//	→ Artifact{append=true, lastChunk=true} → Status{COMPLETED}
//
// The five chunks are text parts of one artifact named "answer"; joined they
// read [StreamerAnswer] of the user's text.
type Streamer struct {
	cancelOnly
	Delay time.Duration // pause before each chunk; 0 means none
}

// Execute implements [a2asrv.AgentExecutor].
func (a Streamer) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		if !r.start() || !r.status(a2a.TaskStateWorking, "") {
			return
		}
		var id a2a.ArtifactID
		chunks := splitWords(StreamerAnswer(userText(ec.Message)), streamerChunks)
		for i, chunk := range chunks {
			if !r.pause() {
				return
			}
			var ev *a2a.TaskArtifactUpdateEvent
			if i == 0 {
				ev = a2a.NewArtifactEvent(ec, a2a.NewTextPart(chunk))
				id = ev.Artifact.ID
			} else {
				ev = a2a.NewArtifactUpdateEvent(ec, id, a2a.NewTextPart(chunk))
			}
			ev.Artifact.Name = "answer" // on every chunk, so any chunk can be shown alone
			ev.LastChunk = i == len(chunks)-1
			if !r.emit(ev) {
				return
			}
		}
		r.status(a2a.TaskStateCompleted, "")
	})
}

// Narrator reports progress in status messages and answers in one final
// artifact, the way ADK and Strands agents do.
//
//	Task{SUBMITTED} → Status{WORKING "Looking into it…"} → Status{WORKING "Checking sources…"}
//	→ Status{WORKING "Writing the answer…"} → Artifact{append=false, lastChunk=true, [NarratorAnswer]}
//	→ Status{COMPLETED}
type Narrator struct {
	cancelOnly
	Delay time.Duration // pause before each progress update and the answer; 0 means none
}

// Execute implements [a2asrv.AgentExecutor].
func (a Narrator) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		if !r.start() {
			return
		}
		for _, text := range narratorProgress {
			if !r.pause() || !r.status(a2a.TaskStateWorking, text) {
				return
			}
		}
		if !r.pause() || !r.artifact("answer", a2a.NewTextPart(NarratorAnswer(userText(ec.Message)))) {
			return
		}
		r.status(a2a.TaskStateCompleted, "")
	})
}

// Chatter answers only in status messages carrying incremental text, and
// repeats the whole answer in the COMPLETED status; a client must show it once.
//
//	Task{SUBMITTED} → Status{WORKING "Hel"} → Status{WORKING "lo, "} → Status{WORKING "world"}
//	→ Status{COMPLETED "Hello, world"}
type Chatter struct {
	cancelOnly
	Delay time.Duration // pause before each piece; 0 means none
}

// Execute implements [a2asrv.AgentExecutor].
func (a Chatter) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		if !r.start() {
			return
		}
		for _, piece := range chatterPieces {
			if !r.pause() || !r.status(a2a.TaskStateWorking, piece) {
				return
			}
		}
		r.status(a2a.TaskStateCompleted, ChatterAnswer)
	})
}

// Cumulative answers only in status messages whose text grows: each one
// replaces the previous.
//
//	Task{SUBMITTED} → Status{WORKING "The"} → Status{WORKING "The answer"}
//	→ Status{WORKING "The answer is 42."} → Status{COMPLETED}
type Cumulative struct {
	cancelOnly
	Delay time.Duration // pause before each step; 0 means none
}

// Execute implements [a2asrv.AgentExecutor].
func (a Cumulative) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		if !r.start() {
			return
		}
		for _, step := range cumulativeSteps {
			if !r.pause() || !r.status(a2a.TaskStateWorking, step) {
				return
			}
		}
		r.status(a2a.TaskStateCompleted, "")
	})
}

// Repeater streams its answer as incremental status text and then repeats the
// full text as a final artifact; a client must not show the answer twice.
//
//	Task{SUBMITTED} → Status{WORKING "The capital "} → Status{WORKING "of France "}
//	→ Status{WORKING "is Paris."} → Artifact{append=false, lastChunk=true, "The capital of France is Paris."}
//	→ Status{COMPLETED}
type Repeater struct {
	cancelOnly
	Delay time.Duration // pause before each piece and the artifact; 0 means none
}

// Execute implements [a2asrv.AgentExecutor].
func (a Repeater) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		if !r.start() {
			return
		}
		for _, piece := range repeaterPieces {
			if !r.pause() || !r.status(a2a.TaskStateWorking, piece) {
				return
			}
		}
		if !r.pause() || !r.artifact("answer", a2a.NewTextPart(RepeaterAnswer)) {
			return
		}
		r.status(a2a.TaskStateCompleted, "")
	})
}

// Replier answers with one plain agent message and never creates a task.
//
//	Message{ROLE_AGENT, [ReplierAnswer]}
type Replier struct {
	cancelOnly
}

// Execute implements [a2asrv.AgentExecutor].
func (Replier) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, 0, func(r *run) {
		// No task: the message carries the context but no task ID, because
		// ec.TaskID names a task that will never exist.
		msg := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(ReplierAnswer(userText(ec.Message))))
		msg.ContextID = ec.ContextID
		r.emit(msg)
	})
}

// Failer fails after a short progress message.
//
//	Task{SUBMITTED} → Status{WORKING "Calling the model…"} → Status{FAILED "upstream LLM quota exceeded"}
type Failer struct {
	cancelOnly
	Delay time.Duration // pause before each status update; 0 means none
}

// Execute implements [a2asrv.AgentExecutor].
func (a Failer) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		if !r.start() || !r.pause() || !r.status(a2a.TaskStateWorking, "Calling the model…") || !r.pause() {
			return
		}
		r.status(a2a.TaskStateFailed, FailerError)
	})
}

// Rejecter rejects every request.
//
//	Task{SUBMITTED} → Status{REJECTED "I only answer questions about travel."}
type Rejecter struct {
	cancelOnly
}

// Execute implements [a2asrv.AgentExecutor].
func (Rejecter) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, 0, func(r *run) {
		if !r.start() {
			return
		}
		r.status(a2a.TaskStateRejected, RejecterReason)
	})
}

// Blocking is an agent whose card says it cannot stream: clients must use a
// blocking SendMessage (or poll GetTask). It works silently for Work, then answers.
//
//	Task{SUBMITTED} → Status{WORKING} → (Work) → Artifact{append=false, lastChunk=true, "Done after a long think."}
//	→ Status{COMPLETED}
type Blocking struct {
	cancelOnly
	Work time.Duration // how long the agent thinks before answering; 0 means not at all
}

// Execute implements [a2asrv.AgentExecutor].
func (a Blocking) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Work, func(r *run) {
		if !r.start() || !r.status(a2a.TaskStateWorking, "") || !r.pause() {
			return
		}
		if !r.artifact("answer", a2a.NewTextPart(BlockingAnswer)) {
			return
		}
		r.status(a2a.TaskStateCompleted, "")
	})
}

// Asker needs a second turn: it asks for a city and answers once it has one.
//
// First turn (the execution ends at INPUT_REQUIRED, so does the stream):
//
//	Task{SUBMITTED} → Status{WORKING} → Status{INPUT_REQUIRED, message parts:
//	  text "Which city should I check?", data [CitySchema] with mediaType "application/schema+json"}
//
// Next turn on the same task, with the city as a data part {"city": …} or as text
// (a2asrv sends no Task snapshot first on a follow-up):
//
//	Status{WORKING} → Artifact{append=false, lastChunk=true, "The weather in <city> is sunny."} → Status{COMPLETED}
//
// A follow-up without a city asks again (Status{WORKING} → Status{INPUT_REQUIRED …}).
type Asker struct {
	cancelOnly
	Delay time.Duration // pause before the question and the answer; 0 means none
}

// Execute implements [a2asrv.AgentExecutor].
func (a Asker) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		if !r.start() || !r.status(a2a.TaskStateWorking, "") || !r.pause() {
			return
		}
		resuming := ec.StoredTask != nil && ec.StoredTask.Status.State == a2a.TaskStateInputRequired
		city := cityFrom(ec.Message)
		if !resuming || city == "" {
			// The media type marks the part as the answer's schema; v0.3 data
			// parts cannot carry one, so the bridge's convention also accepts
			// it in the part's metadata.
			schema := &a2a.Part{Content: a2a.Data{Value: CitySchema()}, MediaType: SchemaMediaType,
				Metadata: map[string]any{"mediaType": SchemaMediaType}}
			question := r.agentMessage(a2a.NewTextPart(AskerQuestion), schema)
			r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, question))
			return
		}
		if !r.artifact("weather", a2a.NewTextPart(WeatherAnswer(city))) {
			return
		}
		r.status(a2a.TaskStateCompleted, "")
	})
}

// cityFrom reads the city from a data part {"city": "…"} or, failing that, the text.
func cityFrom(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		if obj, ok := p.Data().(map[string]any); ok {
			if city, ok := obj["city"].(string); ok && strings.TrimSpace(city) != "" {
				return strings.TrimSpace(city)
			}
		}
	}
	return strings.TrimRight(userText(m), " .!?")
}

// Slow works until it is canceled, emitting a WORKING status with no message
// every Tick, so that an idle stream still carries traffic. It is meant for
// cancel and timeout tests.
//
//	Task{SUBMITTED} → Status{WORKING} → Status{WORKING} every Tick … → Status{CANCELED} (from CancelTask)
//
// So that a forgotten task cannot run forever, it ends with Status{FAILED} after
// Limit, or as soon as Quit is closed (the [Server] closes it on shutdown).
type Slow struct {
	cancelOnly
	Tick  time.Duration   // interval between WORKING updates; 0 means DefaultSlowTick (50ms)
	Limit time.Duration   // give up after this long; 0 means DefaultSlowLimit (5 minutes)
	Quit  <-chan struct{} // closing it ends every running execution with FAILED; nil means never
}

// Execute implements [a2asrv.AgentExecutor].
func (a Slow) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	tick, limit := a.Tick, a.Limit
	if tick <= 0 {
		tick = DefaultSlowTick
	}
	if limit <= 0 {
		limit = DefaultSlowLimit
	}
	return execute(ctx, ec, 0, func(r *run) {
		if !r.start() || !r.status(a2a.TaskStateWorking, "") {
			return
		}
		ticker := time.NewTicker(tick)
		defer ticker.Stop()
		deadline := time.NewTimer(limit)
		defer deadline.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-a.Quit:
				r.status(a2a.TaskStateFailed, "agent is shutting down")
				return
			case <-deadline.C:
				r.status(a2a.TaskStateFailed, slowGaveUpMessage)
				return
			case <-ticker.C:
				if !r.status(a2a.TaskStateWorking, "") {
					return
				}
			}
		}
	})
}

// Files answers with a data artifact, a file artifact and a text artifact.
//
//	Task{SUBMITTED} → Status{WORKING} → Artifact{"rows", data {"rows":[1,2,3]}}
//	→ Artifact{"report", url "https://example.com/report.pdf", mediaType application/pdf, filename report.pdf}
//	→ Artifact{"summary", text "Here is your report."} → Status{COMPLETED}
//
// Every artifact is sent whole (append=false, lastChunk=true).
type Files struct {
	cancelOnly
	Delay time.Duration // pause before each artifact; 0 means none
}

// Execute implements [a2asrv.AgentExecutor].
func (a Files) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		if !r.start() || !r.status(a2a.TaskStateWorking, "") {
			return
		}
		report := a2a.NewFileURLPart(FilesReportURL, "application/pdf")
		report.Filename = "report.pdf"
		r.artifactsThenComplete(
			namedPart{"rows", a2a.NewDataPart(map[string]any{"rows": []any{1, 2, 3}})},
			namedPart{"report", report},
			namedPart{"summary", a2a.NewTextPart(FilesText)},
		)
	})
}

var (
	_ a2asrv.AgentExecutor = Streamer{}
	_ a2asrv.AgentExecutor = Narrator{}
	_ a2asrv.AgentExecutor = Chatter{}
	_ a2asrv.AgentExecutor = Cumulative{}
	_ a2asrv.AgentExecutor = Repeater{}
	_ a2asrv.AgentExecutor = Replier{}
	_ a2asrv.AgentExecutor = Failer{}
	_ a2asrv.AgentExecutor = Rejecter{}
	_ a2asrv.AgentExecutor = Blocking{}
	_ a2asrv.AgentExecutor = Asker{}
	_ a2asrv.AgentExecutor = Slow{}
	_ a2asrv.AgentExecutor = Files{}
)
