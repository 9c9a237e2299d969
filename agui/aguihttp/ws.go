package aguihttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/a2a-agui-bridge/bridge/agui"
	"github.com/a2a-agui-bridge/bridge/auth"
)

// The bridge's WebSocket framing. AG-UI defines none (AGUI-PROTOCOL.md
// §7.4), so this is part of the bridge's own contract (docs/http.md, WebSocket):
//
//	client → server, one JSON object per text message:
//	  {"type":"run","input":<RunAgentInput>}             start a run
//	  {"type":"cancel","threadId":"…"}                   cancel the thread's task
//	  {"type":"subscribe","threadId":"…","after":<seq>}  the journal after seq, then live
//	server → client, one JSON object per text message:
//	  {"threadId":"…","runId":"…","seq":<n>,"event":<AG-UI event>}
//
// seq is the thread's journal sequence number (the SSE id); 0 marks an
// event the journal does not hold (a refused request's RUN_ERROR, the
// shutdown notice). Several runs and subscriptions share one socket; each
// one's events stay in order.
const (
	frameRun       = "run"
	frameCancel    = "cancel"
	frameSubscribe = "subscribe"
)

// clientFrame is a message from the client.
type clientFrame struct {
	Type     string          `json:"type"`
	Input    json.RawMessage `json:"input"`
	ThreadID string          `json:"threadId"`
	After    int64           `json:"after"`
}

// wsConn is one WebSocket connection: the handler's goroutine reads
// frames, one feeder goroutine per run or subscription fills the outbox,
// and one writer goroutine drains it (gorilla/websocket allows one reader
// and one writer at a time).
type wsConn struct {
	h     *Handler
	conn  *websocket.Conn
	agent string

	ctx       context.Context
	drop      context.CancelCauseFunc
	out       *outbox
	principal string

	// feeders counts the streams the connection carries; once finishing is
	// set (the bridge shutting down) no new one starts. streams is how many
	// run, subscribed holds the threads with a subscription.
	feedMu     sync.Mutex
	finishing  bool
	feeders    sync.WaitGroup
	streams    int
	subscribed map[string]bool
	stop       chan struct{} // closed to make the writer finish what is queued and return
	stopOnce   sync.Once
	writerWG   sync.WaitGroup
}

// websocket serves GET /agents/{name}/ws.
func (h *Handler) websocket(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !h.agentRoute(w, r, name) {
		return
	}
	if !h.acceptingWS() {
		refuse(w, agui.CodeShuttingDown, "the bridge is shutting down")
		return
	}
	// Answer the subprotocol the client offered: ours, else its token's
	// (see wsProtocol).
	protocols := []string{wsProtocol}
	if p := wsTokenProtocol(r); p != "" {
		protocols = append(protocols, p)
	}
	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		Subprotocols:     protocols,
		CheckOrigin:      h.checkOrigin,
		// A refused upgrade gets the bridge's JSON error body.
		Error: func(w http.ResponseWriter, _ *http.Request, status int, reason error) {
			code := agui.CodeBadUpgrade
			if status == http.StatusForbidden {
				code = agui.CodeOriginNotAllowed
			}
			writeError(w, status, code, reason.Error())
		},
	}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade answered
	}
	ctx, drop := context.WithCancelCause(r.Context())
	c := &wsConn{h: h, conn: conn, agent: name, ctx: ctx, drop: drop, principal: auth.PrincipalFrom(r.Context()),
		out: newOutbox(h.opt.QueueSize, h.opt.SlowClientTimeout, drop), stop: make(chan struct{}), subscribed: map[string]bool{}}
	c.writerWG.Add(1) // before track: Shutdown may wait for the writer at once
	if !h.track(c) {
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "the bridge is shutting down"), time.Now().Add(time.Second))
		_ = conn.Close()
		drop(nil)
		return
	}
	defer h.untrack(c)
	if g := h.opt.WebSockets; g != nil {
		g.Inc()
		defer g.Dec()
	}
	c.serve()
}

