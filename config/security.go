package config

import (
	"encoding/hex"
	"fmt"
	"math"
	"net"
	"net/url"
	"strings"
	"time"
)

// Auth modes (Auth.Mode).
const (
	// AuthNone is the explicit opt-out: no authentication, even on a
	// non-loopback address.
	AuthNone = "none"
)

// Defaults of the security settings.
const (
	DefaultJWTLeeway     = Duration(30 * time.Second)
	DefaultJWKSRefresh   = Duration(10 * time.Minute)
	DefaultMaxMessages   = 1000
	DefaultMaxStateBytes = 256 << 10 // 256 KiB
	DefaultMaxEventBytes = 4 << 20   // 4 MiB
	// DefaultMaxRunBytes leaves a long answer streamed token by token
	// (each token an event of ~150 bytes: about 200,000 of them) room,
	// while one endless agent costs at most this much journal and
	// memory.
	DefaultMaxRunBytes = 32 << 20 // 32 MiB
	// DefaultMaxThreadJournalBytes is two full runs: the latest run is
	// always kept whole, so the cap must leave room for one.
	DefaultMaxThreadJournalBytes = 64 << 20 // 64 MiB
	// DefaultMaxA2UIActionBytes bounds forwardedProps.a2uiAction.
	DefaultMaxA2UIActionBytes = 64 << 10
)

// DefaultRedactKeys are the object keys whose values the bridge never
// shows in shared state or logs, matched case-insensitively.
var DefaultRedactKeys = []string{"password", "token", "secret", "api_key", "apikey", "authorization"}

// Auth configures inbound authentication. Configured (apiKeys or jwt set),
// every route but /healthz, /readyz, the console's static files and (with
// metrics.public) /metrics needs "Authorization: Bearer <key or JWT>".
type Auth struct {
	// Mode is "" (default: authentication when apiKeys or jwt are set) or
	// "none": the explicit opt-out that lets the bridge listen on a
	// non-loopback address without authentication. "none" cannot be
	// combined with apiKeys or jwt.
	Mode string `yaml:"mode"`

	// APIKeys are static bearer keys, each naming its principal. Optional.
	APIKeys []APIKey `yaml:"apiKeys"`

	// JWT accepts JSON Web Tokens signed by a key of a JWKS; the
	// principal is the token's sub. Optional: set jwks to turn it on.
	JWT JWT `yaml:"jwt"`
}

// Enabled reports whether callers must authenticate.
func (a *Auth) Enabled() bool { return len(a.APIKeys) > 0 || a.JWT.JWKS != "" }

// APIKey is one static bearer key.
type APIKey struct {
	// Key is the key itself, usually ${ENV}. Exactly one of key and sha256.
	Key string `yaml:"key"`

	// SHA256 is the hex SHA-256 digest of the key, to keep the key itself
	// out of the file. Exactly one of key and sha256.
	SHA256 string `yaml:"sha256"`

	// Principal is who the key authenticates: the owner of the threads it
	// creates, and the name allow lists use. Required.
	Principal string `yaml:"principal"`
}

// JWT configures JWT verification.
type JWT struct {
	// JWKS is the JSON Web Key Set: a file path or an https:// URL (fetched
	// at start, then every refresh, and when a token names an unknown kid).
	// Setting it turns JWT authentication on. No default.
	JWKS string `yaml:"jwks"`

	// Issuer must equal the token's iss. Required with jwks.
	Issuer string `yaml:"issuer"`

	// Audience must be one of the token's aud. Required with jwks.
	Audience string `yaml:"audience"`

	// Leeway tolerates clock skew on exp and nbf. Default 30s; >= 0, at most 5m.
	Leeway Duration `yaml:"leeway"`

	// Refresh is how often a JWKS URL is fetched again. Default 10m. Must be > 0.
	Refresh Duration `yaml:"refresh"`
}

// MetricsConfig configures GET /metrics.
type MetricsConfig struct {
	// Public serves /metrics without authentication (for a scraper that
	// cannot send a bearer token). Default false.
	Public bool `yaml:"public"`
}

