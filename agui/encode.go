package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Marshal returns the wire form of e: compact JSON on one line, "type" as
// the first member followed by the struct's members in declaration order,
// never HTML-escaped. The bytes are stable, so a journal replay is
// byte-for-byte the live stream.
//
// Optional members are omitted, never null (AGUI-PROTOCOL.md §1). Members
// that must be present are always written: Custom.Value, Raw.Event and
// StateSnapshot.Snapshot as null when unset (§2.4, §2.7), and the required
// arrays StateDelta.Delta, ActivityDelta.Patch and MessagesSnapshot.Messages
// as [] when nil, because a null array is fatal on every client.
func Marshal(e Event) ([]byte, error) {
	if isNilEvent(e) {
		return nil, errors.New("agui: cannot marshal a nil event")
	}
	return appendEvent(make([]byte, 0, sizeHint(e)), e)
}

// sizeHint guesses the encoded size of the hot events so Marshal allocates
// once; other events start from a modest buffer.
func sizeHint(e Event) int {
	const overhead = 96 // type, member names, quotes, timestamp
	var n int
	switch ev := e.(type) {
	case *TextMessageContent:
		n = len(ev.SubagentRunID) + len(ev.MessageID) + len(ev.Delta)
	case *ToolCallArgs:
		n = len(ev.SubagentRunID) + len(ev.ToolCallID) + len(ev.Delta)
	case *ReasoningMessageContent:
		n = len(ev.SubagentRunID) + len(ev.MessageID) + len(ev.Delta)
	}
	// Leave room for a few escapes rather than growing the slice.
	return overhead + n + n/8
}

// appendEvent appends the wire form of e to dst.
func appendEvent(dst []byte, e Event) ([]byte, error) {
	if isNilEvent(e) {
		return dst, errors.New("agui: cannot marshal a nil event")
	}
	if out, ok := appendFast(dst, e); ok {
		return out, nil
	}
	return appendGeneric(dst, e)
}