// checkOrigin lets browsers connect from the origins CORS allows (with no
// list, only the bridge's own host); clients that send no Origin (not
// browsers) are not refused for that.
func (h *Handler) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if len(h.opt.CORSOrigins) > 0 {
		return slices.Contains(h.opt.CORSOrigins, "*") || slices.Contains(h.opt.CORSOrigins, origin)
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

func (c *wsConn) serve() {
	defer c.drop(nil)
	c.conn.SetReadLimit(c.h.opt.WSReadLimit)
	pongWait := 2 * c.h.opt.WSPingInterval
	_ = c.conn.SetReadDeadline(time.Now().Add(pongWait))
	c.conn.SetPongHandler(func(string) error {
		return c.conn.SetReadDeadline(time.Now().Add(pongWait))
	})
	go c.write()
	for {
		kind, data, err := c.conn.ReadMessage()
		if err != nil {
			break // the client left, broke the protocol, or went silent
		}
		_ = c.conn.SetReadDeadline(time.Now().Add(pongWait))
		if kind != websocket.TextMessage {
			c.refuse("", "", agui.CodeInvalidInput, "frames are JSON text messages")
			continue
		}
		c.handle(data)
	}
	c.drop(nil)
	c.feeders.Wait()
	c.writerWG.Wait()
	_ = c.conn.Close()
}

// write is the connection's only writer.
func (c *wsConn) write() {
	defer c.writerWG.Done()
	f := &wsFramer{conn: c.conn, timeout: c.h.opt.WriteTimeout}
	err := drain(c.ctx, c.out, f, c.h.opt.WSPingInterval, c.stop)
	deadline := time.Now().Add(time.Second)
	switch {
	case errors.Is(err, errSlowClient):
		c.h.opt.Logger.Info("dropped a slow WebSocket client", "agent", c.agent)
		_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseTryAgainLater, "too slow: reconnect and subscribe after your last seq"), deadline)
	case err == nil: // stopped: the bridge is shutting down
		_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "the bridge is shutting down"), deadline)
	}
	// Unblock the reader.
	_ = c.conn.Close()
	c.drop(err)
}

// handle acts on one client frame.
func (c *wsConn) handle(data []byte) {
	f, bad := parseFrame(data)
	if bad != nil {
		c.refuse(bad.threadID, bad.runID, agui.CodeInvalidInput, bad.message)
		return
	}
	// Every frame is a request: it counts against the principal's rate
	// like an HTTP request would.
	if admit := c.h.opt.Admit; admit != nil {
		if err := admit(c.principal); err != nil {
			threadID, runID := f.ThreadID, ""
			if f.input != nil {
				threadID, runID = f.input.ThreadID, f.input.RunID
			}
			code, msg := c.h.publicError(err, "the bridge could not admit the frame")
			c.refuse(threadID, runID, code, msg)
			return
		}
	}
	switch f.Type {
	case frameRun:
		c.run(f.input)
	case frameCancel:
		c.cancel(f.ThreadID)
	case frameSubscribe:
		c.subscribe(f.ThreadID, f.After)
	}
}

// badFrame is why a client frame is refused, with the ids it names (for
// the error envelope).
type badFrame struct {
	threadID, runID, message string
}

// parsedFrame is a well-formed client frame; input is decoded for runs.
type parsedFrame struct {
	clientFrame
	input *agui.RunAgentInput
}

// parseFrame decodes and checks one client frame: untrusted input, so it
// is fuzzed (FuzzParseFrame).
func parseFrame(data []byte) (*parsedFrame, *badFrame) {
	var f clientFrame
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, &badFrame{message: "a frame must be a JSON object with a \"type\": run, cancel or subscribe"}
	}
	switch f.Type {
	case frameRun:
		var ids struct {
			ThreadID string `json:"threadId"`
			RunID    string `json:"runId"`
		}
		_ = json.Unmarshal(f.Input, &ids) // for the error envelope, when the input is bad
		if len(f.Input) == 0 {
			return nil, &badFrame{message: "a run frame needs an \"input\" (a RunAgentInput)"}
		}
		in, err := agui.DecodeRunAgentInput(f.Input)
		if err != nil {
			return nil, &badFrame{threadID: ids.ThreadID, runID: ids.RunID, message: err.Error()}
		}
		return &parsedFrame{clientFrame: f, input: in}, nil
	case frameCancel:
		if f.ThreadID == "" || len(f.ThreadID) > maxFrameID {
			return nil, &badFrame{message: fmt.Sprintf("a cancel frame needs a \"threadId\" of at most %d bytes", maxFrameID)}
		}
	case frameSubscribe:
		if f.ThreadID == "" || len(f.ThreadID) > maxFrameID || f.After < 0 {
			return nil, &badFrame{threadID: clipID(f.ThreadID), message: fmt.Sprintf(
				"a subscribe frame needs a \"threadId\" of at most %d bytes and an \"after\" >= 0", maxFrameID)}
		}
	default:
		return nil, &badFrame{threadID: clipID(f.ThreadID), message: fmt.Sprintf("unknown frame type %q; want run, cancel or subscribe", clipID(f.Type))}
	}
	return &parsedFrame{clientFrame: f}, nil
}