// Limits bound what one request, run or caller may use. Errors are
// documented in config/REFERENCE.md.
type Limits struct {
	// PerPrincipal limits each authenticated principal (without auth, all
	// callers are one principal).
	PerPrincipal PerPrincipal `yaml:"perPrincipal"`

	// ConcurrentRuns caps the runs in progress on this bridge instance;
	// above it a run gets 503 bridge_overloaded with Retry-After. Default
	// 0: no cap. Must be >= 0.
	ConcurrentRuns int64 `yaml:"concurrentRuns"`

	// MaxMessages caps the messages of one RunAgentInput; above it the run
	// gets 413 too_many_messages. Default 1000. Must be > 0.
	MaxMessages int64 `yaml:"maxMessages"`

	// MaxStateBytes caps the shared state, in bytes (JSON): a client's
	// state above it gets 413 state_too_large; a state the agent grows
	// above it ends the run with RUN_ERROR state_too_large. Default
	// 262144 (256 KiB). Must be > 0.
	MaxStateBytes int64 `yaml:"maxStateBytes"`

	// MaxEventBytes caps one A2A event from an agent, in bytes (its parts'
	// text, data and file bytes); a larger one ends the run with RUN_ERROR
	// event_too_large and cancels the A2A task. Default 4194304 (4 MiB).
	// Must be > 0.
	MaxEventBytes int64 `yaml:"maxEventBytes"`

	// MaxRunBytes is one run's output budget, in bytes: both what its
	// agents send (counted as for maxEventBytes) and the AG-UI events it
	// journals count against it, so an agent that never stops costs at
	// most this much memory and journal. Crossing it ends the run with
	// RUN_ERROR run_too_large and cancels the A2A task(s). It also bounds
	// the conversation a thread's record keeps (its newest whole messages
	// within it). Default 33554432 (32 MiB). Must be > 0.
	MaxRunBytes int64 `yaml:"maxRunBytes"`

	// MaxThreadJournalBytes caps a thread's journal, in bytes of events:
	// when a run ends with the journal above it, the oldest finished runs'
	// events are dropped (never the latest run's); replaying from a point
	// before what is kept gets 410 journal_compacted. Default 67108864
	// (64 MiB). Must be >= maxRunBytes.
	MaxThreadJournalBytes int64 `yaml:"maxThreadJournalBytes"`

	// MaxA2UIActionBytes caps a user's action on an A2UI surface
	// (RunAgentInput.forwardedProps.a2uiAction, JSON bytes); a larger one
	// gets 413 a2ui_action_too_large. Default 65536 (64 KiB). Must be > 0.
	MaxA2UIActionBytes int64 `yaml:"maxA2UIActionBytes"`
}

// PerPrincipal limits one principal. Above either limit a request gets 429
// rate_limited with Retry-After.
type PerPrincipal struct {
	// ConcurrentRuns caps the principal's runs in progress. Default 0: no
	// cap. Must be >= 0.
	ConcurrentRuns int64 `yaml:"concurrentRuns"`

	// RequestsPerSecond is the principal's sustained request rate over
	// every authenticated route. Default 0: no limit. Must be >= 0.
	RequestsPerSecond float64 `yaml:"requestsPerSecond"`

	// Burst is how many requests may come at once above the rate. Default
	// 0: the rate rounded up (at least 1). Must be >= 0; only with
	// requestsPerSecond.
	Burst int64 `yaml:"burst"`

	// MaxThreads caps the threads the principal keeps (without auth every
	// caller is one principal, so it caps all threads): the run that would
	// create one more is refused with 429 thread_limit before anything is
	// written; deleting a thread (DELETE /agents/{name}/threads/{threadId},
	// or retention) makes room. Default 0: no cap. Must be >= 0.
	MaxThreads int64 `yaml:"maxThreads"`
}

