package a2a

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
)

// cardServer serves a card whose description can change, with an ETag
// per version and the Cache-Control it is told, answering If-None-Match
// with 304, and counts full and conditional fetches.
type cardServer struct {
	mu           sync.Mutex
	version      int
	cacheControl string
	full, cond   int
}

func (c *cardServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	etag := fmt.Sprintf(`"v%d"`, c.version)
	w.Header().Set("ETag", etag)
	if c.cacheControl != "" {
		w.Header().Set("Cache-Control", c.cacheControl)
	}
	if r.Header.Get("If-None-Match") == etag {
		c.cond++
		w.WriteHeader(http.StatusNotModified)
		return
	}
	c.full++
	card := testCard(&a2asdk.AgentInterface{URL: "http://" + r.Host + "/rpc", ProtocolBinding: a2asdk.TransportProtocolJSONRPC, ProtocolVersion: a2asdk.Version})
	card.Description = fmt.Sprintf("version %d", c.version)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(card)
}

func (c *cardServer) set(version int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version = version
}

func (c *cardServer) counts() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.full, c.cond
}

// TestResolverRefreshesTheCard: a card is used while fresh (max-age), then
// checked with If-None-Match: 304 keeps the client, a changed card gives a
// new one — without a restart.
func TestResolverRefreshesTheCard(t *testing.T) {
	t.Parallel()
	cs := &cardServer{cacheControl: "max-age=60"}
	srv := httptest.NewServer(cs)
	defer srv.Close()
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	r := NewResolver(Options{Name: "t", URL: srv.URL})
	r.Now = func() time.Time { clock.Lock(); defer clock.Unlock(); return now }
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }
	defer r.Close()

	first, err := r.Agent(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Health(); h.Status != "ok" || !h.FreshUntil.Equal(now.Add(time.Minute)) || h.Binding != "JSONRPC 1.0" {
		t.Fatalf("health after the first dial: %+v", h)
	}
	advance(30 * time.Second)
	if ag, _ := r.Agent(t.Context()); ag != first {
		t.Fatal("a fresh card must not be fetched again")
	}
	if full, cond := cs.counts(); full != 1 || cond != 0 {
		t.Fatalf("fetches while fresh: %d full, %d conditional", full, cond)
	}

	advance(31 * time.Second) // stale, unchanged: a conditional check, 304
	if ag, _ := r.Agent(t.Context()); ag != first {
		t.Fatal("an unchanged card must keep its client")
	}
	if full, cond := cs.counts(); full != 1 || cond != 1 {
		t.Fatalf("after the check: %d full, %d conditional", full, cond)
	}

	cs.set(2) // the agent publishes a new card
	advance(61 * time.Second)
	second, err := r.Agent(t.Context())
	if err != nil || second == first || second.Card().Description != "version 2" {
		t.Fatalf("a changed card must take effect: %v, %q", err, second.Card().Description)
	}
	if h := r.Health(); h.Status != "ok" || !h.LastChange.Equal(now) {
		t.Fatalf("health after the change: %+v", h)
	}
}

func TestCardTTL(t *testing.T) {
	t.Parallel()
	for cc, want := range map[string]time.Duration{
		"":                         DefaultCardTTL,
		"max-age=30":               30 * time.Second,
		"public, max-age=0":        time.Second,
		"no-cache":                 time.Second,
		"max-age=999999999":        maxCardTTL,
		"max-age=abc":              DefaultCardTTL,
		"private, must-revalidate": DefaultCardTTL,
	} {
		h := http.Header{}
		if cc != "" {
			h.Set("Cache-Control", cc)
		}
		if got := cardTTL(h); got != want {
			t.Errorf("Cache-Control %q: %v, want %v", cc, got, want)
		}
	}
}
