package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// Ids and texts of the [Dashboard].
const (
	DashboardProgressID = "progress" // id and name of the object data artifact
	DashboardRowsID     = "rows"     // id and name of the array data artifact
	DashboardAnswerText = "Dashboard ready."
)

// DashboardAnswer is the [Dashboard]'s text: "Dashboard ready for <userName>."
// when the client's state has a non-empty string userName, else "Dashboard ready.".
func DashboardAnswer(userName string) string {
	if userName == "" {
		return DashboardAnswerText
	}
	return "Dashboard ready for " + userName + "."
}

// DashboardArtifacts is what the [Dashboard]'s data artifacts hold once every
// update is applied with the bridge's append semantics (objects merge keys,
// arrays concatenate), by artifact id: the expected value of a2a.artifacts.
func DashboardArtifacts() map[string]any {
	return map[string]any{
		DashboardProgressID: map[string]any{"step": 3, "of": 3, "done": true},
		DashboardRowsID:     []any{1, 2, 3},
	}
}

// DashboardStatusData is the data part of the [Dashboard]'s status message:
// the expected value of a2a.statusData.
func DashboardStatusData() map[string]any {
	return map[string]any{"phase": "summarising"}
}

// DashboardUI is the UI state the [Dashboard] sets: the expected value of a2a.ui.
func DashboardUI() map[string]any {
	return map[string]any{"theme": "dark", "highlight": "rows"}
}

// dashboardUpdates are the data artifact updates, in order.
var dashboardUpdates = []struct {
	id          string
	append, end bool
	value       any
}{
	{DashboardProgressID, false, false, map[string]any{"step": 1, "of": 3}},
	{DashboardProgressID, true, false, map[string]any{"step": 2}},
	{DashboardProgressID, true, true, map[string]any{"step": 3, "done": true}},
	{DashboardRowsID, false, false, []any{1, 2}},
	{DashboardRowsID, true, true, []any{3}},
}

// Dashboard streams structured state: data artifacts updated in place, data
// in a status message, UI state keys (the bridge's extension) and a short text.
// Its card declares the extension; it reads the client's state from it.
//
//	Task{SUBMITTED} → Status{WORKING}
//	→ Artifact{"progress", append=false, lastChunk=false, data {"step":1,"of":3}}
//	→ Artifact{"progress", append=true, lastChunk=false, data {"step":2}}
//	→ Artifact{"progress", append=true, lastChunk=true, data {"step":3,"done":true}}
//	→ Artifact{"rows", append=false, lastChunk=false, data [1,2]}
//	→ Artifact{"rows", append=true, lastChunk=true, data [3]}
//	→ Status{WORKING, message part: data {"phase":"summarising"}}
//	→ Status{WORKING, message part: data {"theme":"dark","highlight":"rows"}
//	    with metadata {ExtensionURI: {"kind":"ui-state"}}}
//	→ Artifact{"answer", append=false, lastChunk=true, [DashboardAnswer](state.userName)}
//	→ Status{COMPLETED}
//
// The data artifacts' ids are their names ("progress", "rows"), so the
// bridge's a2a.artifacts ends as [DashboardArtifacts]; a2a.statusData as
// [DashboardStatusData] and a2a.ui as [DashboardUI].
type Dashboard struct {
	cancelOnly
	Delay time.Duration // pause before each event after WORKING; 0 means none
}

// Execute implements [a2asrv.AgentExecutor].
func (a Dashboard) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		if !r.start() || !r.status(a2a.TaskStateWorking, "") {
			return
		}
		for _, u := range dashboardUpdates {
			ev := a2a.NewArtifactUpdateEvent(ec, a2a.ArtifactID(u.id), a2a.NewDataPart(u.value))
			ev.Artifact.Name = u.id
			ev.Append, ev.LastChunk = u.append, u.end
			if !r.pause() || !r.emit(ev) {
				return
			}
		}
		for _, part := range []*a2a.Part{a2a.NewDataPart(DashboardStatusData()), UIStatePart(DashboardUI())} {
			if !r.pause() || !r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, r.agentMessage(part))) {
				return
			}
		}
		var user string
		if f, ok := frontendFrom(ec); ok {
			user, _ = f.State["userName"].(string)
		}
		if !r.pause() || !r.artifact("answer", a2a.NewTextPart(DashboardAnswer(strings.TrimSpace(user)))) {
			return
		}
		r.status(a2a.TaskStateCompleted, "")
	})
}

// Texts and files of the [Thinker].
const (
	ThinkerThought1  = "Let me think about this…"
	ThinkerThought2  = "Six times seven is the classic answer."
	ThinkerAnswer    = "The answer is 42."
	ThinkerChartURL  = "https://example.com/chart.png"
	ThinkerChartType = "image/png"
	ThinkerChartName = "chart.png"
	ThinkerFileText  = "hello" // the raw bytes of ThinkerFileName
	ThinkerFileType  = "text/plain"
	ThinkerFileName  = "hello.txt"
)

// Thinker reasons in status messages marked as thoughts, attaches two files
// (one by URL, one as raw bytes) and answers in a text artifact.
//
//	Task{SUBMITTED} → Status{WORKING, message part: text "Let me think about this…" with metadata {"adk_thought": true}}
//	→ Status{WORKING, message part: text "Six times seven is the classic answer." with metadata {"thought": true}}
//	→ Artifact{"chart", url "https://example.com/chart.png", mediaType image/png, filename chart.png}
//	→ Artifact{"hello", raw "hello", mediaType text/plain, filename hello.txt}
//	→ Artifact{"answer", text "The answer is 42."} → Status{COMPLETED}
//
// Every artifact is sent whole (append=false, lastChunk=true). The two
// thoughts use the two markers the bridge understands (ADK's and the generic one).
type Thinker struct {
	cancelOnly
	Delay time.Duration // pause before each event after the task; 0 means none
}

