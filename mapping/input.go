package mapping

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// MaxNewMessages bounds the unseen user messages one run sends, and with it
// how fast a thread's record of seen messages can grow.
const MaxNewMessages = 1000

// ErrPartTooLarge is returned for an inline media part above the limit.
var ErrPartTooLarge = errors.New("inline part too large")

// UserInput turns the user messages the agent has not seen yet into the
// parts of one A2A message, in conversation order, and returns their ids.
// Assistant, tool, system and activity messages are not re-sent: the A2A
// agent keeps its own context for the contextId. Inline media above
// maxInline bytes (when positive) is refused with ErrPartTooLarge.
func UserInput(messages []agui.Message, seen []string, maxInline int) ([]*a2a.Part, []string, error) {
	seenSet := make(map[string]bool, len(seen))
	for _, id := range seen {
		seenSet[id] = true
	}
	var parts []*a2a.Part
	var ids []string
	for i, m := range messages {
		if m.Role != agui.RoleUser || seenSet[m.ID] {
			continue
		}
		if len(ids) == MaxNewMessages {
			return nil, nil, fmt.Errorf("more than %d user messages the agent has not seen: send the conversation in smaller steps", MaxNewMessages)
		}
		ps, err := userParts(m, maxInline)
		if err != nil {
			return nil, nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		if len(ps) == 0 {
			continue
		}
		parts = append(parts, ps...)
		ids = append(ids, m.ID)
	}
	return parts, ids, nil
}

func userParts(m agui.Message, maxInline int) ([]*a2a.Part, error) {
	if m.Content == nil {
		return nil, nil
	}
	switch m.Content.Kind {
	case agui.ContentText:
		if m.Content.Text == "" {
			return nil, nil
		}
		return []*a2a.Part{a2a.NewTextPart(m.Content.Text)}, nil
	case agui.ContentParts:
		var out []*a2a.Part
		for j, p := range m.Content.Parts {
			part, err := contentPart(p, maxInline)
			if err != nil {
				return nil, fmt.Errorf("content[%d]: %w", j, err)
			}
			if part != nil {
				out = append(out, part)
			}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("content: a user message needs a string or parts")
	}
}

// contentPart maps one AG-UI content part: text to a text part, inline
// media to raw bytes, media by URL to a URL part, and a provider file
// handle (which the bridge must not fetch) to a data part naming it.
func contentPart(p agui.ContentPart, maxInline int) (*a2a.Part, error) {
	switch p.Type {
	case "text":
		if p.Text == "" {
			return nil, nil
		}
		return a2a.NewTextPart(p.Text), nil
	case "image", "audio", "video", "document":
		if p.Source == nil {
			return nil, fmt.Errorf("%s part needs a source", p.Type)
		}
		name, _ := p.Metadata["filename"].(string)
		switch p.Source.Type {
		case "data":
			b, err := decodeInline(p.Source.Value, maxInline)
			if err != nil {
				return nil, fmt.Errorf("source.value: %w", err)
			}
			return a2a.NewRawPart(b, p.Source.MimeType, name), nil
		case "url":
			return a2a.NewURLPart(p.Source.Value, p.Source.MimeType, name), nil
		case "file":
			part := a2a.NewDataPart(map[string]any{"fileId": p.Source.Value, "provider": p.Source.Provider, "kind": p.Type})
			part.MediaType = p.Source.MimeType
			return part, nil
		default:
			return nil, fmt.Errorf("source.type %q is not data, url or file", p.Source.Type)
		}
	case "binary":
		switch {
		case p.Data != "":
			b, err := decodeInline(p.Data, maxInline)
			if err != nil {
				return nil, fmt.Errorf("data: %w", err)
			}
			return a2a.NewRawPart(b, p.MimeType, p.Filename), nil
		case p.URL != "":
			return a2a.NewURLPart(p.URL, p.MimeType, p.Filename), nil
		case p.ID != "":
			part := a2a.NewDataPart(map[string]any{"fileId": p.ID, "kind": "binary"})
			part.MediaType = p.MimeType
			return part, nil
		}
		return nil, fmt.Errorf("binary part needs data, url or id")
	default:
		return nil, fmt.Errorf("unknown content part type %q", p.Type)
	}
}

// decodeInline decodes base64 media, refusing it before decoding when its
// size would pass the limit.
func decodeInline(v string, maxInline int) ([]byte, error) {
	if maxInline > 0 && base64.StdEncoding.DecodedLen(len(v)) > maxInline+2 {
		return nil, fmt.Errorf("%w: about %d bytes, the limit is %d", ErrPartTooLarge, base64.StdEncoding.DecodedLen(len(v)), maxInline)
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("not valid base64: %v", err)
	}
	if maxInline > 0 && len(b) > maxInline {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrPartTooLarge, len(b), maxInline)
	}
	return b, nil
}

// ToolResults turns the client's tool messages answering pending frontend
// calls into ADK function_response parts for the task that made the calls,
// and adds their ids to ids (so they are sent once). A result that is JSON
// travels as JSON; any other text as a string; a failed tool's error as
// {"error": …}.
func ToolResults(messages []agui.Message, pending []ToolCallRef, seen, ids []string) ([]*a2a.Part, []string) {
	var parts []*a2a.Part
	for _, m := range messages {
		if m.Role != agui.RoleTool || slices.Contains(seen, m.ID) || slices.Contains(ids, m.ID) {
			continue
		}
		i := slices.IndexFunc(pending, func(r ToolCallRef) bool { return r.ToolCallID == m.ToolCallID })
		if i < 0 {
			continue
		}
		ref := pending[i]
		var response any
		text := ""
		if m.Content != nil {
			text = m.Content.Text
			if m.Content.Kind == agui.ContentParts {
				b, _ := json.Marshal(m.Content.Parts)
				text = string(b)
			}
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(text)))
		dec.UseNumber()
		if err := dec.Decode(&response); err != nil || dec.More() {
			response = text
		}
		if m.Error != "" {
			response = map[string]any{"error": m.Error, "content": response}
		}
		part := a2a.NewDataPart(map[string]any{"id": ref.CallID, "name": ref.Name, "response": response})
		part.Metadata = map[string]any{adkTypeKey: adkFunctionResponse}
		parts = append(parts, part)
		ids = append(ids, m.ID)
	}
	return parts, ids
}

// ExtensionMetadata is what the bridge's A2A extension puts in a message's
// metadata: the client's state without the bridge's own key, its context,
// its forwarded props and its frontend tools.
func ExtensionMetadata(in *agui.RunAgentInput, stateKey string) map[string]any {
	if stateKey == "" {
		stateKey = StateKey
	}
	meta := map[string]any{}
	var state map[string]any
	if len(in.State) > 0 && json.Unmarshal(in.State, &state) == nil && state != nil {
		delete(state, stateKey)
		meta["state"] = state
	}
	ctx := make([]any, 0, len(in.Context))
	for _, c := range in.Context {
		ctx = append(ctx, map[string]any{"description": c.Description, "value": c.Value})
	}
	meta["context"] = ctx
	if len(in.ForwardedProps) > 0 {
		var fp any
		if json.Unmarshal(in.ForwardedProps, &fp) == nil && fp != nil {
			meta["forwardedProps"] = fp
		}
	}
	tools := make([]any, 0, len(in.Tools))
	for _, t := range in.Tools {
		tool := map[string]any{"name": t.Name, "description": t.Description}
		if len(t.Parameters) > 0 {
			var params any
			if json.Unmarshal(t.Parameters, &params) == nil {
				tool["parameters"] = params
			}
		}
		tools = append(tools, tool)
	}
	meta["tools"] = tools
	return meta
}
