package agents

import (
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// ExtensionURI identifies the bridge's A2A extension. An agent that declares
// it in its card (capabilities.extensions) gets, on every message the bridge
// sends while the request's A2A-Extensions service parameter names it, the
// frontend's side of the conversation in the message metadata under this key:
//
//	{"state": <client state without the bridge's key>, "context": [{"description", "value"}],
//	 "forwardedProps": …, "tools": [{"name", "description", "parameters"}]}
//
// and it may set UI state keys with a data part (an object) whose part
// metadata is {ExtensionURI: {"kind": "ui-state"}} ([UIStatePart]).
const ExtensionURI = "https://github.com/a2a-agui-bridge/bridge/ext/agui/v1"

// UIStateKind is the "kind" of a data part that sets UI state keys.
const UIStateKind = "ui-state"

// Part metadata keys that mark a text part as the agent's reasoning rather
// than its answer: ADK's and the generic one.
const (
	ADKThoughtKey = "adk_thought"
	ThoughtKey    = "thought"
)

// UIExtension is the card declaration of the bridge's extension (not required:
// the agents still answer a client that does not activate it).
func UIExtension() a2a.AgentExtension {
	return a2a.AgentExtension{
		URI:         ExtensionURI,
		Description: "AG-UI frontend state, context and tools in message metadata; UI state keys from marked data parts.",
	}
}

// UIStatePart is a data part that sets the UI state keys of value.
func UIStatePart(value map[string]any) *a2a.Part {
	return &a2a.Part{
		Content:  a2a.Data{Value: value},
		Metadata: map[string]any{ExtensionURI: map[string]any{"kind": UIStateKind}},
	}
}

// ThoughtPart is a text part marked as reasoning with metadata {key: true}
// (key is [ADKThoughtKey] or [ThoughtKey]).
func ThoughtPart(text, key string) *a2a.Part {
	return &a2a.Part{Content: a2a.Text(text), Metadata: map[string]any{key: true}}
}

// Frontend is what the bridge's extension carried to the agent with the
// triggering message.
type Frontend struct {
	State          map[string]any // the client's shared state without the bridge's key
	Context        []any          // [{"description", "value"}]
	ForwardedProps any
	Tools          []FrontendTool
}

// FrontendTool is a tool the frontend offers to run for the agent.
type FrontendTool struct {
	Name        string
	Description string
	Parameters  any
}

// Tool reports whether the frontend offers a tool named name.
func (f Frontend) Tool(name string) bool {
	return slices.ContainsFunc(f.Tools, func(t FrontendTool) bool { return t.Name == name })
}

// extensionRequested reports whether the request activated the extension:
// its A2A-Extensions service parameter (one or more values, each possibly a
// comma-separated list) names [ExtensionURI].
func extensionRequested(ec *a2asrv.ExecutorContext) bool {
	return requested(ec, ExtensionURI)
}

// requested reports whether the request activated the extension uri.
func requested(ec *a2asrv.ExecutorContext, uri string) bool {
	if ec == nil || ec.ServiceParams == nil {
		return false
	}
	values, _ := ec.ServiceParams.Get(a2a.SvcParamExtensions)
	for _, v := range values {
		for u := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(u) == uri {
				return true
			}
		}
	}
	return false
}

// frontendFrom reads the extension's metadata from the triggering message.
// Like a real agent it honours the metadata only when the request activated
// the extension; ok is false otherwise or when there is none.
func frontendFrom(ec *a2asrv.ExecutorContext) (f Frontend, ok bool) {
	if !extensionRequested(ec) || ec.Message == nil {
		return Frontend{}, false
	}
	meta, ok := ec.Message.Metadata[ExtensionURI].(map[string]any)
	if !ok {
		return Frontend{}, false
	}
	f.State, _ = meta["state"].(map[string]any)
	f.Context, _ = meta["context"].([]any)
	f.ForwardedProps = meta["forwardedProps"]
	tools, _ := meta["tools"].([]any)
	for _, t := range tools {
		obj, ok := t.(map[string]any)
		if !ok {
			continue
		}
		name, _ := obj["name"].(string)
		if name == "" {
			continue
		}
		desc, _ := obj["description"].(string)
		f.Tools = append(f.Tools, FrontendTool{Name: name, Description: desc, Parameters: obj["parameters"]})
	}
	return f, true
}
