package mapping

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/a2a-agui-bridge/bridge/a2a"
	"github.com/a2a-agui-bridge/bridge/agui"
)

// AnswerParts turns one resume entry into what the agent receives. A tool
// approval becomes an ADK function_response naming the call (denials and
// cancellations included, so the agent knows), returned as the call's
// result too; any other answer is the payload as a data part, plus a text
// part when it is a string.
func AnswerParts(p PendingInterrupt, r agui.ResumeEntry) ([]*a2a.Part, *SentToolResult, error) {
	if p.ToolCall != nil && p.AnswerAs == AnswerResumeData {
		// Mastra reads the first data part of the message as the tool's
		// resumeData: the payload as the user gave it (the schema the
		// tool declared was checked above).
		if r.Status == agui.ResumeCancelled {
			return nil, &SentToolResult{Call: *p.ToolCall, Response: map[string]any{"cancelled": true}}, nil
		}
		value, err := decodePayload(r.Payload)
		if err != nil {
			return nil, nil, err
		}
		return []*a2a.Part{a2a.NewDataPart(value)}, &SentToolResult{Call: *p.ToolCall, Response: value}, nil
	}
	if p.ToolCall != nil {
		var answer struct {
			Approved   bool            `json:"approved"`
			EditedArgs json.RawMessage `json:"editedArgs"`
		}
		if r.Status == agui.ResumeResolved {
			if err := json.Unmarshal(r.Payload, &answer); err != nil {
				return nil, nil, fmt.Errorf("a tool approval payload must be an object with approved: %v", err)
			}
		}
		args := p.ToolCall.Args
		if !PayloadAbsent(answer.EditedArgs) {
			args = answer.EditedArgs // a full replacement, not a merge (§4.3)
		}
		var argsValue any
		_ = json.Unmarshal(args, &argsValue)
		response := map[string]any{"approved": answer.Approved && r.Status == agui.ResumeResolved, "args": argsValue}
		if r.Status == agui.ResumeCancelled {
			response["cancelled"] = true
		}
		part := a2a.NewDataPart(map[string]any{"id": p.ToolCall.CallID, "name": p.ToolCall.Name, "response": response})
		part.Metadata = map[string]any{"adk_type": "function_response"}
		return []*a2a.Part{part}, &SentToolResult{Call: *p.ToolCall, Response: response}, nil
	}
	if r.Status == agui.ResumeCancelled {
		return nil, nil, nil
	}
	if PayloadAbsent(r.Payload) {
		return nil, nil, nil
	}
	value, err := decodePayload(r.Payload)
	if err != nil {
		return nil, nil, err
	}
	parts := []*a2a.Part{a2a.NewDataPart(value)}
	if s, ok := value.(string); ok {
		parts = append([]*a2a.Part{a2a.NewTextPart(s)}, parts...)
	}
	return parts, nil, nil
}

// decodePayload decodes a resume payload, numbers kept exact.
func decodePayload(raw json.RawMessage) (any, error) {
	var value any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&value); err != nil {
		return nil, fmt.Errorf("payload is not JSON: %v", err)
	}
	return value, nil
}

// PayloadAbsent reports whether a resume carries no payload (none, or
// null).
func PayloadAbsent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// schemaURL names the interrupt's schema for the validator. It is not a
// file or network location: nothing is ever loaded for it.
const schemaURL = "urn:a2a-agui-bridge:interrupt-schema"

// ValidatePayload checks payload against schema with a JSON Schema
// validator. The schema comes from the agent, so the validator loads no
// references at all (no files, no network). A schema that does not compile
// cannot be enforced; the payload then passes (the agent sees it and can
// object).
func ValidatePayload(schema map[string]any, payload json.RawMessage) error {
	if len(schema) == 0 {
		return nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("payload is not JSON: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		msg := strings.Join(strings.Fields(err.Error()), " ")
		// Drop the validator's "validation failed with '<schema url>#' - "
		// preamble: the client needs the reason, not the schema's name.
		if _, rest, ok := strings.Cut(msg, "' - "); ok {
			msg = rest
		}
		return errors.New(msg)
	}
	return nil
}

// PayloadHash identifies a payload by the SHA-256 of its canonical JSON
// (object keys sorted), so a replay with reordered keys still matches.
func PayloadHash(payload json.RawMessage) string {
	if PayloadAbsent(payload) {
		return ""
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	canonical := []byte(payload)
	if dec.Decode(&v) == nil {
		if b, err := json.Marshal(v); err == nil {
			canonical = b
		}
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}