// maxFrameID bounds the thread id of a cancel or subscribe frame, as
// RunAgentInput bounds its ids: they are store keys, and error frames echo
// them.
const maxFrameID = 256

// clipID bounds an id echoed in an error frame.
func clipID(id string) string {
	if len(id) <= maxFrameID {
		return id
	}
	return strings.ToValidUTF8(id[:maxFrameID], "")
}

// run starts a run like POST /agents/{name} and streams it on the socket.
func (c *wsConn) run(in *agui.RunAgentInput) {
	if code, msg := c.h.checkInput(in); code != "" {
		c.refuse(in.ThreadID, in.RunID, code, msg)
		return
	}
	if code, msg := c.addFeeder(""); code != "" {
		c.refuse(in.ThreadID, in.RunID, code, msg)
		return
	}
	go func() {
		defer c.feederDone("")
		s, err := c.h.opt.Runner.StartRun(c.ctx, c.agent, in)
		if err != nil {
			code, msg := c.h.publicError(err, "the bridge could not start the run")
			c.refuse(in.ThreadID, in.RunID, code, msg)
			return
		}
		c.feed(s, in.ThreadID, in.RunID, true)
	}()
}

// cancel cancels the thread's task; only a failure is answered (the run,
// if one streams on the socket, ends cancelled).
func (c *wsConn) cancel(threadID string) {
	if _, err := c.h.opt.Threads.Cancel(c.ctx, c.agent, threadID); err != nil {
		code, msg := c.h.publicError(err, "the bridge could not cancel")
		c.refuse(threadID, "", code, msg)
	}
}

// subscribe streams the thread's journal after seq after, then live.
// A second subscription to a thread the connection already follows is
// merged into the first: the connection gets the thread's events once.
func (c *wsConn) subscribe(threadID string, after int64) {
	code, msg := c.addFeeder(threadID)
	switch {
	case code == codeMerged:
		return
	case code != "":
		c.refuse(threadID, "", code, msg)
		return
	}
	s, err := c.h.opt.Threads.Follow(c.ctx, c.agent, threadID, after)
	if err != nil {
		c.feederDone(threadID)
		code, msg := c.h.publicError(err, "the bridge could not read the thread")
		c.refuse(threadID, "", code, msg)
		return
	}
	go func() {
		defer c.feederDone(threadID)
		c.feed(s, threadID, "", false)
	}()
}

// feed streams s into the outbox; a run that stops short of its terminal
// event (a run's stream, or a followed thread's run) still ends with one.
func (c *wsConn) feed(s Stream, threadID, runID string, wantTerminal bool) {
	open, err := c.out.feed(c.ctx, s, wantTerminal)
	if open && c.ctx.Err() == nil {
		code, message := c.h.publicError(err, "the bridge lost the end of this run")
		c.refuse(threadID, runID, code, message)
	}
}

// refuse answers a request that cannot go on with a RUN_ERROR envelope
// (seq 0: not journaled).
func (c *wsConn) refuse(threadID, runID, code, message string) {
	b, err := agui.Marshal(&agui.RunError{Code: code, Message: message})
	if err != nil {
		return
	}
	c.out.put(c.ctx, agui.Envelope{ThreadID: clipID(threadID), RunID: clipID(runID), Event: b})
}

// codeMerged is addFeeder's answer to a subscription the connection has.
const codeMerged = "merged"

// addFeeder counts a new stream on the connection — a run, or a
// subscription to threadID — within the connection's and the principal's
// caps. It returns the RUN_ERROR code and message of a refusal, codeMerged
// for a thread the connection follows already, or "" when the stream may
// start; feederDone ends what it counted.
func (c *wsConn) addFeeder(threadID string) (code, message string) {
	c.feedMu.Lock()
	defer c.feedMu.Unlock()
	switch {
	case c.finishing:
		return agui.CodeShuttingDown, "the bridge is shutting down"
	case threadID != "" && c.subscribed[threadID]:
		return codeMerged, ""
	case c.streams >= c.h.opt.WSMaxStreams:
		return CodeTooManyStreams, fmt.Sprintf("this connection carries %d streams, the most it may; wait for one to end", c.h.opt.WSMaxStreams)
	case !c.h.acquireStream(c.principal):
		return CodeTooManyStreams, fmt.Sprintf("you have %d WebSocket streams open, the most you may; wait for one to end", c.h.opt.MaxPrincipalStreams)
	}
	c.streams++
	if threadID != "" {
		c.subscribed[threadID] = true
	}
	c.feeders.Add(1)
	return "", ""
}