func isNilEvent(e Event) bool {
	if e == nil {
		return true
	}
	v := reflect.ValueOf(e)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// encoderState is a reusable buffer with an Encoder writing into it; pooling
// it keeps the generic path from allocating an Encoder per event.
type encoderState struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoderPool = sync.Pool{New: func() any {
	s := &encoderState{}
	s.enc = json.NewEncoder(&s.buf)
	// SSE frames are read by JavaScript, not embedded in HTML: escaping
	// <, > and & would only make deltas harder to read.
	s.enc.SetEscapeHTML(false)
	return s
}}

var nullJSON = json.RawMessage("null")

// appendGeneric encodes e with encoding/json and splices "type" in front of
// the struct's own members.
func appendGeneric(dst []byte, e Event) ([]byte, error) {
	s := encoderPool.Get().(*encoderState)
	defer encoderPool.Put(s)
	s.buf.Reset()
	if err := s.enc.Encode(normalizeForWire(e)); err != nil {
		return dst, fmt.Errorf("agui: marshal %s: %w", e.Type(), err)
	}
	body := bytes.TrimSuffix(s.buf.Bytes(), []byte("\n"))
	dst = append(dst, `{"type":"`...)
	dst = append(dst, e.Type()...)
	dst = append(dst, '"')
	if len(body) > 2 { // more than "{}"
		dst = append(dst, ',')
	}
	return append(dst, body[1:]...), nil
}

// normalizeForWire returns e, or a shallow copy of it with required members
// that would otherwise be written wrongly fixed up: an empty (non-nil) raw
// value would be invalid JSON, and a nil required array would be null.
func normalizeForWire(e Event) Event {
	switch ev := e.(type) {
	case *Custom:
		if ev.Value != nil && len(ev.Value) == 0 {
			c := *ev
			c.Value = nullJSON
			return &c
		}
	case *Raw:
		if ev.Event != nil && len(ev.Event) == 0 {
			c := *ev
			c.Event = nullJSON
			return &c
		}
	case *StateSnapshot:
		if ev.Snapshot != nil && len(ev.Snapshot) == 0 {
			c := *ev
			c.Snapshot = nullJSON
			return &c
		}
	case *StateDelta:
		if ev.Delta == nil {
			c := *ev
			c.Delta = []PatchOp{}
			return &c
		}
	case *ActivityDelta:
		if ev.Patch == nil {
			c := *ev
			c.Patch = []PatchOp{}
			return &c
		}
	case *MessagesSnapshot:
		if ev.Messages == nil {
			c := *ev
			c.Messages = []Message{}
			return &c
		}
	}
	return e
}

// appendFast hand-encodes the events a run streams by the thousand (text
// and tool-call deltas and their brackets). It produces exactly the bytes
// of appendGeneric (TestFastPathMatchesGeneric holds it to that) and
// declines events with metadata, which needs encoding/json's map encoding.
func appendFast(dst []byte, e Event) ([]byte, bool) {
	switch ev := e.(type) {
	case *TextMessageContent:
		if ev.Metadata != nil {
			return dst, false
		}
		dst = appendHead(dst, EventTextMessageContent, &ev.Base)
		dst = appendMember(dst, "messageId", ev.MessageID)
		dst = appendMember(dst, "delta", ev.Delta)
	case *TextMessageStart:
		if ev.Metadata != nil {
			return dst, false
		}
		dst = appendHead(dst, EventTextMessageStart, &ev.Base)
		dst = appendMember(dst, "messageId", ev.MessageID)
		dst = appendMember(dst, "role", ev.Role)
		if ev.Name != "" {
			dst = appendMember(dst, "name", ev.Name)
		}
	case *TextMessageEnd:
		if ev.Metadata != nil {
			return dst, false
		}
		dst = appendHead(dst, EventTextMessageEnd, &ev.Base)
		dst = appendMember(dst, "messageId", ev.MessageID)
	case *ToolCallStart:
		if ev.Metadata != nil {
			return dst, false
		}
		dst = appendHead(dst, EventToolCallStart, &ev.Base)
		dst = appendMember(dst, "toolCallId", ev.ToolCallID)
		dst = appendMember(dst, "toolCallName", ev.ToolCallName)
		if ev.ParentMessageID != "" {
			dst = appendMember(dst, "parentMessageId", ev.ParentMessageID)
		}
	case *ToolCallArgs:
		if ev.Metadata != nil {
			return dst, false
		}
		dst = appendHead(dst, EventToolCallArgs, &ev.Base)
		dst = appendMember(dst, "toolCallId", ev.ToolCallID)
		dst = appendMember(dst, "delta", ev.Delta)
	case *ToolCallEnd:
		if ev.Metadata != nil {
			return dst, false
		}
		dst = appendHead(dst, EventToolCallEnd, &ev.Base)
		dst = appendMember(dst, "toolCallId", ev.ToolCallID)
	case *ReasoningMessageContent:
		if ev.Metadata != nil {
			return dst, false
		}
		dst = appendHead(dst, EventReasoningMessageContent, &ev.Base)
		dst = appendMember(dst, "messageId", ev.MessageID)
		dst = appendMember(dst, "delta", ev.Delta)
	default:
		return dst, false
	}
	return append(dst, '}'), true
}

// appendHead writes `{"type":"T"` and the Base members other than metadata,
// in Base's declaration order.
func appendHead(dst []byte, t EventType, b *Base) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, t...)
	dst = append(dst, '"')
	if b.Timestamp != 0 {
		dst = append(dst, `,"timestamp":`...)
		dst = strconv.AppendInt(dst, b.Timestamp, 10)
	}
	if b.SubagentRunID != "" {
		dst = appendMember(dst, "subagentRunId", b.SubagentRunID)
	}
	return dst
}

