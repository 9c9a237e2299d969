package a2a

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
)

// decodeStreamEvent decodes one JSON-RPC stream payload carrying a
// statusUpdate or an artifactUpdate, the two events a streaming answer is
// made of, without reflection. It gives exactly what the SDK's decoding
// (encoding/json into its JSON-RPC response, then a2a.StreamResponse) gives,
// or ok=false for anything it is not sure to decode the same way: another
// event kind, a JSON-RPC error, a null, a duplicate or case-folded key, an
// escaped key, a raw or URL part, invalid JSON. The caller then decodes the
// payload with the SDK, which also owns every error message.
//
// The SDK's path costs 18–27 µs per 270-byte chunk on our 2-core VM (two
// encoding/json passes with custom unmarshalers); this is the bridge's
// single largest cost per streamed token. FuzzStreamDecode checks the
// equivalence on arbitrary input.
func decodeStreamEvent(payload []byte) (ev a2asdk.Event, ok bool) {
	r := jsonReader{b: payload}
	var result a2asdk.Event
	seen := 0
	const (
		seenJSONRPC = 1 << iota
		seenID
		seenResult
	)
	ok = r.object(func(key string) bool {
		switch key {
		case "jsonrpc", "id":
			bit := seenJSONRPC
			if key == "id" {
				bit = seenID
			}
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			_, ok := r.str()
			return ok
		case "result":
			if seen&seenResult != 0 {
				return false
			}
			seen |= seenResult
			result = r.streamResponse()
			return result != nil
		}
		return r.skipUnknown(key, "jsonrpc", "id", "result", "error")
	})
	if !ok || result == nil || !r.end() {
		return nil, false
	}
	return result, true
}

// streamResponse reads {"statusUpdate":{…}} or {"artifactUpdate":{…}}.
func (r *jsonReader) streamResponse() a2asdk.Event {
	var ev a2asdk.Event
	ok := r.object(func(key string) bool {
		if ev != nil {
			return false // a second event kind, or a duplicate
		}
		switch key {
		case "statusUpdate":
			if e := r.statusUpdate(); e != nil {
				ev = e
				return true
			}
			return false
		case "artifactUpdate":
			if e := r.artifactUpdate(); e != nil {
				ev = e
				return true
			}
			return false
		}
		return r.skipUnknown(key, "statusUpdate", "artifactUpdate", "task", "message")
	})
	if !ok {
		return nil
	}
	return ev
}

func (r *jsonReader) statusUpdate() *a2asdk.TaskStatusUpdateEvent {
	e := &a2asdk.TaskStatusUpdateEvent{}
	var fields fieldSet
	ok := r.object(func(key string) bool {
		switch key {
		case "contextId":
			return fields.once(0) && r.strInto(&e.ContextID)
		case "taskId":
			var s string
			ok := fields.once(1) && r.strInto(&s)
			e.TaskID = a2asdk.TaskID(s)
			return ok
		case "status":
			return fields.once(2) && r.taskStatus(&e.Status)
		case "metadata":
			return fields.once(3) && r.unmarshal(&e.Metadata)
		}
		return r.skipUnknown(key, "contextId", "taskId", "status", "metadata")
	})
	if !ok {
		return nil
	}
	return e
}

func (r *jsonReader) taskStatus(s *a2asdk.TaskStatus) bool {
	var fields fieldSet
	return r.object(func(key string) bool {
		switch key {
		case "state":
			var v string
			if !fields.once(0) || !r.strInto(&v) {
				return false
			}
			if v != "TASK_STATE_UNSPECIFIED" {
				s.State = a2asdk.TaskState(v)
			}
			return true
		case "message":
			if !fields.once(1) {
				return false
			}
			s.Message = r.message()
			return s.Message != nil
		case "timestamp":
			if !fields.once(2) {
				return false
			}
			raw, ok := r.value()
			if !ok || raw[0] != '"' {
				return false
			}
			t := new(time.Time)
			if t.UnmarshalJSON(raw) != nil {
				return false
			}
			s.Timestamp = t
			return true
		}
		return r.skipUnknown(key, "state", "message", "timestamp")
	})
}

func (r *jsonReader) message() *a2asdk.Message {
	m := &a2asdk.Message{}
	var fields fieldSet
	ok := r.object(func(key string) bool {
		switch key {
		case "messageId":
			return fields.once(0) && r.strInto(&m.ID)
		case "contextId":
			return fields.once(1) && r.strInto(&m.ContextID)
		case "taskId":
			var s string
			ok := fields.once(2) && r.strInto(&s)
			m.TaskID = a2asdk.TaskID(s)
			return ok
		case "role":
			var v string
			if !fields.once(3) || !r.strInto(&v) {
				return false
			}
			if v != "ROLE_UNSPECIFIED" {
				m.Role = a2asdk.MessageRole(v)
			}
			return true
		case "parts":
			return fields.once(4) && r.parts(&m.Parts)
		case "metadata":
			return fields.once(5) && r.unmarshal(&m.Metadata)
		case "extensions":
			return fields.once(6) && r.unmarshal(&m.Extensions)
		case "referenceTaskIds":
			return fields.once(7) && r.unmarshal(&m.ReferenceTasks)
		}
		return r.skipUnknown(key, "messageId", "contextId", "taskId", "role", "parts", "metadata", "extensions", "referenceTaskIds")
	})
	if !ok {
		return nil
	}
	return m
}

