package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// env returns a lookupEnv over a fixed map.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

const fullYAML = `
listen: 0.0.0.0:9090
store:
  kind: redis
  url: redis://:${REDIS_PASSWORD}@redis:6379/0
server:
  maxBodyBytes: 2097152
  maxInlineBytes: 65536
  readHeaderTimeout: 5s
  idleTimeout: 1m
  keepAlive: 20s
  shutdownGrace: 30s
  corsOrigins: [https://app.example.com, "http://localhost:3000"]
  clientQueue: 64
  slowClientTimeout: 3s
  wsPingInterval: 20s
  wsReadLimit: 65536
agents:
  - name: travel
    url: http://127.0.0.1:9001/
    card: http://127.0.0.1:9001/card.json
    description: Books trips
    headers: {Authorization: "Bearer ${TRAVEL_TOKEN}", X-Tenant: acme}
    transports: [GRPC, JSONRPC]
    timeouts: {run: 1h, idle: 5m, request: 10s}
    poll: {initial: 100ms, max: 2s}
    statusText: reasoning
    interruptTTL: 24h
    stateKey: travelState
    a2ui: on
    a2uiCatalogs: [https://example.com/travel_catalog.json]
  - name: weather
    url: https://weather.example.com
log: {format: json, level: debug}
tracing:
  exporter: otlp-grpc
  endpoint: http://otel-collector:4317
  sampleRatio: 0.25
`

