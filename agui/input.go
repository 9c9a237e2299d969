package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// RunAgentInput is the body of one run request (AGUI-PROTOCOL.md §3.1).
// Optional members the client left out are zero; State, ForwardedProps and
// resume payloads that were absent or null are nil.
type RunAgentInput struct {
	ThreadID    string          `json:"threadId"`
	RunID       string          `json:"runId"`
	ParentRunID string          `json:"parentRunId,omitempty"`
	State       json.RawMessage `json:"state,omitempty"`
	Messages    []Message       `json:"messages"`
	Tools       []Tool          `json:"tools,omitempty"`
	Context     []ContextItem   `json:"context,omitempty"`
	// ForwardedProps is opaque app → agent data of any JSON type.
	ForwardedProps json.RawMessage `json:"forwardedProps,omitempty"`
	// Resume answers the previous run's interrupts (§4.1).
	Resume []ResumeEntry `json:"resume,omitempty"`
	// ProtocolVersion is sent by 1.0 clients only ("1.0").
	ProtocolVersion string `json:"protocolVersion,omitempty"`
}

// Tool is a frontend tool the client offers: the client, not the agent,
// executes it (§4.5).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // a JSON Schema, opaque
	Metadata    map[string]any  `json:"metadata,omitempty"`
}

// ContextItem is one piece of ambient context.
type ContextItem struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

// Resume statuses (§4.1).
const (
	ResumeResolved  = "resolved"
	ResumeCancelled = "cancelled"
)

// ResumeEntry answers one interrupt of the previous run.
type ResumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Metadata    map[string]any  `json:"metadata,omitempty"`
}

// IsV1 reports whether the request came from a 1.0 (or later 1.x) client:
// only those send protocolVersion, so its absence means a 0.0.x client
// whose generation cannot be told (§0, §10.1 rule 7).
func (in *RunAgentInput) IsV1() bool {
	major, minor, ok := strings.Cut(in.ProtocolVersion, ".")
	if !ok || major != "1" || minor == "" {
		return false
	}
	_, err := strconv.ParseUint(minor, 10, 32)
	return err == nil
}

// InputError says which member of a RunAgentInput is wrong and why, so the
// HTTP layer can answer 400 with a message the frontend developer can act
// on.
type InputError struct {
	// Field is a JSON path such as "messages[2].content[0].source.value";
	// empty when the body as a whole is wrong.
	Field   string
	Message string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return "agui: bad RunAgentInput: " + e.Message
	}
	return "agui: bad RunAgentInput: " + e.Field + ": " + e.Message
}

// maxIDLength bounds threadId and runId: they become store keys and log
// fields, and no client mints anything near this long (they are UUIDs).
const maxIDLength = 256

// DecodeRunAgentInput parses and checks a request body.
//
// It is strict where a mistake would otherwise surface later as a confusing
// run (DESIGN.md "A run, end to end" step 1): the body must be valid UTF-8
// and a JSON object, threadId and runId must be short printable strings,
// every known member must have its documented type, messages need an id
// and a known role, content parts must be complete, and resume entries must
// name an interrupt and a valid status. It is tolerant where real clients
// differ (§3.1, §11 fact 7): unknown members are ignored, absent or null
// tools/context/state/forwardedProps/messages mean empty, and every
// content-part form any generation sends is accepted (string, text, the
// four media parts with data/url/file sources, legacy binary).
//
// Errors are *InputError.
func DecodeRunAgentInput(body []byte) (*RunAgentInput, error) {
	if !utf8.Valid(body) {
		return nil, &InputError{Message: "body is not valid UTF-8"}
	}
	top, ierr := parseObject(bytes.TrimSpace(body), "")
	if ierr != nil {
		return nil, ierr
	}
	var in RunAgentInput
	var err *InputError
	if in.ThreadID, err = top.id("threadId"); err != nil {
		return nil, err
	}
	if in.RunID, err = top.id("runId"); err != nil {
		return nil, err
	}
	if in.ParentRunID, err = top.str("parentRunId"); err != nil {
		return nil, err
	}
	if in.ProtocolVersion, err = top.str("protocolVersion"); err != nil {
		return nil, err
	}
	in.State = top.anyJSON("state")
	in.ForwardedProps = top.anyJSON("forwardedProps")

	items, err := top.array("messages")
	if err != nil {
		return nil, err
	}
	in.Messages = make([]Message, 0, len(items))
	for i, raw := range items {
		m, err := decodeMessage(raw, fmt.Sprintf("messages[%d]", i))
		if err != nil {
			return nil, err
		}
		in.Messages = append(in.Messages, m)
	}

	if items, err = top.array("tools"); err != nil {
		return nil, err
	}
	for i, raw := range items {
		t, err := decodeTool(raw, fmt.Sprintf("tools[%d]", i))
		if err != nil {
			return nil, err
		}
		in.Tools = append(in.Tools, t)
	}

	if items, err = top.array("context"); err != nil {
		return nil, err
	}
	for i, raw := range items {
		o, err := parseObject(raw, fmt.Sprintf("context[%d]", i))
		if err != nil {
			return nil, err
		}
		var c ContextItem
		if c.Description, err = o.str("description"); err != nil {
			return nil, err
		}
		if c.Value, err = o.str("value"); err != nil {
			return nil, err
		}
		in.Context = append(in.Context, c)
	}

	if items, err = top.array("resume"); err != nil {
		return nil, err
	}
	for i, raw := range items {
		r, err := decodeResume(raw, fmt.Sprintf("resume[%d]", i))
		if err != nil {
			return nil, err
		}
		in.Resume = append(in.Resume, r)
	}
	return &in, nil
}

