package agui

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Message is one entry of a conversation, in RunAgentInput.messages and
// MESSAGES_SNAPSHOT. Which members apply depends on Role (AGUI-PROTOCOL.md §3.2).
type Message struct {
	ID   string `json:"id"`
	Role string `json:"role"`
	// Content is a string for most roles, a string or parts for user (and
	// 1.0 tool) messages, and an object for activity messages.
	Content        *Content       `json:"content,omitempty"`
	Name           string         `json:"name,omitempty"`
	ToolCalls      []ToolCall     `json:"toolCalls,omitempty"`
	ToolCallID     string         `json:"toolCallId,omitempty"`
	Error          string         `json:"error,omitempty"`
	ActivityType   string         `json:"activityType,omitempty"`
	EncryptedValue string         `json:"encryptedValue,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	SubagentRunID  string         `json:"subagentRunId,omitempty"`
}

// ToolCall is a call held by an assistant message.
type ToolCall struct {
	ID             string         `json:"id"`
	Type           string         `json:"type"`
	Function       FunctionCall   `json:"function"`
	EncryptedValue string         `json:"encryptedValue,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
}

// FunctionCall names the function and carries its JSON argument text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Content is a message's content: exactly one of Text, Parts or Object is
// meaningful, recorded by Kind.
type Content struct {
	Kind   ContentKind
	Text   string
	Parts  []ContentPart
	Object json.RawMessage
}

// ContentKind tells which form a Content has.
type ContentKind int

// Content forms.
const (
	ContentText ContentKind = iota
	ContentParts
	ContentObject
)

// TextContent is a convenience constructor for string content.
func TextContent(s string) *Content { return &Content{Kind: ContentText, Text: s} }

// MarshalJSON writes the form the content was decoded from.
func (c Content) MarshalJSON() ([]byte, error) {
	switch c.Kind {
	case ContentParts:
		if c.Parts == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(c.Parts)
	case ContentObject:
		if len(c.Object) == 0 {
			return []byte("{}"), nil
		}
		return c.Object, nil
	default:
		return json.Marshal(c.Text)
	}
}

// UnmarshalJSON accepts a string, an array of content parts or an object.
func (c *Content) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return errors.New("empty content")
	}
	switch b[0] {
	case '"':
		c.Kind = ContentText
		return json.Unmarshal(b, &c.Text)
	case '[':
		c.Kind = ContentParts
		return json.Unmarshal(b, &c.Parts)
	case '{':
		c.Kind = ContentObject
		c.Object = append(json.RawMessage(nil), b...)
		return nil
	case 'n':
		// null content is treated as absent text (e.g. an assistant turn
		// that only called tools, from a producer that writes nulls).
		*c = Content{Kind: ContentText}
		return nil
	default:
		return errors.New("content must be a string, an array of parts or an object")
	}
}

// ContentPart is one part of multimodal content (§2.11): text, image, audio,
// video, document, or the legacy binary part.
type ContentPart struct {
	Type     string         `json:"type"`
	Text     string         `json:"text,omitempty"`
	Source   *Source        `json:"source,omitempty"`
	ID       string         `json:"id,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// Legacy "binary" part members.
	MimeType string `json:"mimeType,omitempty"`
	URL      string `json:"url,omitempty"`
	Data     string `json:"data,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// Source locates a media part's bytes: inline base64 ("data"), a URL
// ("url") or a provider file handle ("file", 1.0 only).
type Source struct {
	Type     string `json:"type"`
	Value    string `json:"value"`
	MimeType string `json:"mimeType,omitempty"`
	Provider string `json:"provider,omitempty"`
}
