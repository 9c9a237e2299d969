package main

import (
	"bufio"
	"bytes"
	"io"
)

// maxSSELine bounds one line of a stream, so a broken server cannot make
// the reader buffer without limit. The largest line the bench sees is the
// peer's RAW event wrapping one A2A event, well under a kilobyte.
const maxSSELine = 4 << 20

// sseReader yields the data of each event of a Server-Sent Events stream
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
// lines end in LF, CRLF or CR; "data:" lines of one event are joined with
// LF; a blank line ends the event; comments (": keep-alive") and the other
// fields (event, id, retry) are skipped; an event with no data is not an
// event; a last event not ended by a blank line is dropped, as a browser
// would.
type sseReader struct {
	lines   *bufio.Scanner
	data    []byte
	hasData bool
}

// newSSEReader reads events from r with a buffer of bufSize to start with;
// it grows for longer lines.
func newSSEReader(r io.Reader, bufSize int) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, bufSize), maxSSELine)
	sc.Split(scanSSELine)
	return &sseReader{lines: sc}
}

// Next returns the data of the next event. The slice is only valid until the
// next call. At the end of the stream it returns io.EOF.
func (s *sseReader) Next() ([]byte, error) {
	for s.lines.Scan() {
		line := s.lines.Bytes()
		if len(line) == 0 {
			if s.hasData {
				s.hasData = false
				return s.data, nil
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue // a comment (empty field name), another field, or junk
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if !s.hasData {
			s.data = append(s.data[:0], value...)
			s.hasData = true
		} else {
			s.data = append(append(s.data, '\n'), value...)
		}
	}
	if err := s.lines.Err(); err != nil {
		return nil, err
	}
	return nil, io.EOF
}

// scanSSELine is a [bufio.SplitFunc] for SSE lines: it ends a line at CRLF,
// LF or a lone CR. An unterminated last line is dropped: it cannot end an
// event.
func scanSSELine(data []byte, atEOF bool) (advance int, token []byte, err error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0:
		if atEOF {
			return len(data), nil, nil
		}
		return 0, nil, nil // need more
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	default:
		return 0, nil, nil // a CR at the end of the buffer: is an LF next?
	}
}