func decodeTool(raw json.RawMessage, path string) (Tool, *InputError) {
	var t Tool
	o, err := parseObject(raw, path)
	if err != nil {
		return t, err
	}
	if t.Name, err = o.requiredStr("name"); err != nil {
		return t, err
	}
	if t.Description, err = o.str("description"); err != nil {
		return t, err
	}
	t.Parameters = o.anyJSON("parameters")
	if t.Metadata, err = o.object("metadata"); err != nil {
		return t, err
	}
	return t, nil
}

func decodeResume(raw json.RawMessage, path string) (ResumeEntry, *InputError) {
	var r ResumeEntry
	o, err := parseObject(raw, path)
	if err != nil {
		return r, err
	}
	if r.InterruptID, err = o.requiredStr("interruptId"); err != nil {
		return r, err
	}
	if r.Status, err = o.requiredStr("status"); err != nil {
		return r, err
	}
	if r.Status != ResumeResolved && r.Status != ResumeCancelled {
		return r, &InputError{Field: o.at("status"), Message: fmt.Sprintf("must be %q or %q, not %q", ResumeResolved, ResumeCancelled, r.Status)}
	}
	r.Payload = o.anyJSON("payload")
	if r.Metadata, err = o.object("metadata"); err != nil {
		return r, err
	}
	return r, nil
}

// knownRoles are the message roles of §3.2.
var knownRoles = map[string]bool{
	RoleDeveloper: true, RoleSystem: true, RoleAssistant: true, RoleUser: true,
	RoleTool: true, RoleActivity: true, RoleReasoning: true,
}

func decodeMessage(raw json.RawMessage, path string) (Message, *InputError) {
	var m Message
	o, err := parseObject(raw, path)
	if err != nil {
		return m, err
	}
	if m.ID, err = o.requiredStr("id"); err != nil {
		return m, err
	}
	if m.Role, err = o.requiredStr("role"); err != nil {
		return m, err
	}
	if !knownRoles[m.Role] {
		return m, &InputError{Field: o.at("role"), Message: fmt.Sprintf("unknown role %q", m.Role)}
	}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"name", &m.Name}, {"toolCallId", &m.ToolCallID}, {"error", &m.Error},
		{"activityType", &m.ActivityType}, {"encryptedValue", &m.EncryptedValue},
		{"subagentRunId", &m.SubagentRunID},
	} {
		if *f.dst, err = o.str(f.key); err != nil {
			return m, err
		}
	}
	if m.Role == RoleTool && m.ToolCallID == "" {
		// Without it the result cannot be matched to its call.
		return m, &InputError{Field: o.at("toolCallId"), Message: "required on tool messages"}
	}
	if m.Metadata, err = o.object("metadata"); err != nil {
		return m, err
	}
	if m.Content, err = decodeContent(o, m.Role); err != nil {
		return m, err
	}
	calls, err := o.array("toolCalls")
	if err != nil {
		return m, err
	}
	for i, raw := range calls {
		c, err := decodeToolCall(raw, fmt.Sprintf("%s[%d]", o.at("toolCalls"), i))
		if err != nil {
			return m, err
		}
		m.ToolCalls = append(m.ToolCalls, c)
	}
	return m, nil
}

