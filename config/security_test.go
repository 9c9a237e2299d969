package config

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const securityYAML = `
listen: 0.0.0.0:8080
auth:
  apiKeys:
    - key: ${ALICE_KEY}
      principal: alice
    - sha256: 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08
      principal: bob
  jwt: {jwks: /etc/bridge/jwks.json, issuer: https://idp.example, audience: bridge, leeway: 10s, refresh: 1h}
metrics: {public: true}
limits:
  perPrincipal: {concurrentRuns: 2, requestsPerSecond: 0.5, burst: 3}
  concurrentRuns: 100
  maxMessages: 50
  maxStateBytes: 4096
  maxEventBytes: 65536
redactKeys: [password, ssn]
agents:
  - name: travel
    url: http://127.0.0.1:9001/
    allow: [alice, carol]
teams:
  - name: desk
    strategy: router
    members: [travel]
    allow: [bob]
`

func TestParseSecurity(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(securityYAML), env(map[string]string{"ALICE_KEY": "alice-secret-key-0001"}))
	if err != nil {
		t.Fatal(err)
	}
	wantAuth := Auth{
		APIKeys: []APIKey{
			{Key: "alice-secret-key-0001", Principal: "alice"},
			{SHA256: "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08", Principal: "bob"},
		},
		JWT: JWT{JWKS: "/etc/bridge/jwks.json", Issuer: "https://idp.example", Audience: "bridge",
			Leeway: Duration(10 * time.Second), Refresh: Duration(time.Hour)},
	}
	if diff := cmp.Diff(wantAuth, c.Auth); diff != "" {
		t.Errorf("auth (-want +got):\n%s", diff)
	}
	if !c.Auth.Enabled() || !c.Metrics.Public {
		t.Errorf("auth enabled %v, metrics public %v; want both", c.Auth.Enabled(), c.Metrics.Public)
	}
	wantLimits := Limits{PerPrincipal: PerPrincipal{ConcurrentRuns: 2, RequestsPerSecond: 0.5, Burst: 3},
		ConcurrentRuns: 100, MaxMessages: 50, MaxStateBytes: 4096, MaxEventBytes: 65536, MaxRunBytes: 32 << 20, MaxThreadJournalBytes: 64 << 20, MaxA2UIActionBytes: 64 << 10}
	if diff := cmp.Diff(wantLimits, c.Limits); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"password", "ssn"}, c.RedactKeys); diff != "" {
		t.Errorf("redactKeys (-want +got):\n%s", diff)
	}
	if !slices.Equal(c.Agents[0].Allow, []string{"alice", "carol"}) || !slices.Equal(c.Teams[0].Allow, []string{"bob"}) {
		t.Errorf("allow lists %v, %v", c.Agents[0].Allow, c.Teams[0].Allow)
	}
}

func TestSecurityDefaults(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte("agents: [{name: a, url: http://127.0.0.1:1/}]\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{MaxMessages: 1000, MaxStateBytes: 256 << 10, MaxEventBytes: 4 << 20, MaxRunBytes: 32 << 20,
		MaxThreadJournalBytes: 64 << 20, MaxA2UIActionBytes: 64 << 10}
	if diff := cmp.Diff(want, c.Limits); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	if c.Auth.Enabled() || c.Auth.Mode != "" || c.Metrics.Public {
		t.Errorf("auth %+v, metrics %+v; want off", c.Auth, c.Metrics)
	}
	if diff := cmp.Diff(DefaultRedactKeys, c.RedactKeys); diff != "" {
		t.Errorf("redactKeys (-want +got):\n%s", diff)
	}
	if c.Auth.JWT.Leeway != DefaultJWTLeeway || c.Auth.JWT.Refresh != DefaultJWKSRefresh {
		t.Errorf("jwt defaults %+v", c.Auth.JWT)
	}
	// A Config built in code gets the same defaults.
	var built Config
	built.ApplyDefaults()
	if diff := cmp.Diff(want, built.Limits); diff != "" {
		t.Errorf("ApplyDefaults limits (-want +got):\n%s", diff)
	}
	// An explicitly empty list turns redaction off.
	c, err = Parse([]byte("redactKeys: []\nagents: [{name: a, url: http://127.0.0.1:1/}]\n"), env(nil))
	if err != nil || len(c.RedactKeys) != 0 {
		t.Errorf("redactKeys: [] gave %v, %v", c.RedactKeys, err)
	}
}