func (a *Auth) validate(ps *problems) {
	switch a.Mode {
	case "":
	case AuthNone:
		if a.Enabled() {
			ps.add("auth.mode", `"none" turns authentication off; remove apiKeys and jwt, or remove mode`)
		}
	default:
		ps.add("auth.mode", `must be "none" or absent (got %q)`, a.Mode)
	}
	seen := map[string]int{}
	for i, k := range a.APIKeys {
		path := fmt.Sprintf("auth.apiKeys[%d]", i)
		digest := ""
		switch {
		case k.Key != "" && k.SHA256 != "":
			ps.add(path, "set key or sha256, not both")
		case k.Key != "":
			if len(k.Key) < 16 {
				ps.add(path+".key", "must be at least 16 characters: a short key can be guessed")
			}
			if strings.ContainsAny(k.Key, " \t\r\n") {
				ps.add(path+".key", "must not contain spaces or line breaks (it travels in an Authorization header)")
			}
			digest = "key:" + k.Key
		case k.SHA256 != "":
			if b, err := hex.DecodeString(k.SHA256); err != nil || len(b) != 32 {
				ps.add(path+".sha256", "must be 64 hex digits, the SHA-256 of the key (sha256sum)")
			}
			digest = "sha:" + strings.ToLower(k.SHA256)
		default:
			ps.add(path, "needs key or sha256")
		}
		if digest != "" {
			if j, dup := seen[digest]; dup {
				ps.add(path, "the same key as auth.apiKeys[%d]", j)
			} else {
				seen[digest] = i
			}
		}
		if strings.TrimSpace(k.Principal) == "" {
			ps.add(path+".principal", "required: the name this key authenticates")
		} else if strings.ContainsFunc(k.Principal, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			ps.add(path+".principal", "must not contain control characters")
		} else if strings.Contains(k.Principal, "#") {
			// "#" separates a JWT principal's issuer and subject: a key
			// may not take a JWT caller's name (auth.JWTPrincipal).
			ps.add(path+".principal", "must not contain \"#\" (JWT principals are <issuer>#<sub>)")
		}
	}
	j := a.JWT
	if j.JWKS == "" {
		if j.Issuer != "" || j.Audience != "" {
			ps.add("auth.jwt.jwks", "required with issuer and audience (a file path or an https:// URL)")
		}
	} else {
		if strings.Contains(j.JWKS, "://") && !strings.HasPrefix(j.JWKS, "https://") && !loopbackHTTP(j.JWKS) {
			// Keys fetched in clear text could be swapped by anyone on the
			// path, who could then mint tokens.
			ps.add("auth.jwt.jwks", "must be a file path or an https:// URL (http:// only on a loopback host) (got %q)", j.JWKS)
		}
		if j.Issuer == "" {
			ps.add("auth.jwt.issuer", "required with jwks: tokens of any other issuer are refused")
		}
		if j.Audience == "" {
			ps.add("auth.jwt.audience", "required with jwks: tokens minted for other services are refused")
		}
	}
	if j.Leeway < 0 || time.Duration(j.Leeway) > 5*time.Minute {
		ps.add("auth.jwt.leeway", "must be between 0s and 5m (got %s)", time.Duration(j.Leeway))
	}
	positive(ps, "auth.jwt.refresh", j.Refresh)
}

// loopbackHTTP reports an http:// URL whose host is this machine.
func loopbackHTTP(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" {
		return false
	}
	if strings.EqualFold(u.Hostname(), "localhost") {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

func (l *Limits) validate(ps *problems) {
	nonNegative := func(path string, v int64) {
		if v < 0 {
			ps.add(path, "must be >= 0 (got %d)", v)
		}
	}
	nonNegative("limits.concurrentRuns", l.ConcurrentRuns)
	nonNegative("limits.perPrincipal.concurrentRuns", l.PerPrincipal.ConcurrentRuns)
	nonNegative("limits.perPrincipal.burst", l.PerPrincipal.Burst)
	nonNegative("limits.perPrincipal.maxThreads", l.PerPrincipal.MaxThreads)
	if r := l.PerPrincipal.RequestsPerSecond; r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		ps.add("limits.perPrincipal.requestsPerSecond", "must be a number >= 0 (got %v)", r)
	}
	if l.PerPrincipal.Burst > 0 && l.PerPrincipal.RequestsPerSecond == 0 {
		ps.add("limits.perPrincipal.burst", "only with requestsPerSecond")
	}
	for _, f := range []struct {
		path string
		v    int64
	}{{"limits.maxMessages", l.MaxMessages}, {"limits.maxStateBytes", l.MaxStateBytes}, {"limits.maxEventBytes", l.MaxEventBytes},
		{"limits.maxRunBytes", l.MaxRunBytes}, {"limits.maxA2UIActionBytes", l.MaxA2UIActionBytes}} {
		if f.v <= 0 {
			ps.add(f.path, "must be > 0 (got %d)", f.v)
		}
	}
	if l.MaxThreadJournalBytes < l.MaxRunBytes {
		ps.add("limits.maxThreadJournalBytes", "must be >= limits.maxRunBytes (%d), so the latest run fits (got %d)", l.MaxRunBytes, l.MaxThreadJournalBytes)
	}
}

func validateRedactKeys(ps *problems, keys []string) {
	for i, k := range keys {
		if strings.TrimSpace(k) == "" {
			ps.add(fmt.Sprintf("redactKeys[%d]", i), "must not be empty")
		}
	}
}

// validateAllow checks an agent's or team's allow list.
func validateAllow(ps *problems, path string, allow []string, auth *Auth) {
	if len(allow) > 0 && !auth.Enabled() {
		ps.add(path, "needs auth (apiKeys or jwt): without it there are no principals to allow")
	}
	for i, p := range allow {
		if strings.TrimSpace(p) == "" {
			ps.add(fmt.Sprintf("%s[%d]", path, i), "must not be empty")
		}
	}
}