func decodeToolCall(raw json.RawMessage, path string) (ToolCall, *InputError) {
	var c ToolCall
	o, err := parseObject(raw, path)
	if err != nil {
		return c, err
	}
	if c.ID, err = o.requiredStr("id"); err != nil {
		return c, err
	}
	if c.Type, err = o.str("type"); err != nil {
		return c, err
	}
	if c.EncryptedValue, err = o.str("encryptedValue"); err != nil {
		return c, err
	}
	if c.Metadata, err = o.object("metadata"); err != nil {
		return c, err
	}
	fn, ok := o.members["function"]
	if !ok || isJSONNull(fn) {
		return c, &InputError{Field: o.at("function"), Message: "required"}
	}
	fo, err := parseObject(fn, o.at("function"))
	if err != nil {
		return c, err
	}
	if c.Function.Name, err = fo.requiredStr("name"); err != nil {
		return c, err
	}
	if c.Function.Arguments, err = fo.str("arguments"); err != nil {
		return c, err
	}
	return c, nil
}

// decodeContent reads a message's content in the forms its role allows
// (§3.2): parts only for user and tool messages, an object only for
// activity messages, a string for everyone else. Absent or null content is
// nil: assistant turns that only called tools have none, and being lenient
// about the others costs nothing.
func decodeContent(o object, role string) (*Content, *InputError) {
	raw, ok := o.members["content"]
	if !ok || isJSONNull(raw) {
		return nil, nil
	}
	path := o.at("content")
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, &InputError{Field: path, Message: "invalid string"}
		}
		if role == RoleActivity {
			return nil, &InputError{Field: path, Message: "must be an object on activity messages"}
		}
		return TextContent(s), nil
	case '[':
		if role != RoleUser && role != RoleTool {
			return nil, &InputError{Field: path, Message: "content parts are only allowed on user and tool messages"}
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, &InputError{Field: path, Message: "invalid array"}
		}
		c := &Content{Kind: ContentParts, Parts: make([]ContentPart, 0, len(items))}
		for i, item := range items {
			p, err := decodePart(item, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			c.Parts = append(c.Parts, p)
		}
		return c, nil
	case '{':
		if role != RoleActivity {
			return nil, &InputError{Field: path, Message: "must be a string" + partsHint(role)}
		}
		return &Content{Kind: ContentObject, Object: append(json.RawMessage(nil), raw...)}, nil
	}
	return nil, &InputError{Field: path, Message: "must be a string" + partsHint(role)}
}

func partsHint(role string) string {
	if role == RoleUser || role == RoleTool {
		return " or an array of content parts"
	}
	return ""
}

// Content part and source types (§2.11).
const (
	PartText     = "text"
	PartImage    = "image"
	PartAudio    = "audio"
	PartVideo    = "video"
	PartDocument = "document"
	// PartBinary is the legacy part older clients and Python still send.
	PartBinary = "binary"

	SourceData = "data"
	SourceURL  = "url"
	// SourceFile is a provider file handle (1.0 clients only).
	SourceFile = "file"
)

func decodePart(raw json.RawMessage, path string) (ContentPart, *InputError) {
	var p ContentPart
	o, err := parseObject(raw, path)
	if err != nil {
		return p, err
	}
	if p.Type, err = o.requiredStr("type"); err != nil {
		return p, err
	}
	if p.ID, err = o.str("id"); err != nil {
		return p, err
	}
	if p.Metadata, err = o.object("metadata"); err != nil {
		return p, err
	}
	switch p.Type {
	case PartText:
		// Tolerated when absent: an empty text part carries nothing, and
		// a producer omitting "" should not cost the user the run.
		if p.Text, err = o.str("text"); err != nil {
			return p, err
		}
	case PartImage, PartAudio, PartVideo, PartDocument:
		src, ok := o.members["source"]
		if !ok || isJSONNull(src) {
			return p, &InputError{Field: o.at("source"), Message: "required on " + p.Type + " parts"}
		}
		so, err := parseObject(src, o.at("source"))
		if err != nil {
			return p, err
		}
		p.Source = &Source{}
		if p.Source.Type, err = so.requiredStr("type"); err != nil {
			return p, err
		}
		if p.Source.Value, err = so.requiredStr("value"); err != nil {
			return p, err
		}
		if p.Source.MimeType, err = so.str("mimeType"); err != nil {
			return p, err
		}
		if p.Source.Provider, err = so.str("provider"); err != nil {
			return p, err
		}
	case PartBinary:
		for _, f := range []struct {
			key string
			dst *string
		}{{"mimeType", &p.MimeType}, {"url", &p.URL}, {"data", &p.Data}, {"filename", &p.Filename}} {
			if *f.dst, err = o.str(f.key); err != nil {
				return p, err
			}
		}
	}
	return p, validatePart(p, path, true)
}