func TestParseFull(t *testing.T) {
	t.Parallel()
	got, err := Parse([]byte(fullYAML), env(map[string]string{"REDIS_PASSWORD": "pw", "TRAVEL_TOKEN": "t0k"}))
	if err != nil {
		t.Fatal(err)
	}
	weather := defaultAgent()
	weather.Name, weather.URL = "weather", "https://weather.example.com"
	want := &Config{
		Listen: "0.0.0.0:9090",
		Store:  Store{Kind: StoreRedis, Path: DefaultStorePath, Lease: DefaultStoreLease, WaitTimeout: DefaultStoreWaitTimeout, URL: "redis://:pw@redis:6379/0"},
		Server: Server{
			MaxBodyBytes:             2 << 20,
			MaxInlineBytes:           64 << 10,
			ReadHeaderTimeout:        Duration(5 * time.Second),
			IdleTimeout:              Duration(time.Minute),
			KeepAlive:                Duration(20 * time.Second),
			ShutdownGrace:            Duration(30 * time.Second),
			CORSOrigins:              []string{"https://app.example.com", "http://localhost:3000"},
			ClientQueue:              64,
			SlowClientTimeout:        Duration(3 * time.Second),
			WSPingInterval:           Duration(20 * time.Second),
			WSReadLimit:              64 << 10,
			WSMaxStreams:             32,
			WSMaxStreamsPerPrincipal: 4096,
		},
		Agents: []Agent{{
			Name:           "travel",
			URL:            "http://127.0.0.1:9001/",
			Card:           "http://127.0.0.1:9001/card.json",
			Description:    "Books trips",
			Headers:        map[string]string{"Authorization": "Bearer t0k", "X-Tenant": "acme"},
			Transports:     []string{"GRPC", "JSONRPC"},
			Timeouts:       Timeouts{Run: Duration(time.Hour), Idle: Duration(5 * time.Minute), Request: Duration(10 * time.Second)},
			Poll:           Poll{Initial: Duration(100 * time.Millisecond), Max: Duration(2 * time.Second)},
			StatusText:     StatusTextReasoning,
			InterruptTTL:   Duration(24 * time.Hour),
			StateKey:       "travelState",
			A2UI:           A2UIOn,
			ADKReliability: A2UIAuto,
			A2UICatalogs:   []string{"https://example.com/travel_catalog.json"},
			Trust:          Trust{MaxCardBytes: DefaultMaxCardBytes},
		}, weather},
		Log:     Log{Format: LogJSON, Level: LogDebug},
		Tracing: Tracing{Exporter: TracingOTLPGRPC, Endpoint: "http://otel-collector:4317", SampleRatio: 0.25},
	}
	// The security keys are absent: their defaults (security_test.go
	// covers them written out).
	d := Default()
	want.Auth, want.Limits, want.RedactKeys = d.Auth, d.Limits, d.RedactKeys
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

// The smallest config gets every default, per agent too.
func TestParseMinimal(t *testing.T) {
	t.Parallel()
	got, err := Parse([]byte("agents:\n  - {name: a, url: 'http://a'}\n  - {name: b, url: 'http://b', poll: {max: 1s}}\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := validConfig()
	want.Agents[0].Name, want.Agents[0].URL = "a", "http://a"
	want.Agents[1].Name, want.Agents[1].URL, want.Agents[1].Card = "b", "http://b", ""
	want.Agents[1].Poll.Max = Duration(time.Second)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

// The example in DESIGN.md parses.
func TestParseDesignExample(t *testing.T) {
	t.Parallel()
	const doc = `listen: 127.0.0.1:8080
store: {kind: embedded, path: ./data/bridge.db}   # embedded (default) | memory | redis (url: ...)
agents:
  - name: travel                      # URL-safe; becomes /agents/travel
    url: http://127.0.0.1:9001/       # base URL; card read from /.well-known/agent-card.json
    headers: {Authorization: "Bearer ${TRAVEL_TOKEN}"}   # optional: sent on every call to this agent
`
	c, err := Parse([]byte(doc), env(map[string]string{"TRAVEL_TOKEN": "x"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Agents[0].Headers["Authorization"]; got != "Bearer x" {
		t.Errorf("Authorization = %q", got)
	}
}

func TestParseEnv(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		"TOKEN": "s3cr3t", "EMPTY": "", "PORT": "9000", "MAX": "2048", "RUN": "90s",
		"TRICKY": "a: b # c\n- d", // YAML syntax inside a value stays data
		"DOLLAR": "${TOKEN}",      // values are not expanded again
	}
	tests := []struct {
		name    string
		value   string // the travel agent's description, or a full line for the special cases
		yaml    string // when set, replaces the whole document
		want    string
		wantErr []string // substrings, one per problem
	}{
		{name: "plain", value: "${TOKEN}", want: "s3cr3t"},
		{name: "embedded", value: "Bearer ${TOKEN}!", want: "Bearer s3cr3t!"},
		{name: "two", value: "${TOKEN}-${PORT}", want: "s3cr3t-9000"},
		{name: "default unused", value: "${TOKEN:-dflt}", want: "s3cr3t"},
		{name: "default unset", value: "${NOPE:-dflt}", want: "dflt"},
		{name: "default empty var", value: "${EMPTY:-dflt}", want: "dflt"},
		{name: "empty default", value: "x${NOPE:-}y", want: "xy"},
		{name: "default with spaces and colon", value: "'${NOPE:-a b:c}'", want: "a b:c"},
		{name: "empty var", value: "'[${EMPTY}]'", want: "[]"},
		{name: "escaped", value: "$${TOKEN}", want: "${TOKEN}"},
		{name: "double dollar", value: "a$$b", want: "a$b"},
		{name: "lone dollar kept", value: "pa$word$", want: "pa$word$"},
		{name: "yaml syntax in value", value: "${TRICKY}", want: "a: b # c\n- d"},
		{name: "no re-expansion", value: "${DOLLAR}", want: "${TOKEN}"},
		{name: "single quoted", value: "'${TOKEN}'", want: "s3cr3t"},
		{name: "comment ignored", value: "x # ${NOT_SET}", want: "x"},
		{name: "unset", value: "${NOT_SET}", wantErr: []string{"agents[0].description: environment variable NOT_SET is not set (write ${NOT_SET:-default} to make it optional) (line 4)"}},
		{name: "unset twice", value: "${A1}${A2}", wantErr: []string{"A1 is not set", "A2 is not set"}},
		{name: "unterminated", value: "${TOKEN", wantErr: []string{"agents[0].description: unterminated ${"}},
		{name: "bad name", value: "${1X}", wantErr: []string{"invalid variable reference"}},
		{name: "empty name", value: "${}", wantErr: []string{"invalid variable reference"}},
		{name: "unset-only form unsupported", value: "${X-y}", wantErr: []string{"invalid variable reference"}},
		{name: "nested default", value: "'${NOPE:-${TOKEN}}'", wantErr: []string{"nested reference"}},
		{
			name: "integer and duration from env",
			yaml: "server:\n  maxBodyBytes: ${MAX}\nagents:\n  - name: a\n    url: http://h:${PORT}\n    timeouts: {run: '${RUN}'}",
		},
		{
			name:    "bad integer from env",
			yaml:    "server:\n  maxBodyBytes: ${TOKEN}\nagents: [{name: a, url: 'http://h'}]",
			wantErr: []string{"server.maxBodyBytes: must be an integer (the value from the environment is not) (line 2)"},
		},
		{
			name:    "bad duration from env is not echoed",
			yaml:    "agents: [{name: a, url: 'http://h', timeouts: {run: '${TOKEN}'}}]",
			wantErr: []string{"agents[0].timeouts.run: invalid duration (from the environment): want a number with a unit"},
		},
		{
			name:    "unset in several places",
			yaml:    "listen: ${L1}\nagents: [{name: a, url: '${U1}', headers: {X-A: '${H1}'}}]",
			wantErr: []string{"listen: environment variable L1", "agents[0].url: environment variable U1", "agents[0].headers.X-A: environment variable H1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := tt.yaml
			if doc == "" {
				doc = "agents:\n  - name: travel\n    url: http://x\n    description: " + tt.value + "\n"
			}
			c, err := Parse([]byte(doc), env(vars))
			if tt.wantErr != nil {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("Parse error = %v, want a *ValidationError", err)
				}
				if len(ve.Problems) != len(tt.wantErr) {
					t.Errorf("got %d problems, want %d:\n%v", len(ve.Problems), len(tt.wantErr), err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.yaml != "" {
				if c.Server.MaxBodyBytes != 2048 || c.Agents[0].URL != "http://h:9000" || c.Agents[0].Timeouts.Run.Std() != 90*time.Second {
					t.Errorf("got %+v", c)
				}
				return
			}
			if diff := cmp.Diff(tt.want, c.Agents[0].Description); diff != "" {
				t.Errorf("description (-want +got):\n%s", diff)
			}
		})
	}
}

// Unknown keys and wrongly shaped values are reported with their paths, all at once.
func TestParseSchemaErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string // Problem.String() of each problem, in order
	}{
		{
			name: "top level",
			yaml: "listn: :8080\nagents: [{name: a, url: 'http://a'}]",
			want: []string{"listn: unknown key: did you mean listen? (line 1)"},
		},
		{
			name: "nested in agent",
			yaml: "agents:\n  - name: a\n    url: http://a\n    timeout: 5s\n    timeouts: {run: 1m, idel: 1m}",
			want: []string{"agents[0].timeout: unknown key: did you mean timeouts? (line 4)", "agents[0].timeouts.idel: unknown key: did you mean idle? (line 5)"},
		},
		{
			name: "store and server",
			yaml: "store: {kind: redis, addr: x}\nserver: {maxBody: 1}\nagents: [{name: a, url: 'http://a'}]",
			want: []string{"store.addr: unknown key; known keys: kind, path, url, sentinel, cluster, username, password, tls, waitReplicas, waitTimeout, lease, retention (line 1)",
				// Reported beside the unknown key: the rules still run on the rest.
				"store.url: required when kind is redis (or store.sentinel, or store.cluster) (line 1)",
				"server.maxBody: unknown key: did you mean maxBodyBytes? (line 2)"},
		},
		{
			name: "case matters",
			yaml: "agents: [{name: a, url: 'http://a', statustext: none, InterruptTTL: 1m}]",
			want: []string{"agents[0].statustext: unknown key: did you mean statusText? (line 1)", "agents[0].InterruptTTL: unknown key: did you mean interruptTTL? (line 1)"},
		},
		{
			name: "wrong shapes",
			yaml: "listen: [a]\nstore: embedded\nserver: {corsOrigins: '*', maxBodyBytes: 1MiB}\nagents: {name: a}",
			want: []string{
				"listen: must be a string, not a list (line 1)",
				"store: must be a mapping of keys, not a scalar (line 2)",
				"server.corsOrigins: must be a list, not a scalar (line 3)",
				`server.maxBodyBytes: must be an integer (got "1MiB") (line 3)`,
				"agents: must be a list, not a mapping (line 4)",
			},
		},
		{
			name: "bad durations",
			yaml: "server: {keepAlive: 15}\nagents: [{name: a, url: 'http://a', timeouts: {run: 10 minutes, idle: [1m]}}]",
			want: []string{
				`server.keepAlive: invalid duration "15": want a number with a unit, such as 500ms, 30s, 2m or 1h (line 1)`,
				`agents[0].timeouts.run: invalid duration "10 minutes": want a number with a unit, such as 500ms, 30s, 2m or 1h (line 2)`,
				"agents[0].timeouts.idle: must be a duration such as 30s, not a list (line 2)",
			},
		},
		{
			name: "observability shapes",
			yaml: "log: json\ntracing: {sampleRatio: half, exporter: [otlp-http], endpont: http://c}\nagents: [{name: a, url: 'http://a'}]",
			want: []string{
				"log: must be a mapping of keys, not a scalar (line 1)",
				`tracing.sampleRatio: must be a number (got "half") (line 2)`,
				"tracing.exporter: must be a string, not a list (line 2)",
				"tracing.endpont: unknown key: did you mean endpoint? (line 2)",
			},
		},
		{
			name: "headers",
			yaml: "agents: [{name: a, url: 'http://a', headers: [x], transports: JSONRPC}]",
			want: []string{"agents[0].headers: must be a mapping, not a list (line 1)", "agents[0].transports: must be a list, not a scalar (line 1)"},
		},
		{
			name: "header value not a string",
			yaml: "agents: [{name: a, url: 'http://a', headers: {X-A: {b: c}}}]",
			want: []string{"agents[0].headers.X-A: must be a string, not a mapping (line 1)"},
		},
		{
			name: "empty agent entry",
			yaml: "agents:\n  - \n  - {name: a, url: 'http://a'}",
			want: []string{"agents[0]: empty entry (line 2)"},
		},
		{
			name: "not a mapping",
			yaml: "- a\n- b",
			want: []string{"line 1: must be a mapping of top-level keys (listen, store, server, agents, log, tracing), not a list"},
		},
		{
			name: "unknown key in merged anchor",
			yaml: "x-base: &base {url: 'http://a', retries: 3}\nagents: [{<<: *base, name: a}]",
			want: []string{"x-base: unknown key; known keys: listen, store, server, agents, teams, log, tracing, auth, metrics, limits, redactKeys (line 1)",
				"agents[0].retries: unknown key; known keys: name, url, card, description, headers, transports, timeouts, poll, statusText, interruptTTL, stateKey, a2ui, adkReliability, a2uiCatalogs, allow, auth, trust (line 1)"},
		},
		{
			name: "more than one document",
			yaml: "agents: [{name: a, url: 'http://a'}]\n---\nlisten: :1\n",
			want: []string{"line 2: holds more than one YAML document; the bridge reads exactly one"},
		},
		{
			name: "validation with lines",
			yaml: "listen: :8080\nagents:\n  - name: A\n    url: ftp://a\n    timeouts:\n      run: 0s\n  - name: b\n    card: http://b\n    statusText: loud\n",
			want: []string{
				`agents[0].name: must match ^[a-z0-9][a-z0-9_-]{0,62}$: lowercase letters, digits, - and _, at most 63 characters (got "A") (line 3)`,
				`agents[0].url: must be an http(s) URL (got "ftp://a") (line 4)`,
				"agents[0].timeouts.run: must be > 0 (line 6)",
				`agents[1].statusText: must be one of auto, message, activity, reasoning, none (got "loud") (line 9)`,
			},
		},
		{
			// A problem the walk finds does not hide the rules' problems
			// elsewhere: every one is reported, in the order of the file.
			name: "all problems at once",
			yaml: "agents:\n  - name: Travel\n    url: http://x/\n    timeouts: {run: 5 minutes}\n    timeout: 1m\n" +
				"  - name: Travel\n    url: http://y/\n    transports: [grpc, jsonrpc]\nteams:\n  - {name: t, strategy: router, members: [travl]}\n",
			want: []string{
				`agents[0].name: must match ^[a-z0-9][a-z0-9_-]{0,62}$: lowercase letters, digits, - and _, at most 63 characters (got "Travel") (line 2)`,
				`agents[0].timeouts.run: invalid duration "5 minutes": want a number with a unit, such as 500ms, 30s, 2m or 1h (line 4)`,
				"agents[0].timeout: unknown key: did you mean timeouts? (line 5)",
				`agents[1].name: must match ^[a-z0-9][a-z0-9_-]{0,62}$: lowercase letters, digits, - and _, at most 63 characters (got "Travel") (line 6)`,
				`agents[1].name: duplicate agent name "Travel" (also agents[0].name) (line 6)`,
				`teams[0].members[0]: no agent is named "travl" (did you mean "Travel"?): a team's members are the names of agents listed under agents:, not teams (line 10)`,
			},
		},
		{
			name: "explicit zero is not defaulted",
			yaml: "server: {maxBodyBytes: 0}\nagents: [{name: a, url: 'http://a', statusText: ''}]",
			want: []string{
				"server.maxBodyBytes: must be > 0 (got 0) (line 1)",
				`agents[0].statusText: must be one of auto, message, activity, reasoning, none (got "") (line 2)`,
			},
		},
		{
			name: "empty document",
			yaml: "",
			want: []string{"agents: at least one agent is required"},
		},
		{
			name: "comments only",
			yaml: "# nothing yet\n",
			want: []string{"agents: at least one agent is required"},
		},
		{
			name: "defaults only",
			yaml: "listen: :8080\n",
			want: []string{"agents: at least one agent is required"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse([]byte(tt.yaml), env(nil))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Parse = %+v, %v; want a *ValidationError", c, err)
			}
			var got []string
			for _, p := range ve.Problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if c != nil {
				t.Errorf("Parse returned a config with an error")
			}
		})
	}
}

// Anchors, aliases and merge keys work; aliased values are expanded once.
func TestParseAnchors(t *testing.T) {
	t.Parallel()
	const doc = `
agents:
  - &travel
    name: travel
    url: http://a
    headers: &auth {Authorization: "Bearer ${T}", X-Cost: "$$5"}
    timeouts: {run: 1m}
  - <<: *travel
    name: travel2
    headers: *auth
`
	c, err := Parse([]byte(doc), env(map[string]string{"T": "tok"}))
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range c.Agents {
		if diff := cmp.Diff(map[string]string{"Authorization": "Bearer tok", "X-Cost": "$5"}, a.Headers); diff != "" {
			t.Errorf("agents[%d].headers (-want +got):\n%s", i, diff)
		}
		if a.Timeouts.Run.Std() != time.Minute || a.Timeouts.Idle != DefaultIdleRunTimeout {
			t.Errorf("agents[%d].timeouts = %+v", i, a.Timeouts)
		}
	}
}

// A YAML syntax error is reported at the line it is on, not at the line
// where yaml.v3's enclosing block starts.
func TestParseSyntaxError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		line       int
		msg        string
	}{
		{"key indented too little", "agents:\n  - name: travel\n    url: http://x/\n   timeouts: {run: 1m}\n", 4, "did not find expected '-' indicator"},
		{"key indented too far", "agents:\n  - name: travel\n    url: http://x/\n    timeouts:\n      run: 1m\n     idle: 2m\n", 6, "did not find expected key"},
		{"unquoted colon", "listen: 127.0.0.1:8080\nagents:\n  - name: a\n    url: http://a\n    description: Books: flights\n", 5, "mapping values are not allowed in this context"},
		{"unclosed list", "agents: [\n", 1, "did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.yaml), env(nil))
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 1 {
				t.Fatalf("Parse = %v, want one problem", err)
			}
			p := ve.Problems[0]
			if p.Line != tt.line || !strings.HasPrefix(p.Message, "not valid YAML: "+tt.msg) {
				t.Errorf("problem = %q at line %d, want %q at line %d", p.Message, p.Line, tt.msg, tt.line)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("agents: [{name: a, url: 'http://a'}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("agents: [{name: a, url: 'http://a', timeout: 1s}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(good); err != nil || c.Agents[0].Name != "a" {
		t.Errorf("Load(good) = %+v, %v", c, err)
	}
	_, err := Load(bad)
	want := bad + ": agents[0].timeout: unknown key: did you mean timeouts? (line 1)"
	if err == nil || err.Error() != want {
		t.Errorf("Load(bad) error = %v, want %q", err, want)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) error = %v, want os.ErrNotExist", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		fullYAML,
		"agents: [{name: a, url: 'http://a'}]",
		"agents: [{name: a, url: '${X:-http://a}', description: '$${Y}'}]",
		"x: &a [*a]",
		"a: &a {<<: *a}",
		"agents: [{<<: [{url: 1}, 2]}]",
		"agents: [{headers: {? [a]: b}}]",
		"server: {maxBodyBytes: ${N}}",
		"--- \n...\n---\n",
		"${",
		"listen: !!binary aGk=",
		"agents: [{timeouts: {run: !!int 5}}]",
	} {
		f.Add([]byte(s))
	}
	lookup := env(map[string]string{"X": "http://x", "N": "12", "E": ""})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, lookup)
		if (c == nil) == (err == nil) {
			t.Fatalf("Parse = %v, %v: want exactly one of config and error", c, err)
		}
		if c != nil {
			if err := c.Validate(); err != nil {
				t.Fatalf("Parse returned a config that fails Validate: %v", err)
			}
		}
		var ve *ValidationError
		if errors.As(err, &ve) && len(ve.Problems) == 0 {
			t.Fatal("ValidationError with no problems")
		}
	})
}

// The examples in REFERENCE.md are valid configs.
func TestReferenceExamples(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("REFERENCE.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```yaml\n")[1:]
	if len(blocks) < 2 {
		t.Fatalf("found %d yaml examples, want at least 2", len(blocks))
	}
	anyVar := func(string) (string, bool) { return "secret", true }
	for i, b := range blocks {
		example, _, _ := strings.Cut(b, "```")
		if _, err := Parse([]byte(example), anyVar); err != nil {
			t.Errorf("example %d: %v\n%s", i, err, example)
		}
	}
}

// Observability keys: defaults when absent, an explicit 0 ratio kept, a
// ratio from the environment read as a number.
func TestParseObservability(t *testing.T) {
	t.Parallel()
	const agents = "\nagents: [{name: a, url: 'http://a'}]"
	tests := []struct {
		yaml string
		env  map[string]string
		log  Log
		tr   Tracing
	}{
		{"listen: ':1'", nil, Log{LogText, LogInfo}, Tracing{Exporter: TracingNone, SampleRatio: 1}},
		{"tracing: {exporter: otlp-http, sampleRatio: 0}", nil, Log{LogText, LogInfo}, Tracing{Exporter: TracingOTLPHTTP}},
		{"tracing:\n  exporter: otlp-http\n  sampleRatio: ${RATIO}\nlog: {level: warn}", map[string]string{"RATIO": "0.5"},
			Log{LogText, LogWarn}, Tracing{Exporter: TracingOTLPHTTP, SampleRatio: 0.5}},
	}
	for _, tt := range tests {
		c, err := Parse([]byte(tt.yaml+agents), env(tt.env))
		if err != nil {
			t.Fatalf("%s: %v", tt.yaml, err)
		}
		if diff := cmp.Diff(tt.log, c.Log); diff != "" {
			t.Errorf("%s: log (-want +got):\n%s", tt.yaml, diff)
		}
		if diff := cmp.Diff(tt.tr, c.Tracing); diff != "" {
			t.Errorf("%s: tracing (-want +got):\n%s", tt.yaml, diff)
		}
	}
	_, err := Parse([]byte("tracing:\n  sampleRatio: ${RATIO}"+agents), env(map[string]string{"RATIO": "most"}))
	if err == nil || !strings.Contains(err.Error(), "tracing.sampleRatio: must be a number (the value from the environment is not)") {
		t.Errorf("a non-numeric ratio from the environment: %v", err)
	}
}

func TestParseAuthAndTrust(t *testing.T) {
	t.Parallel()
	keyFile := t.TempDir() + "/keys.jwks"
	if err := os.WriteFile(keyFile, []byte(`{"keys":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := `agents:
  - name: a
    url: http://a:9001
    auth:
      apiKey: ${KEY}
      oauth2:
        tokenURL: https://idp/token
        clientId: bridge
        clientSecret: ${SECRET}
        scopes: [agent:call]
      forwardCallerToken: true
    trust:
      allowHosts: [grpc.a:9002, cdn.a]
      trustedKeys: [` + keyFile + `]
      maxCardBytes: 65536
  - name: b
    url: http://b
`
	c, err := Parse([]byte(yaml), env(map[string]string{"KEY": "k3y", "SECRET": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	want := AgentAuth{APIKey: "k3y", OAuth2: OAuth2{TokenURL: "https://idp/token", ClientID: "bridge", ClientSecret: "s3cret", Scopes: []string{"agent:call"}}, ForwardCallerToken: true}
	if diff := cmp.Diff(want, c.Agents[0].Auth); diff != "" {
		t.Errorf("auth (-want +got):\n%s", diff)
	}
	wantTrust := Trust{AllowHosts: []string{"grpc.a:9002", "cdn.a"}, TrustedKeys: []string{keyFile}, MaxCardBytes: 65536}
	if diff := cmp.Diff(wantTrust, c.Agents[0].Trust); diff != "" {
		t.Errorf("trust (-want +got):\n%s", diff)
	}
	// Defaults: nothing presented, nothing extra trusted, 1 MiB cards.
	if diff := cmp.Diff(Trust{MaxCardBytes: DefaultMaxCardBytes}, c.Agents[1].Trust); diff != "" || !cmp.Equal(AgentAuth{}, c.Agents[1].Auth) {
		t.Errorf("defaults: trust %s, auth %+v", diff, c.Agents[1].Auth)
	}

	// Strict: bad shapes and values name their path and line, and a secret
	// from the environment is never echoed.
	bad := `agents:
  - name: a
    url: http://a
    auth:
      forwardCallerToken: ${FWD}
      bearer: [x]
      oauth2: {clientId: x, clientSecret: y, tokenUrl: https://idp}
    trust:
      maxCardBytes: big
      allowHost: [x]
`
	_, err = Parse([]byte(bad), env(map[string]string{"FWD": "yes-s3cret"}))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	for _, w := range []string{
		"agents[0].auth.forwardCallerToken: must be true or false (the value from the environment is not) (line 5)",
		"agents[0].auth.bearer: must be a string, not a list (line 6)",
		"agents[0].auth.oauth2.tokenUrl: unknown key: did you mean tokenURL? (line 7)",
		`agents[0].trust.maxCardBytes: must be an integer (got "big") (line 9)`,
		"agents[0].trust.allowHost: unknown key: did you mean allowHosts? (line 10)",
	} {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, msg)
		}
	}
	if strings.Contains(msg, "yes-s3cret") {
		t.Errorf("error echoes a secret: %s", msg)
	}
}

// store.lease is a duration that defaults when absent, keeps an explicit
// value, and is refused with its path and line when too short or not a
// duration.
func TestParseStoreLease(t *testing.T) {
	t.Parallel()
	const agents = "\nagents: [{name: a, url: 'http://a'}]"
	c, err := Parse([]byte("store: {kind: redis, url: 'redis://r:6379'}"+agents), env(nil))
	if err != nil || c.Store.Lease.Std() != 15*time.Second {
		t.Fatalf("default lease = %v, %v; want 15s", c.Store.Lease, err)
	}
	c, err = Parse([]byte("store:\n  kind: redis\n  url: redis://r:6379\n  lease: 4s"+agents), env(nil))
	if err != nil || c.Store.Lease.Std() != 4*time.Second {
		t.Fatalf("lease 4s = %v, %v", c.Store.Lease, err)
	}
	for yaml, want := range map[string]string{
		"store:\n  kind: redis\n  url: redis://r:6379\n  lease: 200ms": "store.lease: must be at least 1s (got 200ms) (line 4)",
		"store:\n  kind: redis\n  lease: soon\n  url: redis://r:6379":  "store.lease: ",
	} {
		_, err := Parse([]byte(yaml+agents), env(nil))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "(line ") {
			t.Errorf("%q: error %v, want it to contain %q and a line", yaml, err, want)
		}
	}
}

// The Redis deployments beyond one server read from YAML: a sentinel block
// with its own credentials, a cluster's seed list, the data nodes'
// credentials and the replica wait; a typo inside the block is reported
// with its path.
func TestParseRedisDeployments(t *testing.T) {
	t.Parallel()
	env := func(name string) (string, bool) { return "pw-" + name, true }
	c, err := Parse([]byte(`
store:
  kind: redis
  sentinel: {master: primary, addrs: ["s1:26379", "s2:26379"], password: "${SENTINEL_PASSWORD}", db: 2}
  password: ${REDIS_PASSWORD}
  waitReplicas: 1
  waitTimeout: 500ms
agents: [{name: a, url: "http://127.0.0.1:1/"}]
`), env)
	if err != nil {
		t.Fatal(err)
	}
	want := Store{Kind: StoreRedis, Path: DefaultStorePath, Lease: DefaultStoreLease, Password: "pw-REDIS_PASSWORD",
		Sentinel:     StoreSentinel{Master: "primary", Addrs: []string{"s1:26379", "s2:26379"}, Password: "pw-SENTINEL_PASSWORD", DB: 2},
		WaitReplicas: 1, WaitTimeout: Duration(500 * time.Millisecond)}
	if diff := cmp.Diff(want, c.Store); diff != "" {
		t.Errorf("sentinel store (-want +got):\n%s", diff)
	}
	c, err = Parse([]byte("store: {kind: redis, cluster: [\"r1:6379\", \"r2:6379\"], tls: true}\nagents: [{name: a, url: \"http://127.0.0.1:1/\"}]\n"), env)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Store.TLS || !cmp.Equal(c.Store.Cluster, []string{"r1:6379", "r2:6379"}) {
		t.Errorf("cluster store: %+v", c.Store)
	}
	_, err = Parse([]byte("store: {kind: redis, sentinel: {master: p, adrs: [\"s1:26379\"]}}\nagents: [{name: a, url: \"http://127.0.0.1:1/\"}]\n"), env)
	if err == nil || !strings.Contains(err.Error(), "store.sentinel.adrs") {
		t.Errorf("a misspelt sentinel key: %v", err)
	}
}