func (r *jsonReader) artifactUpdate() *a2asdk.TaskArtifactUpdateEvent {
	e := &a2asdk.TaskArtifactUpdateEvent{}
	var fields fieldSet
	ok := r.object(func(key string) bool {
		switch key {
		case "contextId":
			return fields.once(0) && r.strInto(&e.ContextID)
		case "taskId":
			var s string
			ok := fields.once(1) && r.strInto(&s)
			e.TaskID = a2asdk.TaskID(s)
			return ok
		case "append":
			return fields.once(2) && r.boolInto(&e.Append)
		case "lastChunk":
			return fields.once(3) && r.boolInto(&e.LastChunk)
		case "artifact":
			if !fields.once(4) {
				return false
			}
			e.Artifact = r.artifact()
			return e.Artifact != nil
		case "metadata":
			return fields.once(5) && r.unmarshal(&e.Metadata)
		}
		return r.skipUnknown(key, "contextId", "taskId", "append", "lastChunk", "artifact", "metadata")
	})
	if !ok {
		return nil
	}
	return e
}

func (r *jsonReader) artifact() *a2asdk.Artifact {
	a := &a2asdk.Artifact{}
	var fields fieldSet
	ok := r.object(func(key string) bool {
		switch key {
		case "artifactId":
			var s string
			ok := fields.once(0) && r.strInto(&s)
			a.ID = a2asdk.ArtifactID(s)
			return ok
		case "name":
			return fields.once(1) && r.strInto(&a.Name)
		case "description":
			return fields.once(2) && r.strInto(&a.Description)
		case "parts":
			return fields.once(3) && r.parts(&a.Parts)
		case "metadata":
			return fields.once(4) && r.unmarshal(&a.Metadata)
		case "extensions":
			return fields.once(5) && r.unmarshal(&a.Extensions)
		}
		return r.skipUnknown(key, "artifactId", "name", "description", "parts", "metadata", "extensions")
	})
	if !ok {
		return nil
	}
	return a
}

// parts reads an array of text and data parts.
func (r *jsonReader) parts(out *a2asdk.ContentParts) bool {
	r.ws()
	if !r.consume('[') {
		return false
	}
	parts := a2asdk.ContentParts{}
	r.ws()
	if r.consume(']') {
		*out = parts
		return true
	}
	for {
		p := r.part()
		if p == nil {
			return false
		}
		parts = append(parts, p)
		r.ws()
		if r.consume(']') {
			*out = parts
			return true
		}
		if !r.consume(',') {
			return false
		}
	}
}

func (r *jsonReader) part() *a2asdk.Part {
	p := &a2asdk.Part{}
	var fields fieldSet
	ok := r.object(func(key string) bool {
		switch key {
		case "text":
			var s string
			if p.Content != nil || !fields.once(0) || !r.strInto(&s) {
				return false
			}
			p.Content = a2asdk.Text(s)
			return true
		case "data":
			var v any
			if p.Content != nil || !fields.once(1) || !r.unmarshal(&v) {
				return false
			}
			p.Content = a2asdk.Data{Value: v}
			return true
		case "filename":
			return fields.once(2) && r.strInto(&p.Filename)
		case "mediaType":
			return fields.once(3) && r.strInto(&p.MediaType)
		case "metadata":
			return fields.once(4) && r.unmarshal(&p.Metadata)
		}
		// raw (base64) and url parts are left to the SDK.
		return r.skipUnknown(key, "text", "data", "filename", "mediaType", "metadata", "raw", "url")
	})
	if !ok || p.Content == nil {
		return nil
	}
	return p
}

// fieldSet tells a field met twice (encoding/json keeps the last value;
// we decline instead).
type fieldSet uint16

func (f *fieldSet) once(i uint) bool {
	if *f&(1<<i) != 0 {
		return false
	}
	*f |= 1 << i
	return true
}

// jsonReader is a strict, forward-only JSON reader over one payload. Every
// method returns false on anything it does not accept; the reader is then
// abandoned.
type jsonReader struct {
	b []byte
	i int
}

func (r *jsonReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *jsonReader) consume(c byte) bool {
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (r *jsonReader) end() bool {
	r.ws()
	return r.i == len(r.b)
}

// object reads an object, calling field for each key with the reader
// positioned before the value; field must consume the value.
func (r *jsonReader) object(field func(key string) bool) bool {
	r.ws()
	if !r.consume('{') {
		return false
	}
	r.ws()
	if r.consume('}') {
		return true
	}
	for {
		r.ws()
		key, ok := r.key()
		if !ok {
			return false
		}
		r.ws()
		if !r.consume(':') || !field(key) {
			return false
		}
		r.ws()
		if r.consume('}') {
			return true
		}
		if !r.consume(',') {
			return false
		}
	}
}

// key reads an object key. Keys with escapes or non-ASCII bytes are
// declined: encoding/json would match them to fields in ways (unescaping,
// Unicode case folding) not worth reproducing.
func (r *jsonReader) key() (string, bool) {
	if !r.consume('"') {
		return "", false
	}
	start := r.i
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			k := r.b[start:r.i]
			r.i++
			return string(k), true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return "", false
		}
		r.i++
	}
	return "", false
}