// feederDone ends a stream addFeeder counted.
func (c *wsConn) feederDone(threadID string) {
	c.feedMu.Lock()
	c.streams--
	if threadID != "" {
		delete(c.subscribed, threadID)
	}
	c.feedMu.Unlock()
	c.h.releaseStream(c.principal)
	c.feeders.Done()
}

// CodeTooManyStreams refuses a WebSocket run or subscription above the
// connection's or the principal's cap.
const CodeTooManyStreams = agui.CodeTooManyStreams

// acquireStream counts one more WebSocket stream of principal, within
// Options.MaxPrincipalStreams; it reports false at the cap.
func (h *Handler) acquireStream(principal string) bool {
	h.wsMu.Lock()
	defer h.wsMu.Unlock()
	if h.wsStreams[principal] >= h.opt.MaxPrincipalStreams {
		return false
	}
	h.wsStreams[principal]++
	return true
}

func (h *Handler) releaseStream(principal string) {
	h.wsMu.Lock()
	defer h.wsMu.Unlock()
	if h.wsStreams[principal]--; h.wsStreams[principal] <= 0 {
		delete(h.wsStreams, principal)
	}
}

// finish lets the connection write what is queued, then close with 1001;
// the bridge calls it when shutting down, after the runs ended or were cut.
func (c *wsConn) finish(ctx context.Context) {
	c.feedMu.Lock()
	c.finishing = true
	c.feedMu.Unlock()
	done := make(chan struct{})
	go func() { c.feeders.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	c.stopOnce.Do(func() { close(c.stop) })
}

// wsFramer writes envelopes as WebSocket text messages.
type wsFramer struct {
	conn    *websocket.Conn
	timeout time.Duration
	buf     []byte
}

func (f *wsFramer) write(env agui.Envelope) error {
	f.buf = agui.AppendEnvelopeJSON(f.buf[:0], env)
	_ = f.conn.SetWriteDeadline(time.Now().Add(f.timeout))
	return f.conn.WriteMessage(websocket.TextMessage, f.buf)
}

func (f *wsFramer) flush() error { return nil } // each message is written whole

func (f *wsFramer) keepAlive() error {
	return f.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(f.timeout))
}

// publicError is the code and message a client may see for err.
func (h *Handler) publicError(err error, fallback string) (code, message string) {
	var sc StatusCoder
	if errors.As(err, &sc) {
		return sc.ErrorCode(), sc.PublicMessage()
	}
	h.opt.Logger.Error(fallback, "err", err)
	return agui.CodeInternal, fallback
}

// track registers a WebSocket connection for Shutdown; it reports false
// once the handler is shutting down.
func (h *Handler) track(c *wsConn) bool {
	h.wsMu.Lock()
	defer h.wsMu.Unlock()
	if h.wsClosing {
		return false
	}
	h.wsConns[c] = struct{}{}
	return true
}

func (h *Handler) untrack(c *wsConn) {
	h.wsMu.Lock()
	defer h.wsMu.Unlock()
	delete(h.wsConns, c)
}

func (h *Handler) acceptingWS() bool {
	h.wsMu.Lock()
	defer h.wsMu.Unlock()
	return !h.wsClosing
}

// Shutdown ends the WebSocket connections, which http.Server.Shutdown does
// not track (they are hijacked): no new ones are accepted, and each one
// writes what its runs still send (they end, or are cut by the bridge's
// shutdown with RUN_ERROR "server_shutdown") and closes with 1001, or when
// ctx ends. Call it after the run service stopped.
func (h *Handler) Shutdown(ctx context.Context) {
	h.wsMu.Lock()
	h.wsClosing = true
	conns := make([]*wsConn, 0, len(h.wsConns))
	for c := range h.wsConns {
		conns = append(conns, c)
	}
	h.wsMu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			c.finish(ctx)
			c.writerWG.Wait()
		})
	}
	wg.Wait()
}