func TestSecurityProblems(t *testing.T) {
	t.Parallel()
	const agent = "agents: [{name: a, url: http://127.0.0.1:1/}]\n"
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"mode none with keys", "auth: {mode: none, apiKeys: [{key: abcdefghijklmnopq, principal: x}]}\n" + agent,
			[]string{`auth.mode: "none" turns authentication off; remove apiKeys and jwt, or remove mode (line 1)`}},
		{"bad mode", "auth: {mode: open}\n" + agent, []string{`auth.mode: must be "none" or absent (got "open") (line 1)`}},
		{"key and sha", "auth:\n  apiKeys:\n    - {key: abcdefghijklmnopq, sha256: ab, principal: x}\n" + agent,
			[]string{"auth.apiKeys[0]: set key or sha256, not both (line 3)"}},
		{"short key, no principal", "auth:\n  apiKeys:\n    - key: short\n" + agent,
			[]string{"auth.apiKeys[0].key: must be at least 16 characters: a short key can be guessed (line 3)",
				"auth.apiKeys[0].principal: required: the name this key authenticates (line 3)"}},
		{"bad digest", "auth:\n  apiKeys:\n    - {sha256: xyz, principal: x}\n" + agent,
			[]string{"auth.apiKeys[0].sha256: must be 64 hex digits, the SHA-256 of the key (sha256sum) (line 3)"}},
		{"duplicate key", "auth:\n  apiKeys:\n    - {key: abcdefghijklmnopq, principal: x}\n    - {key: abcdefghijklmnopq, principal: y}\n" + agent,
			[]string{"auth.apiKeys[1]: the same key as auth.apiKeys[0] (line 4)"}},
		{"jwt without issuer", "auth:\n  jwt:\n    jwks: ./jwks.json\n" + agent,
			[]string{"auth.jwt.issuer: required with jwks: tokens of any other issuer are refused (line 3)",
				"auth.jwt.audience: required with jwks: tokens minted for other services are refused (line 3)"}},
		{"jwks over http", "auth:\n  jwt: {jwks: \"http://idp.example/jwks\", issuer: i, audience: a}\n" + agent,
			[]string{`auth.jwt.jwks: must be a file path or an https:// URL (http:// only on a loopback host) (got "http://idp.example/jwks") (line 2)`}},
		{"jwt leeway", "auth:\n  jwt: {jwks: ./j.json, issuer: i, audience: a, leeway: 1h}\n" + agent,
			[]string{"auth.jwt.leeway: must be between 0s and 5m (got 1h0m0s) (line 2)"}},
		{"allow without auth", "agents:\n  - name: a\n    url: http://127.0.0.1:1/\n    allow: [alice]\n",
			[]string{"agents[0].allow: needs auth (apiKeys or jwt): without it there are no principals to allow (line 4)"}},
		{"negative limits", "limits:\n  concurrentRuns: -1\n  perPrincipal: {requestsPerSecond: -2}\n" + agent,
			[]string{"limits.concurrentRuns: must be >= 0 (got -1) (line 2)",
				"limits.perPrincipal.requestsPerSecond: must be a number >= 0 (got -2) (line 3)"}},
		{"zero maxMessages", "limits:\n  maxMessages: 0\n" + agent, []string{"limits.maxMessages: must be > 0 (got 0) (line 2)"}},
		{"journal cap below the run budget", "limits:\n  maxRunBytes: 1048576\n  maxThreadJournalBytes: 1000\n" + agent,
			[]string{"limits.maxThreadJournalBytes: must be >= limits.maxRunBytes (1048576), so the latest run fits (got 1000) (line 3)"}},
		{"burst without rate", "limits:\n  perPrincipal: {burst: 4}\n" + agent,
			[]string{"limits.perPrincipal.burst: only with requestsPerSecond (line 2)"}},
		{"public not a bool", "metrics: {public: maybe}\n" + agent, []string{`metrics.public: must be true or false (got "maybe") (line 1)`}},
		{"empty redact key", "redactKeys: [\"\"]\n" + agent, []string{"redactKeys[0]: must not be empty (line 1)"}},
		{"unknown auth key", "auth: {users: []}\n" + agent, []string{"auth.users: unknown key; known keys: mode, apiKeys, jwt (line 1)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tc.yaml), env(nil))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Parse = %v; want a *ValidationError", err)
			}
			var got []string
			for _, p := range ve.Problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
