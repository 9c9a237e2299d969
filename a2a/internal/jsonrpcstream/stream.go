package jsonrpcstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/google/uuid"
)

// streamingJSONRPC is the SDK's JSON-RPC transport with its two streaming
// methods replaced: the request on the wire is the SDK's, but the SSE
// answer is read with a small line reader and decoded by
// decodeStreamEvent, falling back to the SDK's own decoding for any payload
// that one declines. Two reasons, both measured with bridge-bench:
//
//   - decoding dominated the bridge's CPU per streamed chunk (the SDK
//     unmarshals every payload twice with encoding/json);
//   - the SDK's SSE scanner allocates a 64 KiB buffer per stream, most of
//     the memory of an open stream to a slow agent.
//
// Unary calls (SendMessage, GetTask, CancelTask, …) stay the SDK's.
type streamingJSONRPC struct {
	a2aclient.Transport
	url    string
	client *http.Client
}

func newStreamingJSONRPC(url string, client *http.Client) *streamingJSONRPC {
	return &streamingJSONRPC{Transport: a2aclient.NewJSONRPCTransport(url, client), url: url, client: client}
}

// The JSON-RPC method names of A2A v1.0 (the SDK keeps its own internal).
const (
	methodSendStreaming = "SendStreamingMessage"
	methodSubscribe     = "SubscribeToTask"
)

func (t *streamingJSONRPC) SendStreamingMessage(ctx context.Context, params a2aclient.ServiceParams, req *a2asdk.SendMessageRequest) iter.Seq2[a2asdk.Event, error] {
	return t.stream(ctx, methodSendStreaming, params, req)
}

func (t *streamingJSONRPC) SubscribeToTask(ctx context.Context, params a2aclient.ServiceParams, req *a2asdk.SubscribeToTaskRequest) iter.Seq2[a2asdk.Event, error] {
	return t.stream(ctx, methodSubscribe, params, req)
}

// rpcRequest is a JSON-RPC 2.0 request as the SDK writes it.
type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
	ID      string `json:"id"`
}

func (t *streamingJSONRPC) stream(ctx context.Context, method string, params a2aclient.ServiceParams, payload any) iter.Seq2[a2asdk.Event, error] {
	return func(yield func(a2asdk.Event, error) bool) {
		body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", Method: method, Params: payload, ID: uuid.NewString()})
		if err != nil {
			yield(nil, fmt.Errorf("failed to marshal request: %w", err))
			return
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
		if err != nil {
			yield(nil, fmt.Errorf("failed to create HTTP request: %w", err))
			return
		}
		req.Header.Set("Content-Type", "application/json")
		for k, vals := range params {
			for _, v := range vals {
				req.Header.Add(k, v)
			}
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := t.client.Do(req)
		if err != nil {
			yield(nil, fmt.Errorf("failed to send HTTP request: %w", err))
			return
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != http.StatusOK {
			yield(nil, fmt.Errorf("unexpected HTTP status: %s", resp.Status))
			return
		}
		for data, err := range sseData(resp.Body) {
			if err != nil {
				yield(nil, err)
				return
			}
			ev, ok := decodeStreamEvent(data)
			if !ok {
				if ev, err = sdkDecode(data); err != nil {
					yield(nil, err)
					return
				}
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// maxSSELine is the longest SSE line accepted, the SDK's limit.
const maxSSELine = 10 << 20

// sseData yields the data of every SSE event, as the SDK's parser does
// since v2.4.0 (a2a-go #371): the "data:" lines of one event (up to a blank
// line, or the end of the body) joined with "\n", an optional space after
// the colon dropped, lines ending in "\n" or "\r\n", other lines ignored,
// and an event whose data is empty not yielded at all. A line is read into
// a 1 KiB buffer (the HTTP body below is buffered already; an open stream
// to a slow agent should cost little); a longer one is assembled in a
// slice of its own. The yielded slice is reused for the next event.
func sseData(body io.Reader) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		br := bufio.NewReaderSize(body, 1<<10)
		var long, event []byte
		for {
			line, err := br.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				long = append(long[:0], line...)
				for errors.Is(err, bufio.ErrBufferFull) && len(long) <= maxSSELine {
					line, err = br.ReadSlice('\n')
					long = append(long, line...)
				}
				if len(long) > maxSSELine {
					yield(nil, fmt.Errorf("SSE stream error: %w", bufio.ErrTooLong))
					return
				}
				line = long
			}
			if err != nil && !errors.Is(err, io.EOF) {
				yield(nil, fmt.Errorf("SSE stream error: %w", err))
				return
			}
			eof := err != nil
			line = bytes.TrimSuffix(line, []byte("\n"))
			line = bytes.TrimSuffix(line, []byte("\r"))
			if len(line) == 0 || eof {
				if data, ok := bytes.CutPrefix(line, []byte("data:")); ok && eof {
					event = appendData(event, data)
				}
				if len(event) > 0 && !yield(event, nil) {
					return
				}
				event = event[:0]
			} else if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				event = appendData(event, data)
			}
			if eof {
				return
			}
		}
	}
}

// appendData adds one data line's payload to an event's data, joined by
// "\n" as the SSE specification says. Like the SDK, it adds no "\n" while
// the event's data is still empty.
func appendData(event, data []byte) []byte {
	data, _ = bytes.CutPrefix(data, []byte(" "))
	if len(event) > 0 {
		event = append(event, '\n')
	}
	return append(event, data...)
}

// sdkDecode decodes a payload decodeStreamEvent declined as the SDK's
// JSON-RPC transport does: the response with encoding/json, then its
// result as an a2a.StreamResponse. A JSON-RPC error is handed to the SDK's
// transport itself as a one-event stream, so it is mapped to the same typed
// A2A error.
func sdkDecode(payload []byte) (a2asdk.Event, error) {
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      string          `json:"id"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   json.RawMessage `json:"error,omitempty"`
	}
	if err := json.Unmarshal(payload, &resp); err != nil || (len(resp.Error) > 0 && string(resp.Error) != "null") {
		return sdkStreamDecode(payload)
	}
	var sr a2asdk.StreamResponse
	if err := json.Unmarshal(resp.Result, &sr); err != nil {
		return nil, err
	}
	return sr.Event, nil
}

// sdkStreamDecode runs payload through the SDK's JSON-RPC transport as the
// only event of a stream.
func sdkStreamDecode(payload []byte) (a2asdk.Event, error) {
	canned := &http.Client{Transport: cannedStream(payload)}
	sdk := a2aclient.NewJSONRPCTransport("http://decode.invalid/", canned)
	for ev, err := range sdk.SendStreamingMessage(context.Background(), nil, &a2asdk.SendMessageRequest{}) {
		return ev, err
	}
	return nil, errors.New("failed to parse SSE data: empty payload")
}

// cannedStream answers any request with an SSE stream of one event whose
// data is the payload: one data line per line of it, ended by "\r\n" so
// that a line's own trailing "\r" survives the SDK's line splitting.
type cannedStream []byte

func (c cannedStream) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	var b strings.Builder
	for line := range bytes.SplitSeq(c, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	return &http.Response{
		StatusCode: http.StatusOK,
		Status:     "200 OK",
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(strings.NewReader(b.String())),
		Request:    req,
	}, nil
}
