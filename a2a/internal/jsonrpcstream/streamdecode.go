package jsonrpcstream

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
	// One copy of the payload; every string decoded is a substring of it.
	r := jsonReader{b: string(payload)}
	var result a2asdk.Event
	var fields fieldSet
	for o := r.object(); o.next(); {
		switch o.key {
		case "jsonrpc", "id":
			i := uint(0)
			if o.key == "id" {
				i = 1
			}
			var s string
			if !fields.once(i) || !r.strInto(&s) {
				return nil, false
			}
		case "result":
			if !fields.once(2) {
				return nil, false
			}
			if result = r.streamResponse(); result == nil {
				return nil, false
			}
		default:
			if !r.skipUnknown(o.key, "jsonrpc", "id", "result", "error") {
				return nil, false
			}
		}
	}
	if r.bad || result == nil || !r.end() {
		return nil, false
	}
	return result, true
}

// streamResponse reads {"statusUpdate":{…}} or {"artifactUpdate":{…}}.
func (r *jsonReader) streamResponse() a2asdk.Event {
	var ev a2asdk.Event
	for o := r.object(); o.next(); {
		if ev != nil {
			return nil // a second event kind, or a duplicate
		}
		switch o.key {
		case "statusUpdate":
			if e := r.statusUpdate(); e != nil {
				ev = e
			}
		case "artifactUpdate":
			if e := r.artifactUpdate(); e != nil {
				ev = e
			}
		default:
			if r.skipUnknown(o.key, "statusUpdate", "artifactUpdate", "task", "message") {
				continue
			}
		}
		if ev == nil {
			return nil
		}
	}
	if r.bad {
		return nil
	}
	return ev
}

func (r *jsonReader) statusUpdate() *a2asdk.TaskStatusUpdateEvent {
	e := &a2asdk.TaskStatusUpdateEvent{}
	var fields fieldSet
	for o := r.object(); o.next(); {
		var ok bool
		switch o.key {
		case "contextId":
			ok = fields.once(0) && r.strInto(&e.ContextID)
		case "taskId":
			ok = fields.once(1) && r.strInto((*string)(&e.TaskID))
		case "status":
			ok = fields.once(2) && r.taskStatus(&e.Status)
		case "metadata":
			ok = fields.once(3) && r.unmarshal(&e.Metadata)
		default:
			ok = r.skipUnknown(o.key, "contextId", "taskId", "status", "metadata")
		}
		if !ok {
			return nil
		}
	}
	if r.bad {
		return nil
	}
	return e
}

func (r *jsonReader) taskStatus(s *a2asdk.TaskStatus) bool {
	var fields fieldSet
	for o := r.object(); o.next(); {
		var ok bool
		switch o.key {
		case "state":
			ok = fields.once(0) && r.strInto((*string)(&s.State))
			if s.State == "TASK_STATE_UNSPECIFIED" {
				s.State = a2asdk.TaskStateUnspecified
			}
		case "message":
			if fields.once(1) {
				s.Message = r.message()
				ok = s.Message != nil
			}
		case "timestamp":
			if fields.once(2) {
				raw, valid := r.value()
				t := new(time.Time)
				if ok = valid && raw[0] == '"' && t.UnmarshalJSON([]byte(raw)) == nil; ok {
					s.Timestamp = t
				}
			}
		default:
			ok = r.skipUnknown(o.key, "state", "message", "timestamp")
		}
		if !ok {
			return false
		}
	}
	return !r.bad
}

func (r *jsonReader) message() *a2asdk.Message {
	m := &a2asdk.Message{}
	var fields fieldSet
	for o := r.object(); o.next(); {
		var ok bool
		switch o.key {
		case "messageId":
			ok = fields.once(0) && r.strInto(&m.ID)
		case "contextId":
			ok = fields.once(1) && r.strInto(&m.ContextID)
		case "taskId":
			ok = fields.once(2) && r.strInto((*string)(&m.TaskID))
		case "role":
			ok = fields.once(3) && r.strInto((*string)(&m.Role))
			if m.Role == "ROLE_UNSPECIFIED" {
				m.Role = a2asdk.MessageRoleUnspecified
			}
		case "parts":
			ok = fields.once(4) && r.parts(&m.Parts)
		case "metadata":
			ok = fields.once(5) && r.unmarshal(&m.Metadata)
		case "extensions":
			ok = fields.once(6) && r.unmarshal(&m.Extensions)
		case "referenceTaskIds":
			ok = fields.once(7) && r.unmarshal(&m.ReferenceTasks)
		default:
			ok = r.skipUnknown(o.key, "messageId", "contextId", "taskId", "role", "parts", "metadata", "extensions", "referenceTaskIds")
		}
		if !ok {
			return nil
		}
	}
	if r.bad {
		return nil
	}
	return m
}

func (r *jsonReader) artifactUpdate() *a2asdk.TaskArtifactUpdateEvent {
	r.chunk = &artifactChunk{}
	e := &r.chunk.event
	var fields fieldSet
	for o := r.object(); o.next(); {
		var ok bool
		switch o.key {
		case "contextId":
			ok = fields.once(0) && r.strInto(&e.ContextID)
		case "taskId":
			ok = fields.once(1) && r.strInto((*string)(&e.TaskID))
		case "append":
			ok = fields.once(2) && r.boolInto(&e.Append)
		case "lastChunk":
			ok = fields.once(3) && r.boolInto(&e.LastChunk)
		case "artifact":
			if fields.once(4) {
				e.Artifact = r.artifact()
				ok = e.Artifact != nil
			}
		case "metadata":
			ok = fields.once(5) && r.unmarshal(&e.Metadata)
		default:
			ok = r.skipUnknown(o.key, "contextId", "taskId", "append", "lastChunk", "artifact", "metadata")
		}
		if !ok {
			return nil
		}
	}
	if r.bad {
		return nil
	}
	return e
}

