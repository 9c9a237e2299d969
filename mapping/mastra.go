package mapping

import (
	"encoding/json"
	"strings"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// Mastra's conventions (@mastra/server A2A routes, PEERS.md §13), which the
// bridge maps like ADK's function calls:
//
//   - A tool that suspends for approval ends the task INPUT_REQUIRED with a
//     data part {suspendPayload: {toolCallId, toolName, args, suspendPayload,
//     resumeSchema}, resumeSchema: "<JSON Schema as a string>"}; Mastra reads
//     the first data part of the next message on the task as the tool's
//     resumeData. The bridge shows the call as a server tool call awaiting
//     approval (reason tool_call) whose responseSchema is the parsed
//     resumeSchema, and sends the resume payload as that data part.
//   - The tool calls of a task are reported only in the stored task's
//     metadata.execution {toolCalls: [{payload: {toolCallId, toolName,
//     args}}], toolResults: [{payload: {toolCallId, toolName, result}}]},
//     never in the stream; the bridge shows them as server tool calls with
//     their results when a Task carries them.

// AnswerAs says how the answer to a tool-call interrupt travels to the
// agent.
type AnswerAs string

const (
	// AnswerFunctionResponse: an ADK function_response data part naming
	// the call (the default).
	AnswerFunctionResponse AnswerAs = ""
	// AnswerResumeData: the resume payload itself as the message's data
	// part (Mastra's resumeData).
	AnswerResumeData AnswerAs = "resumeData"
)

// suspension is a tool call suspended for the user's answer.
type suspension struct {
	callID, name string
	args         json.RawMessage
	schema       map[string]any
	// payload is what the tool suspended with (its question, typically).
	payload any
}

// mastraSuspension decodes a Mastra suspension data part.
func mastraSuspension(p *a2a.Part) (suspension, bool) {
	m, ok := p.Data().(map[string]any)
	if !ok {
		return suspension{}, false
	}
	inner, ok := m["suspendPayload"].(map[string]any)
	if !ok {
		return suspension{}, false
	}
	callID, _ := inner["toolCallId"].(string)
	name, _ := inner["toolName"].(string)
	if callID == "" || name == "" {
		return suspension{}, false
	}
	args, _ := json.Marshal(inner["args"])
	if string(args) == "null" {
		args = json.RawMessage("{}")
	}
	sp := suspension{callID: callID, name: name, args: args, payload: inner["suspendPayload"]}
	for _, raw := range []any{m["resumeSchema"], inner["resumeSchema"]} {
		if sp.schema = parseSchema(raw); sp.schema != nil {
			break
		}
	}
	return sp, true
}

// parseSchema accepts a JSON Schema as an object or as a string holding
// one (Mastra sends it stringified); anything else is no schema.
func parseSchema(raw any) map[string]any {
	switch v := raw.(type) {
	case map[string]any:
		return v
	case string:
		var m map[string]any
		if json.Unmarshal([]byte(v), &m) == nil {
			return m
		}
	}
	return nil
}

// question is the text a suspended tool asks, when its payload holds one:
// a string, or an object's question, message or prompt.
func (sp suspension) question() string {
	switch v := sp.payload.(type) {
	case string:
		return strings.TrimSpace(v)
	case map[string]any:
		for _, k := range []string{"question", "message", "prompt"} {
			if s, ok := v[k].(string); ok && strings.TrimSpace(s) != "" {
				return strings.TrimSpace(s)
			}
		}
	}
	return ""
}

// executionToolCalls shows the tool calls and results a task's metadata
// reports (Mastra's metadata.execution) as server tool calls; calls shown
// before (in this run or an earlier one) are not shown again, and a call
// gets one result.
func (t *Translator) executionToolCalls(out []agui.Event, task *a2a.Task) []agui.Event {
	exec, _ := task.Metadata["execution"].(map[string]any)
	if exec == nil {
		return out
	}
	payloads := func(key string) []map[string]any {
		list, _ := exec[key].([]any)
		var ps []map[string]any
		for _, item := range list {
			entry, _ := item.(map[string]any)
			if p, ok := entry["payload"].(map[string]any); ok {
				ps = append(ps, p)
			}
		}
		return ps
	}
	for _, p := range payloads("toolCalls") {
		id, _ := p["toolCallId"].(string)
		name, _ := p["toolName"].(string)
		if name == "" {
			continue
		}
		args, _ := json.Marshal(p["args"])
		if string(args) == "null" {
			args = json.RawMessage("{}")
		}
		out, _ = t.toolCall(out, id, name, args)
	}
	for _, p := range payloads("toolResults") {
		id, _ := p["toolCallId"].(string)
		name, _ := p["toolName"].(string)
		out, _ = t.toolResult(out, id, name, p["result"])
	}
	return out
}