// Execute implements [a2asrv.AgentExecutor].
func (a Thinker) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		if !r.start() {
			return
		}
		for _, thought := range []*a2a.Part{ThoughtPart(ThinkerThought1, ADKThoughtKey), ThoughtPart(ThinkerThought2, ThoughtKey)} {
			if !r.pause() || !r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, r.agentMessage(thought))) {
				return
			}
		}
		chart := a2a.NewFileURLPart(ThinkerChartURL, ThinkerChartType)
		chart.Filename = ThinkerChartName
		hello := a2a.NewRawPart([]byte(ThinkerFileText))
		hello.MediaType, hello.Filename = ThinkerFileType, ThinkerFileName
		r.artifactsThenComplete(
			namedPart{"chart", chart},
			namedPart{"hello", hello},
			namedPart{"answer", a2a.NewTextPart(ThinkerAnswer)},
		)
	})
}

// Texts and values of the [Painter].
const (
	PainterTool       = "change_background"
	PainterColor      = "blue"
	PainterQuestion   = "Changing the background…"
	PainterNoTool     = "I need a change_background tool."
	PainterCallPrefix = "call-bg-" // the call id is this prefix followed by the task ID
)

// PainterArgs are the arguments of the call the [Painter] asks the frontend to run.
func PainterArgs() map[string]any {
	return map[string]any{"color": PainterColor}
}

// PainterAnswer is the [Painter]'s answer once the frontend ran the tool and
// returned response: "Background changed to blue (<response>)." where a
// string response is used as is and anything else as its JSON.
func PainterAnswer(response any) string {
	s, ok := response.(string)
	if !ok {
		b, err := json.Marshal(response)
		if err != nil {
			b = []byte(fmt.Sprint(response))
		}
		s = string(b)
	}
	return "Background changed to " + PainterColor + " (" + s + ")."
}

// Painter asks the frontend to run one of its tools (AG-UI frontend tools,
// carried by the bridge's extension). Its card declares the extension.
//
// First turn, when the extension's tools include "change_background" (the
// execution ends at INPUT_REQUIRED, so does the stream):
//
//	Task{SUBMITTED} → Status{WORKING} → Status{INPUT_REQUIRED, message parts:
//	  text "Changing the background…",
//	  data {"id": "call-bg-<taskId>", "name": "change_background", "args": {"color": "blue"}}
//	    with metadata {"adk_type": "function_call"}}
//
// Next turn on the same task, with the tool's result as an ADK function
// response: data {"id": <call id>, "name": "change_background", "response": R}
// with metadata {"adk_type": "function_response"}:
//
//	Status{WORKING} → Artifact{"answer", append=false, lastChunk=true, [PainterAnswer](R)} → Status{COMPLETED}
//
// A follow-up without that response asks again. Without the tool (no
// extension, or the frontend does not offer it):
//
//	Task{SUBMITTED} → Status{WORKING} → Artifact{"answer", "I need a change_background tool."} → Status{COMPLETED}
type Painter struct {
	cancelOnly
	Delay time.Duration // pause before the question and the answer; 0 means none
}

// Execute implements [a2asrv.AgentExecutor].
func (a Painter) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return execute(ctx, ec, a.Delay, func(r *run) {
		if !r.start() || !r.status(a2a.TaskStateWorking, "") || !r.pause() {
			return
		}
		callID := PainterCallPrefix + string(ec.TaskID)
		resuming := ec.StoredTask != nil && ec.StoredTask.Status.State == a2a.TaskStateInputRequired
		if response, ok := functionResponse(ec.Message, callID, PainterTool); resuming && ok {
			if r.artifact("answer", a2a.NewTextPart(PainterAnswer(response))) {
				r.status(a2a.TaskStateCompleted, "")
			}
			return
		}
		f, _ := frontendFrom(ec)
		if !f.Tool(PainterTool) {
			if r.artifact("answer", a2a.NewTextPart(PainterNoTool)) {
				r.status(a2a.TaskStateCompleted, "")
			}
			return
		}
		call := &a2a.Part{
			Content:  a2a.Data{Value: map[string]any{"id": callID, "name": PainterTool, "args": PainterArgs()}},
			Metadata: map[string]any{ADKTypeKey: ADKFunctionCall},
		}
		r.emit(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, r.agentMessage(a2a.NewTextPart(PainterQuestion), call)))
	})
}

// functionResponse finds the response to call callID of tool name: a data
// part {"id": callID, "name": name, "response": …} marked function_response.
func functionResponse(m *a2a.Message, callID, name string) (any, bool) {
	if m == nil {
		return nil, false
	}
	for _, p := range m.Parts {
		if p == nil || p.Metadata[ADKTypeKey] != ADKFunctionResponse {
			continue
		}
		obj, ok := p.Data().(map[string]any)
		if !ok || obj["name"] != name || obj["id"] != callID {
			continue
		}
		if response, ok := obj["response"]; ok {
			return response, true
		}
	}
	return nil, false
}

var (
	_ a2asrv.AgentExecutor = Dashboard{}
	_ a2asrv.AgentExecutor = Thinker{}
	_ a2asrv.AgentExecutor = Painter{}
)
