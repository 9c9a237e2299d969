package mapping

import (
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// UserInput turns the user messages the agent has not seen yet into the
// parts of one A2A message, in conversation order, and returns their ids.
// Assistant, tool, system and activity messages are not re-sent: the A2A
// agent keeps its own context for the contextId.
func UserInput(messages []agui.Message, seen []string) ([]*a2a.Part, []string, error) {
	var parts []*a2a.Part
	var ids []string
	for i, m := range messages {
		if m.Role != agui.RoleUser || slices.Contains(seen, m.ID) {
			continue
		}
		ps, err := userParts(m)
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

func userParts(m agui.Message) ([]*a2a.Part, error) {
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
			part, err := contentPart(p)
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
func contentPart(p agui.ContentPart) (*a2a.Part, error) {
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
			b, err := base64.StdEncoding.DecodeString(p.Source.Value)
			if err != nil {
				return nil, fmt.Errorf("source.value: not valid base64: %v", err)
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
			b, err := base64.StdEncoding.DecodeString(p.Data)
			if err != nil {
				return nil, fmt.Errorf("data: not valid base64: %v", err)
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
