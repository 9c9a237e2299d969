package a2a

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
)

// Resolver keeps one agent's client current with its card. The first use
// dials (Dial); after that the card is checked again once it is stale —
// when its Cache-Control max-age runs out, else after DefaultCardTTL — with
// a conditional request (If-None-Match with the card's ETag). A card that
// changed takes effect for the runs that start after it: the agent is
// dialled again from it, and runs in flight finish on the client they
// have. An agent that cannot be dialled is retried at most every
// RetryAfter.
//
// Health records what the bridge knows: the last card fetch, the last
// change, the last error.
type Resolver struct {
	opts Options
	// Now is the clock (tests); default time.Now.
	Now func() time.Time

	dialMu sync.Mutex // one dial or check at a time

	mu      sync.Mutex
	agent   *Agent
	sum     [32]byte // of the card body, to tell a change
	etag    string
	fresh   time.Time // the card may be used without a check until then
	health  Health
	lastTry time.Time
	lastErr error
}

// Health is an agent's record in the registry.
type Health struct {
	// Status is "ok" once a card was resolved and the last check did not
	// fail, "unavailable" otherwise, "unknown" before the first dial.
	Status    string    `json:"status"`
	Error     string    `json:"error,omitempty"`
	LastFetch time.Time `json:"lastCardFetch,omitzero"`
	// LastChange is when the card last changed (its first fetch included).
	LastChange time.Time `json:"lastCardChange,omitzero"`
	// FreshUntil is when the card will be checked again.
	FreshUntil time.Time `json:"cardFreshUntil,omitzero"`
	// Binding is the interface in use, e.g. "JSONRPC 1.0".
	Binding string `json:"binding,omitempty"`
}

// DefaultCardTTL is how long a card without Cache-Control max-age is used
// before it is checked again; RetryAfter how soon a failed dial is tried
// again.
const (
	DefaultCardTTL = 5 * time.Minute
	RetryAfter     = 2 * time.Second
	// maxCardTTL bounds a server's max-age: a card is never trusted for
	// longer than a day.
	maxCardTTL = 24 * time.Hour
	// retireAfter is how long a replaced client stays open for the runs
	// still using it.
	retireAfter = 15 * time.Minute
)

// NewResolver returns a Resolver for the agent o describes.
func NewResolver(o Options) *Resolver {
	return &Resolver{opts: o, health: Health{Status: "unknown"}}
}

func (r *Resolver) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Agent returns the agent's client, dialling it or checking its card when
// needed.
func (r *Resolver) Agent(ctx context.Context) (*Agent, error) {
	r.mu.Lock()
	ag, fresh := r.agent, r.now().Before(r.fresh)
	if ag != nil && fresh {
		r.mu.Unlock()
		return ag, nil
	}
	if ag == nil && r.lastErr != nil && r.now().Sub(r.lastTry) < RetryAfter {
		err := r.lastErr
		r.mu.Unlock()
		return nil, err
	}
	r.mu.Unlock()

	r.dialMu.Lock()
	defer r.dialMu.Unlock()
	r.mu.Lock()
	ag, fresh = r.agent, r.now().Before(r.fresh)
	r.mu.Unlock()
	switch {
	case ag != nil && fresh:
		return ag, nil // checked by the caller we waited for
	case ag != nil:
		return r.check(ctx, ag), nil
	}
	return r.dial(ctx)
}

// dial builds the client from a fresh card.
func (r *Resolver) dial(ctx context.Context) (*Agent, error) {
	o := r.opts
	capt := &cardCapture{limit: o.maxCardBytes()}
	o.HTTPClient = capt.client(o.HTTPClient)
	ag, err := Dial(ctx, o)
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.lastTry = now
	r.lastErr = err
	if err != nil {
		r.health.Status, r.health.Error = "unavailable", Classify(err).Message
		return nil, err
	}
	r.agent = ag
	r.etag, r.sum = capt.etag, capt.sum
	r.fresh = now.Add(capt.ttl)
	r.health = Health{Status: "ok", LastFetch: now, LastChange: now, FreshUntil: r.fresh,
		Binding: ag.Binding().Transport + " " + ag.Binding().ProtocolVersion}
	return ag, nil
}

