package main

import (
	"encoding/json"
	"fmt"
)

// eventClass is what the load driver needs to know about one AG-UI event.
type eventClass int

const (
	classOther    eventClass = iota
	classStarted             // RUN_STARTED
	classChunk               // carries one streamed A2A chunk
	classFinished            // RUN_FINISHED
	classError               // RUN_ERROR
)

// aguiEvent holds the fields of an AG-UI event the bench looks at.
type aguiEvent struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// Event is what a RAW event wraps; for @ag-ui/a2a, the A2A event.
	Event struct {
		Kind string `json:"kind"`
	} `json:"event"`
}

// classifier tells what an SSE data payload is; for classError it also
// returns a description of the error.
type classifier func(data []byte) (eventClass, string, error)

// classifyBridge: the bridge streams each A2A text chunk as one
// TEXT_MESSAGE_CONTENT.
func classifyBridge(data []byte) (eventClass, string, error) {
	return classify(data, func(ev *aguiEvent) bool { return ev.Type == "TEXT_MESSAGE_CONTENT" })
}

// classifyPeer: @ag-ui/a2a 0.0.6 turns each A2A artifact update into a RAW
// event wrapping it (PEERS.md §1); text it does map comes as
// TEXT_MESSAGE_CHUNK. Both count as carrying a chunk.
func classifyPeer(data []byte) (eventClass, string, error) {
	return classify(data, func(ev *aguiEvent) bool {
		switch ev.Type {
		case "RAW":
			return ev.Event.Kind == "artifact-update"
		case "TEXT_MESSAGE_CHUNK", "TEXT_MESSAGE_CONTENT":
			return true
		}
		return false
	})
}

func classify(data []byte, isChunk func(*aguiEvent) bool) (eventClass, string, error) {
	var ev aguiEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return classOther, "", fmt.Errorf("event is not JSON: %w", err)
	}
	switch {
	case ev.Type == "RUN_STARTED":
		return classStarted, "", nil
	case ev.Type == "RUN_FINISHED":
		return classFinished, "", nil
	case ev.Type == "RUN_ERROR":
		return classError, fmt.Sprintf("RUN_ERROR %s: %s", ev.Code, ev.Message), nil
	case isChunk(&ev):
		return classChunk, "", nil
	}
	return classOther, "", nil
}

// a2aStreamEvent holds the fields of an A2A v1.0 JSON-RPC stream item the
// bench looks at.
type a2aStreamEvent struct {
	Result struct {
		ArtifactUpdate json.RawMessage `json:"artifactUpdate"`
		StatusUpdate   *struct {
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"statusUpdate"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// classifyA2A reads the relay's stream, which is the agent's A2A v1.0
// JSON-RPC stream as is: each artifactUpdate carries a chunk, a statusUpdate
// to TASK_STATE_COMPLETED ends the run, and a JSON-RPC error is the run's
// error.
func classifyA2A(data []byte) (eventClass, string, error) {
	var ev a2aStreamEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return classOther, "", fmt.Errorf("event is not JSON: %w", err)
	}
	switch {
	case ev.Error != nil:
		return classError, fmt.Sprintf("JSON-RPC error %d: %s", ev.Error.Code, ev.Error.Message), nil
	case len(ev.Result.ArtifactUpdate) > 0 && string(ev.Result.ArtifactUpdate) != "null":
		return classChunk, "", nil
	case ev.Result.StatusUpdate != nil && ev.Result.StatusUpdate.Status.State == "TASK_STATE_COMPLETED":
		return classFinished, "", nil
	}
	return classOther, "", nil
}