// skipUnknown skips the value of a key that is none of known. A key
// encoding/json would fold onto a known field ("TaskId" for "taskId") is
// declined, so is any other key the SDK gives meaning to (listed in known
// without a case here: an error, another event kind, a raw part).
func (r *jsonReader) skipUnknown(key string, known ...string) bool {
	for _, k := range known {
		if strings.EqualFold(key, k) {
			return false
		}
	}
	_, ok := r.value()
	return ok
}

// str reads a string value the way encoding/json does: the common case (no
// escapes, valid UTF-8) is sliced; anything else is left to encoding/json,
// which replaces invalid UTF-8 and lone surrogates with U+FFFD.
func (r *jsonReader) str() (string, bool) {
	r.ws()
	start := r.i
	if !r.consume('"') {
		return "", false
	}
	plain := true
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			raw := r.b[start:r.i]
			if plain {
				return string(raw[1 : len(raw)-1]), true
			}
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			plain = false
			r.i++
			if r.i >= len(r.b) {
				return "", false
			}
			switch r.b[r.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				r.i++
			case 'u':
				if r.i+4 >= len(r.b) || !isHex(r.b[r.i+1]) || !isHex(r.b[r.i+2]) || !isHex(r.b[r.i+3]) || !isHex(r.b[r.i+4]) {
					return "", false
				}
				r.i += 5
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			_, size := utf8.DecodeRune(r.b[r.i:])
			if size == 1 {
				plain = false // invalid UTF-8: encoding/json substitutes it
			}
			r.i += size
		default:
			r.i++
		}
	}
	return "", false
}

func (r *jsonReader) strInto(dst *string) bool {
	s, ok := r.str()
	*dst = s
	return ok
}

func (r *jsonReader) boolInto(dst *bool) bool {
	r.ws()
	switch {
	case r.literal("true"):
		*dst = true
		return true
	case r.literal("false"):
		*dst = false
		return true
	}
	return false
}

func (r *jsonReader) literal(lit string) bool {
	if len(r.b)-r.i >= len(lit) && string(r.b[r.i:r.i+len(lit)]) == lit {
		r.i += len(lit)
		return true
	}
	return false
}

// unmarshal decodes the next value with encoding/json into dst, as the SDK
// does for the fields it types as any, maps or lists. null is declined:
// encoding/json's treatment of it varies by destination.
func (r *jsonReader) unmarshal(dst any) bool {
	raw, ok := r.value()
	if !ok || raw[0] == 'n' {
		return false
	}
	return json.Unmarshal(raw, dst) == nil
}

// maxDepth bounds nesting in skipped values; deeper payloads go to the SDK.
const maxDepth = 64

// value skips one JSON value, validating it, and returns its bytes.
func (r *jsonReader) value() ([]byte, bool) {
	r.ws()
	start := r.i
	if !r.skip(0) {
		return nil, false
	}
	return r.b[start:r.i], true
}

func (r *jsonReader) skip(depth int) bool {
	if depth > maxDepth || r.i >= len(r.b) {
		return false
	}
	switch c := r.b[r.i]; {
	case c == '"':
		_, ok := r.str()
		return ok
	case c == '{':
		r.i++
		r.ws()
		if r.consume('}') {
			return true
		}
		for {
			r.ws()
			if r.i >= len(r.b) || r.b[r.i] != '"' {
				return false
			}
			if _, ok := r.str(); !ok {
				return false
			}
			r.ws()
			if !r.consume(':') {
				return false
			}
			r.ws()
			if !r.skip(depth + 1) {
				return false
			}
			r.ws()
			if r.consume('}') {
				return true
			}
			if !r.consume(',') {
				return false
			}
		}
	case c == '[':
		r.i++
		r.ws()
		if r.consume(']') {
			return true
		}
		for {
			r.ws()
			if !r.skip(depth + 1) {
				return false
			}
			r.ws()
			if r.consume(']') {
				return true
			}
			if !r.consume(',') {
				return false
			}
		}
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	default:
		return r.number()
	}
}

// number skips a number in JSON's grammar.
func (r *jsonReader) number() bool {
	r.consume('-')
	switch {
	case r.consume('0'):
	case r.i < len(r.b) && r.b[r.i] >= '1' && r.b[r.i] <= '9':
		r.digits()
	default:
		return false
	}
	if r.consume('.') && !r.digits() {
		return false
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if !r.consume('+') {
			r.consume('-')
		}
		if !r.digits() {
			return false
		}
	}
	return true
}

func (r *jsonReader) digits() bool {
	start := r.i
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	return r.i > start
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