// check asks whether the card changed. Unchanged (304, or the same bytes)
// keeps the client; changed dials anew. A failed check keeps the client
// (the agent may be busy) and is retried at RetryAfter.
func (r *Resolver) check(ctx context.Context, current *Agent) *Agent {
	body, etag, ttl, notModified, err := r.fetch(ctx)
	now := r.now()
	if err != nil {
		r.mu.Lock()
		r.fresh = now.Add(RetryAfter)
		r.health.Status, r.health.Error, r.health.FreshUntil = "unavailable", "card check failed: "+err.Error(), r.fresh
		r.mu.Unlock()
		return current
	}
	sum := sha256.Sum256(body)
	r.mu.Lock()
	same := notModified || sum == r.sum
	r.mu.Unlock()
	if !same {
		ag, err := r.dial(ctx)
		if err != nil {
			return current // reported in Health; the old card still works
		}
		current.retire()
		return ag
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if etag != "" {
		r.etag = etag
	}
	r.fresh = now.Add(ttl)
	r.health.Status, r.health.Error = "ok", ""
	r.health.LastFetch, r.health.FreshUntil = now, r.fresh
	return current
}

// fetch GETs the card conditionally.
func (r *Resolver) fetch(ctx context.Context) (body []byte, etag string, ttl time.Duration, notModified bool, err error) {
	u := r.opts.CardURL
	if u == "" {
		u = strings.TrimSuffix(r.opts.URL, "/") + "/.well-known/agent-card.json"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", 0, false, err
	}
	version := string(a2asdk.Version)
	for k, v := range r.opts.Headers {
		if strings.EqualFold(k, a2asdk.SvcParamVersion) {
			version = v
			continue
		}
		req.Header.Set(k, v)
	}
	req.Header.Set(a2asdk.SvcParamVersion, version)
	r.mu.Lock()
	if r.etag != "" {
		req.Header.Set("If-None-Match", r.etag)
	}
	r.mu.Unlock()
	hc := r.opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	guard, err := newHostGuard(r.opts)
	if err != nil {
		return nil, "", 0, false, err
	}
	resp, err := guard.guardRedirects(hc).Do(req)
	if err != nil {
		return nil, "", 0, false, err
	}
	defer resp.Body.Close()
	ttl = cardTTL(resp.Header)
	switch resp.StatusCode {
	case http.StatusNotModified:
		return nil, resp.Header.Get("ETag"), ttl, true, nil
	case http.StatusOK:
		body, err = readCard(resp.Body, r.opts.maxCardBytes())
		if err != nil {
			return nil, "", 0, false, err
		}
		return body, resp.Header.Get("ETag"), ttl, false, nil
	}
	return nil, "", 0, false, &HTTPStatusError{StatusCode: resp.StatusCode, Status: resp.Status}
}

// cardTTL reads Cache-Control: no-store/no-cache mean check before every
// run (a second, to spare bursts), max-age=N is N seconds (at most a
// day), nothing is DefaultCardTTL.
func cardTTL(h http.Header) time.Duration {
	cc := strings.ToLower(h.Get("Cache-Control"))
	if cc == "" {
		return DefaultCardTTL
	}
	for _, d := range strings.Split(cc, ",") {
		d = strings.TrimSpace(d)
		switch {
		case d == "no-store" || d == "no-cache":
			return time.Second
		case strings.HasPrefix(d, "max-age="):
			if n, err := strconv.Atoi(strings.TrimPrefix(d, "max-age=")); err == nil && n >= 0 {
				return min(max(time.Duration(n)*time.Second, time.Second), maxCardTTL)
			}
		}
	}
	return DefaultCardTTL
}

// Health returns the agent's record.
func (r *Resolver) Health() Health {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.health
}

// Close releases the current client.
func (r *Resolver) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.agent != nil {
		_ = r.agent.Close()
		r.agent = nil
	}
}

// retire closes a replaced client once the runs using it are likely done.
func (a *Agent) retire() {
	time.AfterFunc(retireAfter, func() { _ = a.Close() })
}

// cardCapture notes the card response's ETag, freshness and body hash
// while Dial fetches it.
type cardCapture struct {
	base  http.RoundTripper
	limit int64 // the card size limit; a larger body is left to fetchCard to refuse
	once  sync.Once
	etag  string
	ttl   time.Duration
	sum   [32]byte
}

func (c *cardCapture) client(hc *http.Client) *http.Client {
	var out http.Client
	if hc != nil {
		out = *hc
	}
	c.base = out.Transport
	if c.base == nil {
		c.base = newHTTPTransport()
	}
	c.ttl = DefaultCardTTL
	out.Transport = c
	return &out
}

func (c *cardCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	first := false
	c.once.Do(func() { first = true })
	if !first {
		return resp, nil
	}
	// The first GET of a dial is the card's.
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, c.limit+1))
	_ = resp.Body.Close()
	if rerr != nil {
		return nil, rerr
	}
	c.etag, c.ttl, c.sum = resp.Header.Get("ETag"), cardTTL(resp.Header), sha256.Sum256(body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}