// validatePart checks that a decoded part is complete (§2.11). It is shared
// by request decoding and the MESSAGES_SNAPSHOT checks of the verifier;
// allowFile is false for clients older than 1.0, which reject file sources.
func validatePart(p ContentPart, path string, allowFile bool) *InputError {
	switch p.Type {
	case PartText:
		return nil
	case PartImage, PartAudio, PartVideo, PartDocument:
		if p.Source == nil {
			return &InputError{Field: path + ".source", Message: "required on " + p.Type + " parts"}
		}
		sp := path + ".source"
		switch p.Source.Type {
		case SourceData:
			if p.Source.Value == "" {
				return &InputError{Field: sp + ".value", Message: "required: the base64 data"}
			}
			if p.Source.MimeType == "" {
				return &InputError{Field: sp + ".mimeType", Message: "required on data sources"}
			}
		case SourceURL:
			if p.Source.Value == "" {
				return &InputError{Field: sp + ".value", Message: "required: the URL"}
			}
		case SourceFile:
			if !allowFile {
				return &InputError{Field: sp + ".type", Message: "file sources exist only for 1.0 clients"}
			}
			if p.Source.Value == "" {
				return &InputError{Field: sp + ".value", Message: "required: the provider's file handle"}
			}
		default:
			return &InputError{Field: sp + ".type", Message: fmt.Sprintf("unknown source type %q (want data, url or file)", p.Source.Type)}
		}
		return nil
	case PartBinary:
		if p.MimeType == "" {
			return &InputError{Field: path + ".mimeType", Message: "required on binary parts"}
		}
		if p.ID == "" && p.URL == "" && p.Data == "" {
			return &InputError{Field: path, Message: "a binary part needs one of id, url or data"}
		}
		return nil
	}
	return &InputError{Field: path + ".type", Message: fmt.Sprintf("unknown content part type %q", p.Type)}
}

// object is a decoded JSON object with its path, for precise errors.
type object struct {
	path    string
	members map[string]json.RawMessage
}

func parseObject(raw json.RawMessage, path string) (object, *InputError) {
	if len(raw) == 0 || raw[0] != '{' {
		where := path
		msg := "must be a JSON object"
		if path == "" {
			msg = "body must be a JSON object"
		}
		return object{}, &InputError{Field: where, Message: msg}
	}
	o := object{path: path}
	if err := json.Unmarshal(raw, &o.members); err != nil {
		return object{}, &InputError{Field: path, Message: "invalid JSON: " + err.Error()}
	}
	return o, nil
}

func (o object) at(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// str reads an optional string member; null counts as absent because some
// producers write null for "unset" and nothing is lost by accepting it.
func (o object) str(key string) (string, *InputError) {
	raw, ok := o.members[key]
	if !ok || isJSONNull(raw) {
		return "", nil
	}
	if raw[0] != '"' {
		return "", &InputError{Field: o.at(key), Message: "must be a string"}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &InputError{Field: o.at(key), Message: "invalid string"}
	}
	return s, nil
}

func (o object) requiredStr(key string) (string, *InputError) {
	s, err := o.str(key)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", &InputError{Field: o.at(key), Message: "required (a non-empty string)"}
	}
	return s, nil
}

// id reads threadId or runId: required, bounded and printable, because
// they become store keys, log fields and echo back in RUN_STARTED.
func (o object) id(key string) (string, *InputError) {
	s, err := o.requiredStr(key)
	if err != nil {
		return "", err
	}
	if len(s) > maxIDLength {
		return "", &InputError{Field: o.at(key), Message: fmt.Sprintf("longer than %d bytes", maxIDLength)}
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", &InputError{Field: o.at(key), Message: "contains a control character"}
	}
	return s, nil
}

func (o object) array(key string) ([]json.RawMessage, *InputError) {
	raw, ok := o.members[key]
	if !ok || isJSONNull(raw) {
		return nil, nil
	}
	if raw[0] != '[' {
		return nil, &InputError{Field: o.at(key), Message: "must be an array"}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &InputError{Field: o.at(key), Message: "invalid array"}
	}
	return items, nil
}

// object reads an open-by-key map such as metadata. Numbers stay
// json.Number so large integers survive a round trip unchanged.
func (o object) object(key string) (map[string]any, *InputError) {
	raw, ok := o.members[key]
	if !ok || isJSONNull(raw) {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, &InputError{Field: o.at(key), Message: "must be a JSON object"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, &InputError{Field: o.at(key), Message: "invalid object"}
	}
	return m, nil
}

// anyJSON reads a member that may hold any JSON value; null is absent.
func (o object) anyJSON(key string) json.RawMessage {
	raw, ok := o.members[key]
	if !ok || isJSONNull(raw) {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}
