package agui

// KeepAliveFrame is an SSE comment. Every client generation skips frames
// without a data: line (AGUI-PROTOCOL.md §7.2), so it keeps proxies from
// cutting an idle stream without the client seeing anything.
const KeepAliveFrame = ": keep-alive\n\n"

// AppendSSE appends e as one SSE frame, "data: <json>\n\n", to dst.
//
// The frame is LF-only: the client's parser splits frames on "\n\n" alone,
// so a CRLF frame turns the whole stream into one unparseable frame on every
// generation (§6.2, §7.2). The JSON is a single line because Marshal escapes
// every line break inside strings and compacts raw values, so one data:
// line carries the whole event.
func AppendSSE(dst []byte, e Event) ([]byte, error) {
	n := len(dst)
	dst = append(dst, "data: "...)
	dst, err := appendEvent(dst, e)
	if err != nil {
		return dst[:n], err
	}
	return append(dst, '\n', '\n'), nil
}
