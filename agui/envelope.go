package agui

import "strconv"

// Envelope is one journaled AG-UI event of a thread: the event's wire form
// (Marshal's bytes, never re-encoded) with the run it belongs to and its
// sequence number in the thread's journal. Seq is 0 for an event the
// journal does not hold (a refused request's RUN_ERROR, the notice that ends
// a stream when the bridge shuts down): a client resumes after the last
// non-zero Seq it saw.
type Envelope struct {
	ThreadID string
	RunID    string
	Seq      int64
	Event    []byte
}

// AppendSSEFrame appends env as one SSE frame: "id: <seq>\n" (when the
// journal holds the event, so a client can resume with Last-Event-ID) and
// "data: <event>\n\n". Clients ignore id: lines (AGUI-PROTOCOL.md §7.2);
// the frame is LF-only like AppendSSE.
func AppendSSEFrame(dst []byte, env Envelope) []byte {
	if env.Seq > 0 {
		dst = append(dst, "id: "...)
		dst = strconv.AppendInt(dst, env.Seq, 10)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = append(dst, env.Event...)
	return append(dst, '\n', '\n')
}

// AppendEnvelopeJSON appends env as the bridge's WebSocket (and long-poll)
// message: {"threadId":…,"runId":…,"seq":…,"event":<event>}. The event is
// embedded as it is, so the bytes a WebSocket client reads are those of
// the journal.
func AppendEnvelopeJSON(dst []byte, env Envelope) []byte {
	dst = append(dst, `{"threadId":`...)
	dst = appendJSONString(dst, env.ThreadID)
	dst = append(dst, `,"runId":`...)
	dst = appendJSONString(dst, env.RunID)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, env.Seq, 10)
	dst = append(dst, `,"event":`...)
	dst = append(dst, env.Event...)
	return append(dst, '}')
}

// IsTerminalEvent reports whether an encoded event is RUN_FINISHED or
// RUN_ERROR. Marshal writes "type" first, so a prefix check is enough.
func IsTerminalEvent(event []byte) bool {
	return hasPrefix(event, `{"type":"RUN_FINISHED"`) || hasPrefix(event, `{"type":"RUN_ERROR"`)
}

func hasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}