func appendMember(dst []byte, key, value string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	dst = append(dst, '"', ':')
	return appendJSONString(dst, value)
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s exactly as encoding/json does with HTML escaping
// off: short escapes for \b \f \n \r \t, \u00XX for other control bytes,
// U+FFFD for invalid UTF-8, and \u2028/\u2029 escaped because JavaScript
// parsers before ES2019 treat them as line ends.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// newEvent returns a zero event of type t, or nil for a type this package
// does not know (THINKING_*, META, anything newer).
func newEvent(t EventType) Event {
	switch t {
	case EventRunStarted:
		return &RunStarted{}
	case EventRunFinished:
		return &RunFinished{}
	case EventRunError:
		return &RunError{}
	case EventStepStarted:
		return &StepStarted{}
	case EventStepFinished:
		return &StepFinished{}
	case EventTextMessageStart:
		return &TextMessageStart{}
	case EventTextMessageContent:
		return &TextMessageContent{}
	case EventTextMessageEnd:
		return &TextMessageEnd{}
	case EventTextMessageChunk:
		return &TextMessageChunk{}
	case EventToolCallStart:
		return &ToolCallStart{}
	case EventToolCallArgs:
		return &ToolCallArgs{}
	case EventToolCallEnd:
		return &ToolCallEnd{}
	case EventToolCallChunk:
		return &ToolCallChunk{}
	case EventToolCallResult:
		return &ToolCallResult{}
	case EventStateSnapshot:
		return &StateSnapshot{}
	case EventStateDelta:
		return &StateDelta{}
	case EventMessagesSnapshot:
		return &MessagesSnapshot{}
	case EventActivitySnapshot:
		return &ActivitySnapshot{}
	case EventActivityDelta:
		return &ActivityDelta{}
	case EventRaw:
		return &Raw{}
	case EventCustom:
		return &Custom{}
	case EventReasoningStart:
		return &ReasoningStart{}
	case EventReasoningMessageStart:
		return &ReasoningMessageStart{}
	case EventReasoningMessageContent:
		return &ReasoningMessageContent{}
	case EventReasoningMessageEnd:
		return &ReasoningMessageEnd{}
	case EventReasoningMessageChunk:
		return &ReasoningMessageChunk{}
	case EventReasoningEnd:
		return &ReasoningEnd{}
	case EventReasoningEncryptedValue:
		return &ReasoningEncryptedValue{}
	case EventSubagentStarted:
		return &SubagentStarted{}
	case EventSubagentFinished:
		return &SubagentFinished{}
	case EventSubagentError:
		return &SubagentError{}
	}
	return nil
}

// Decode parses one event from its wire form. It is the inverse of Marshal
// (Marshal(Decode(b)) reproduces our own bytes) and is strict in the ways
// that matter when checking a stream someone wrote: an unknown type, an
// unknown member, or null where the protocol says "omitted, never null"
// (AGUI-PROTOCOL.md §1, §6.3) is an error rather than silently lost, since
// each of those is something a real client would warn about or reject. A
// fractional timestamp fails to decode into the integer field, as it fails
// a 1.0 client.
func Decode(b []byte) (Event, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return nil, fmt.Errorf("agui: decode event: %w", err)
	}
	if members == nil {
		return nil, errors.New("agui: decode event: not a JSON object")
	}
	rawType, ok := members["type"]
	if !ok {
		return nil, errors.New(`agui: decode event: no "type" member`)
	}
	var t EventType
	if err := json.Unmarshal(rawType, &t); err != nil {
		return nil, fmt.Errorf(`agui: decode event: "type": %w`, err)
	}
	e := newEvent(t)
	if e == nil {
		return nil, fmt.Errorf("agui: decode event: unknown event type %q", t)
	}
	delete(members, "type")
	if err := checkShape(reflect.TypeOf(e).Elem(), members, ""); err != nil {
		return nil, fmt.Errorf("agui: decode %s: %w", t, err)
	}
	if err := json.Unmarshal(b, e); err != nil {
		return nil, fmt.Errorf("agui: decode %s: %w", t, err)
	}
	return e, nil
}

// jsonField describes one member of a struct as encoding/json sees it.
type jsonField struct {
	typ reflect.Type
	// opaque members hold arbitrary JSON (state, values, metadata, …),
	// where null is a legal value and nothing inside is described.
	opaque bool
	// nullable members hold any JSON value, null included (CUSTOM.value,
	// RAW.event, STATE_SNAPSHOT.snapshot, a patch op's value, results).
	nullable bool
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	contentType    = reflect.TypeFor[Content]()
	fieldCache     sync.Map // reflect.Type → map[string]jsonField
)

// fieldsOf lists the JSON members of struct type t, following embedded
// structs the way encoding/json does.
func fieldsOf(t reflect.Type) map[string]jsonField {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]jsonField)
	}
	fields := map[string]jsonField{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			sf := t.Field(i)
			if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
				walk(sf.Type)
				continue
			}
			if !sf.IsExported() {
				continue
			}
			tag := sf.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			ft := sf.Type
			opaque := ft == rawMessageType || ft.Kind() == reflect.Map || ft.Kind() == reflect.Interface || ft == contentType || (ft.Kind() == reflect.Pointer && ft.Elem() == contentType)
			fields[name] = jsonField{typ: ft, opaque: opaque, nullable: ft == rawMessageType}
		}
	}
	walk(t)
	fieldCache.Store(t, fields)
	return fields
}

// checkShape rejects unknown members and nulls in members of struct type t,
// recursing into nested protocol objects (outcome, interrupts, patch ops,
// messages) but not into opaque JSON.
func checkShape(t reflect.Type, members map[string]json.RawMessage, path string) error {
	fields := fieldsOf(t)
	for name, raw := range members {
		f, ok := fields[name]
		at := path + name
		if !ok {
			return fmt.Errorf("unknown member %q", at)
		}
		if isJSONNull(raw) {
			if f.nullable {
				continue
			}
			return fmt.Errorf("member %q is null; optional members are omitted, never null", at)
		}
		if f.opaque {
			continue
		}
		if err := checkValueShape(f.typ, raw, at); err != nil {
			return err
		}
	}
	return nil
}

func checkValueShape(t reflect.Type, raw json.RawMessage, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return fmt.Errorf("member %q: %w", path, err)
		}
		return checkShape(t, members, path+".")
	case reflect.Slice:
		if t.Elem().Kind() != reflect.Struct {
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("member %q: %w", path, err)
		}
		for i, item := range items {
			if isJSONNull(item) {
				return fmt.Errorf("member %s[%d] is null", path, i)
			}
			if err := checkValueShape(t.Elem(), item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func isJSONNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}