func (r *jsonReader) artifact() *a2asdk.Artifact {
	var a *a2asdk.Artifact
	if c := r.chunk; c != nil && !c.artifactTaken {
		a, c.artifactTaken = &c.artifact, true
	} else {
		a = &a2asdk.Artifact{}
	}
	var fields fieldSet
	for o := r.object(); o.next(); {
		var ok bool
		switch o.key {
		case "artifactId":
			ok = fields.once(0) && r.strInto((*string)(&a.ID))
		case "name":
			ok = fields.once(1) && r.strInto(&a.Name)
		case "description":
			ok = fields.once(2) && r.strInto(&a.Description)
		case "parts":
			ok = fields.once(3) && r.parts(&a.Parts)
		case "metadata":
			ok = fields.once(4) && r.unmarshal(&a.Metadata)
		case "extensions":
			ok = fields.once(5) && r.unmarshal(&a.Extensions)
		default:
			ok = r.skipUnknown(o.key, "artifactId", "name", "description", "parts", "metadata", "extensions")
		}
		if !ok {
			return nil
		}
	}
	if r.bad {
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
	var parts a2asdk.ContentParts
	if c := r.chunk; c != nil && !c.partsTaken {
		parts, c.partsTaken = c.parts[:0:1], true
	} else {
		parts = make(a2asdk.ContentParts, 0, 1)
	}
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
	var p *a2asdk.Part
	if c := r.chunk; c != nil && !c.partTaken {
		p, c.partTaken = &c.part, true
	} else {
		p = &a2asdk.Part{}
	}
	var fields fieldSet
	for o := r.object(); o.next(); {
		var ok bool
		switch o.key {
		case "text":
			var s string
			if ok = p.Content == nil && fields.once(0) && r.strInto(&s); ok {
				p.Content = a2asdk.Text(s)
			}
		case "data":
			var v any
			if ok = p.Content == nil && fields.once(1) && r.unmarshal(&v); ok {
				p.Content = a2asdk.Data{Value: v}
			}
		case "filename":
			ok = fields.once(2) && r.strInto(&p.Filename)
		case "mediaType":
			ok = fields.once(3) && r.strInto(&p.MediaType)
		case "metadata":
			ok = fields.once(4) && r.unmarshal(&p.Metadata)
		default:
			// raw (base64) and url parts are left to the SDK.
			ok = r.skipUnknown(o.key, "text", "data", "filename", "mediaType", "metadata", "raw", "url")
		}
		if !ok {
			return nil
		}
	}
	if r.bad || p.Content == nil {
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

// jsonReader is a strict, forward-only JSON reader over one payload. A
// method that meets anything it does not accept returns false (or nil) and
// may set bad; the reader is then abandoned.
type jsonReader struct {
	b   string
	i   int
	bad bool
	// chunk holds an artifact update's structures once one is read.
	chunk *artifactChunk
}

// artifactChunk is, in one allocation, what a streamed chunk decodes to —
// an artifact update, its artifact, and the artifact's first part in a
// list of one — where each was an allocation of its own. Every pointer
// into it keeps all of it, a few hundred bytes, for as long as the
// update's consumer keeps any.
type artifactChunk struct {
	event    a2asdk.TaskArtifactUpdateEvent
	artifact a2asdk.Artifact
	part     a2asdk.Part
	parts    [1]*a2asdk.Part

	artifactTaken, partsTaken, partTaken bool
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

// objectIter walks the keys of one object:
//
//	for o := r.object(); o.next(); { switch o.key { … consume the value … } }
//	if r.bad { … }
//
// After next returns true the reader is positioned before the key's value,
// which the loop body must consume. next returns false at the closing brace
// and on malformed input (then r.bad is set).
type objectIter struct {
	r     *jsonReader
	key   string
	first bool
}

func (r *jsonReader) object() objectIter {
	r.ws()
	if !r.consume('{') {
		r.bad = true
	}
	return objectIter{r: r, first: true}
}

func (o *objectIter) next() bool {
	r := o.r
	if r.bad {
		return false
	}
	r.ws()
	if r.consume('}') {
		return false // "{}" or the end after a value; "{…,}" fails in key
	}
	if !o.first && !r.consume(',') {
		r.bad = true
		return false
	}
	o.first = false
	r.ws()
	key, ok := r.key()
	r.ws()
	if !ok || !r.consume(':') {
		r.bad = true
		return false
	}
	o.key = key
	return true
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
			r.i++
			return r.b[start : r.i-1], true
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
				return raw[1 : len(raw)-1], true
			}
			var s string
			if json.Unmarshal([]byte(raw), &s) != nil {
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
			_, size := utf8.DecodeRuneInString(r.b[r.i:])
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
	if len(r.b)-r.i >= len(lit) && r.b[r.i:r.i+len(lit)] == lit {
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
	return json.Unmarshal([]byte(raw), dst) == nil
}

// maxDepth bounds nesting in skipped values; deeper payloads go to the SDK.
const maxDepth = 64

// value skips one JSON value, validating it, and returns its text.
func (r *jsonReader) value() (string, bool) {
	r.ws()
	start := r.i
	if !r.skip(0) {
		return "", false
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
