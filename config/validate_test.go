package config

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// validConfig returns a config that passes Validate, for tests to break.
func validConfig() *Config {
	c := Default()
	c.Agents = []Agent{defaultAgent(), defaultAgent()}
	c.Agents[0].Name, c.Agents[0].URL = "travel", "http://127.0.0.1:9001/"
	c.Agents[1].Name, c.Agents[1].Card = "weather_2", "https://weather.example.com/card.json"
	return c
}

func TestValidate(t *testing.T) {
	t.Parallel()
	type want struct{ path, msg string } // msg: a substring of the message
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   []want
	}{
		{"valid", func(c *Config) {}, nil},
		{"team", func(c *Config) {
			c.Teams = []Team{{Name: "concierge", Strategy: StrategyParallel, Members: []string{"travel", "weather_2"}}}
		}, nil},
		{"team problems", func(c *Config) {
			c.Teams = []Team{
				{Name: "travel", Strategy: "round-robin", Members: []string{"travel", "nobody", "travel", "weather2"}},
				{Name: "Desk", Members: nil},
				{Name: "a", Strategy: StrategyRouter, Members: []string{"travel"}},
				{Name: "a", Strategy: StrategySequential, Members: []string{"a"}},
			}
		}, []want{
			{"teams[0].strategy", "must be router, parallel or sequential"},
			{"teams[0].members[1]", `no agent is named "nobody": a team's members are the names of agents listed under agents:, not teams`},
			{"teams[0].members[2]", "is already teams[0].members[0]"},
			{"teams[0].members[3]", `no agent is named "weather2" (did you mean "weather_2"?)`},
			{"teams[0].name", "already an agent's name"},
			{"teams[1].name", "must match"},
			{"teams[1].strategy", "required"},
			{"teams[1].members", "at least one member"},
			{"teams[3].members[0]", `no agent is named "a"`},
			{"teams[3].name", `duplicate team name "a"`},
		}},
		{"listen empty", func(c *Config) { c.Listen = "" }, []want{{"listen", "required"}}},
		{"listen no port", func(c *Config) { c.Listen = "localhost" }, []want{{"listen", "must be host:port"}}},
		{"listen bad port", func(c *Config) { c.Listen = "localhost:http" }, []want{{"listen", "numeric port"}}},
		{"listen any host", func(c *Config) { c.Listen = ":8080" }, nil},
		{"store kind", func(c *Config) { c.Store.Kind = "sqlite" }, []want{{"store.kind", "must be one of embedded, memory, redis"}}},
		{"store kind empty", func(c *Config) { c.Store.Kind = "" }, []want{{"store.kind", "must be one of"}}},
		{"embedded needs path", func(c *Config) { c.Store.Path = "" }, []want{{"store.path", "required when kind is embedded"}}},
		{"memory", func(c *Config) { c.Store = Store{Kind: StoreMemory, Lease: DefaultStoreLease} }, nil},
		{"redis needs url", func(c *Config) { c.Store.Kind = StoreRedis }, []want{{"store.url", "required when kind is redis (or store.sentinel, or store.cluster)"}}},
		{"redis url", func(c *Config) {
			c.Store = Store{Kind: StoreRedis, Lease: DefaultStoreLease, URL: "rediss://u:p@redis:6380/2"}
		}, nil},
		{"redis unix", func(c *Config) {
			c.Store = Store{Kind: StoreRedis, Lease: DefaultStoreLease, URL: "unix:///run/redis.sock"}
		}, nil},
		{"redis bad scheme", func(c *Config) { c.Store = Store{Kind: StoreRedis, Lease: DefaultStoreLease, URL: "http://redis:6379"} }, []want{{"store.url", "redis://"}}},
		{"redis no host", func(c *Config) { c.Store = Store{Kind: StoreRedis, Lease: DefaultStoreLease, URL: "redis://"} }, []want{{"store.url", "must name a host"}}},
		{"lease zero", func(c *Config) { c.Store.Lease = 0 }, []want{{"store.lease", "at least 1s"}}},
		{"lease too short", func(c *Config) { c.Store.Lease = Duration(500 * time.Millisecond) }, []want{{"store.lease", "at least 1s (got 500ms)"}}},
		{"lease minimum", func(c *Config) { c.Store.Lease = Duration(time.Second) }, nil},
		{"url without redis", func(c *Config) { c.Store.URL = "redis://redis:6379" }, []want{{"store.url", "only used when kind is redis"}}},
		{"redis sentinel url", func(c *Config) {
			c.Store = Store{Kind: StoreRedis, Lease: DefaultStoreLease, URL: "redis-sentinel://:pw@s1:26379,s2:26379/primary/1"}
		}, nil},
		{"redis sentinel url without primary", func(c *Config) {
			c.Store = Store{Kind: StoreRedis, Lease: DefaultStoreLease, URL: "redis-sentinel://s1:26379,s2"}
		}, []want{{"store.url", "host:port"}, {"store.url", "names the primary"}}},
		{"redis sentinel block", func(c *Config) {
			c.Store = Store{Kind: StoreRedis, Lease: DefaultStoreLease, Password: "pw",
				Sentinel: StoreSentinel{Master: "primary", Addrs: []string{"s1:26379"}}}
		}, nil},
		{"redis sentinel block incomplete", func(c *Config) {
			c.Store = Store{Kind: StoreRedis, Lease: DefaultStoreLease, Sentinel: StoreSentinel{Addrs: []string{"s1"}, DB: -1}}
		}, []want{{"store.sentinel.master", "required"}, {"store.sentinel.addrs[0]", "host:port"}, {"store.sentinel.db", ">= 0"}}},
		{"redis cluster", func(c *Config) {
			c.Store = Store{Kind: StoreRedis, Lease: DefaultStoreLease, Cluster: []string{"r1:6379", "r2:6379"}, TLS: true, WaitReplicas: 1, WaitTimeout: Duration(time.Second)}
		}, nil},
		{"redis cluster empty", func(c *Config) {
			c.Store = Store{Kind: StoreRedis, Lease: DefaultStoreLease, Cluster: []string{}}
		}, []want{{"store.cluster", "at least one"}}},
		{"redis two targets", func(c *Config) {
			c.Store = Store{Kind: StoreRedis, Lease: DefaultStoreLease, URL: "redis://r:6379", Cluster: []string{"r1:6379"}, Password: "x"}
		}, []want{{"store", "name one Redis"}, {"store.url", "carries its own credentials"}}},
		{"redis password without target", func(c *Config) { c.Store.Password = "x" }, []want{{"store.password", "only used with store.sentinel or store.cluster"}}},
		{"cluster without redis", func(c *Config) { c.Store.Cluster = []string{"r1:6379"} }, []want{{"store.cluster", "only used when kind is redis"}}},
		{"waitReplicas negative", func(c *Config) { c.Store.WaitReplicas = -1 }, []want{{"store.waitReplicas", ">= 0"}}},
		{"maxBodyBytes zero", func(c *Config) { c.Server.MaxBodyBytes = 0 }, []want{{"server.maxBodyBytes", "must be > 0"}}},
		{"maxBodyBytes negative", func(c *Config) { c.Server.MaxBodyBytes = -1 }, []want{{"server.maxBodyBytes", "must be > 0"}}},
		{"server durations", func(c *Config) {
			c.Server.ReadHeaderTimeout = 0
			c.Server.IdleTimeout = Duration(-time.Second)
			c.Server.KeepAlive = 0
			c.Server.ShutdownGrace = Duration(-1)
		}, []want{
			{"server.readHeaderTimeout", "must be > 0"},
			{"server.idleTimeout", "must not be negative"},
			{"server.keepAlive", "must be > 0"},
			{"server.shutdownGrace", "must not be negative"},
		}},
		{"cors origins", func(c *Config) {
			c.Server.CORSOrigins = []string{"*", "https://app.example.com", "http://localhost:3000", "https://app.example.com/", "app.example.com", "https://x/path"}
		}, []want{
			{"server.corsOrigins[3]", "must be \"*\" or an origin"},
			{"server.corsOrigins[4]", "must be \"*\" or an origin"},
			{"server.corsOrigins[5]", "must be \"*\" or an origin"},
		}},
		{"no agents", func(c *Config) { c.Agents = nil }, []want{{"agents", "at least one agent is required"}}},
		{"name required", func(c *Config) { c.Agents[1].Name = "" }, []want{{"agents[1].name", "required"}}},
		{"name pattern", func(c *Config) { c.Agents[1].Name = "Weather" }, []want{{"agents[1].name", "must match ^[a-z0-9][a-z0-9_-]{0,62}$"}}},
		{"name leading dash", func(c *Config) { c.Agents[0].Name = "-x" }, []want{{"agents[0].name", "must match"}}},
		{"name slash", func(c *Config) { c.Agents[0].Name = "a/b" }, []want{{"agents[0].name", "must match"}}},
		{"name 63 chars", func(c *Config) { c.Agents[0].Name = strings.Repeat("a", 63) }, nil},
		{"name 64 chars", func(c *Config) { c.Agents[0].Name = strings.Repeat("a", 64) }, []want{{"agents[0].name", "must match"}}},
		{"duplicate names", func(c *Config) {
			c.Agents = append(c.Agents, c.Agents[0])
			c.Agents[1].Name = "travel"
		}, []want{
			{"agents[1].name", `duplicate agent name "travel" (also agents[0].name)`},
			{"agents[2].name", `duplicate agent name "travel" (also agents[0].name)`},
		}},
		{"url or card required", func(c *Config) { c.Agents[1].Card = "" }, []want{{"agents[1].url", "required unless card is set"}}},
		{"url scheme", func(c *Config) { c.Agents[0].URL = "ftp://x" }, []want{{"agents[0].url", "must be an http(s) URL"}}},
		{"url relative", func(c *Config) { c.Agents[0].URL = "/agent" }, []want{{"agents[0].url", "must be an http(s) URL"}}},
		{"url password redacted", func(c *Config) { c.Agents[0].URL = "ws://u:secret@x" }, []want{{"agents[0].url", `(got "ws://u:xxxxx@x")`}}},
		{"card scheme", func(c *Config) { c.Agents[1].Card = "file:///card.json" }, []want{{"agents[1].card", "must be an http(s) URL"}}},
		{"url and card", func(c *Config) { c.Agents[0].Card = "https://x/card.json" }, nil},
		{"headers", func(c *Config) {
			c.Agents[0].Headers = map[string]string{"Authorization": "Bearer x", "X Bad": "v", "X-Split": "a\r\nEvil: 1", "": "v"}
		}, []want{
			{"agents[0].headers.", "not a valid HTTP header name"},
			{"agents[0].headers.X Bad", "not a valid HTTP header name"},
			{"agents[0].headers.X-Split", "must not contain CR, LF or NUL"},
		}},
		{"auth", func(c *Config) {
			c.Agents[0].Auth = AgentAuth{Bearer: "a\nb", APIKey: "k\x00", OAuth2: OAuth2{TokenURL: "ftp://x", Scopes: []string{"ok", "", "a b"}}}
		}, []want{
			{"agents[0].auth.bearer", "must not contain CR, LF or NUL"},
			{"agents[0].auth.apiKey", "must not contain CR, LF or NUL"},
			{"agents[0].auth.oauth2", "bearer is set too"},
			{"agents[0].auth.oauth2.clientId", "required with oauth2"},
			{"agents[0].auth.oauth2.clientSecret", "required with oauth2"},
			{"agents[0].auth.oauth2.tokenURL", "must be an http(s) URL"},
			{"agents[0].auth.oauth2.scopes[1]", "must be a non-empty scope"},
			{"agents[0].auth.oauth2.scopes[2]", "must be a non-empty scope"},
		}},
		{"auth and an Authorization header", func(c *Config) {
			c.Agents[0].Headers = map[string]string{"authorization": "Bearer x"}
			c.Agents[0].Auth.Bearer = "y"
		}, []want{{"agents[0].auth", "headers.authorization is set too"}}},
		{"auth complete", func(c *Config) {
			c.Agents[0].Auth = AgentAuth{APIKey: "k", OAuth2: OAuth2{ClientID: "id", ClientSecret: "s", Scopes: []string{"a:b"}}, ForwardCallerToken: true}
		}, nil},
		{"trust", func(c *Config) {
			c.Agents[0].Trust = Trust{
				AllowHosts:   []string{"ok.example", "ok.example:8443", "[::1]:9", "http://x", "x/y", "x:99999", ""},
				TrustedKeys:  []string{"-----BEGIN PUBLIC KEY-----\n...", `{"keys":[]}`, "/nonexistent/key.pem", " "},
				MaxCardBytes: 0,
			}
		}, []want{
			{"agents[0].trust.allowHosts[3]", "must be host or host:port"},
			{"agents[0].trust.allowHosts[4]", "must be host or host:port"},
			{"agents[0].trust.allowHosts[5]", "must be host or host:port"},
			{"agents[0].trust.allowHosts[6]", "must be host or host:port"},
			{"agents[0].trust.trustedKeys[2]", "cannot read the key file: no such file or directory"},
			{"agents[0].trust.trustedKeys[3]", "must not be empty"},
			{"agents[0].trust.maxCardBytes", "must be > 0"},
		}},
		{"transports", func(c *Config) {
			c.Agents[0].Transports = []string{"GRPC", "HTTP+JSON", "JSONRPC"}
			// Any case is the same transport: grpc is GRPC, listed twice.
			c.Agents[1].Transports = []string{"jsonrpc", "grpc", "GRPC", "REST"}
		}, []want{
			{"agents[1].transports[2]", "GRPC is listed twice"},
			{"agents[1].transports[3]", "must be one of JSONRPC, HTTP+JSON, GRPC"},
		}},
		{"agent durations", func(c *Config) {
			c.Agents[0].Timeouts = Timeouts{Run: 0, Idle: Duration(-time.Second), Request: Duration(-1)}
			c.Agents[0].Poll = Poll{Initial: -1, Max: 0}
		}, []want{
			{"agents[0].timeouts.run", "must be > 0"},
			{"agents[0].timeouts.idle", "must not be negative"},
			{"agents[0].timeouts.request", "must not be negative"},
			{"agents[0].poll.initial", "must not be negative"},
			{"agents[0].poll.max", "must be > 0"},
		}},
		{"poll initial above max", func(c *Config) { c.Agents[0].Poll = Poll{Initial: Duration(time.Minute), Max: Duration(time.Second)} },
			[]want{{"agents[0].poll.initial", "must not exceed poll.max (1m0s > 1s)"}}},
		{"statusText", func(c *Config) { c.Agents[0].StatusText = "loud" }, []want{{"agents[0].statusText", "must be one of auto, message, activity, reasoning, none"}}},
		{"statusText empty", func(c *Config) { c.Agents[0].StatusText = "" }, []want{{"agents[0].statusText", "must be one of"}}},
		{"statusText policies", func(c *Config) {
			c.Agents[0].StatusText = StatusTextActivity
			c.Agents[1].StatusText = StatusTextReasoning
			c.Agents = append(c.Agents, c.Agents[1])
			c.Agents[2].Name, c.Agents[2].StatusText = "third", StatusTextNone
		}, nil},
		{"interruptTTL negative", func(c *Config) { c.Agents[1].InterruptTTL = Duration(-time.Minute) }, []want{{"agents[1].interruptTTL", "must not be negative"}}},
		{"interruptTTL set", func(c *Config) { c.Agents[1].InterruptTTL = Duration(time.Hour) }, nil},
		{"log json debug", func(c *Config) { c.Log = Log{Format: LogJSON, Level: LogDebug} }, nil},
		{"log format and level", func(c *Config) { c.Log = Log{Format: "xml", Level: "verbose"} }, []want{
			{"log.format", "must be one of text, json"},
			{"log.level", "must be one of debug, info, warn, error"},
		}},
		{"log empty", func(c *Config) { c.Log = Log{} }, []want{{"log.format", "must be one of"}, {"log.level", "must be one of"}}},
		{"tracing otlp-http", func(c *Config) {
			c.Tracing = Tracing{Exporter: TracingOTLPHTTP, Endpoint: "https://collector.example.com:4318/v1/traces", SampleRatio: 0.1}
		}, nil},
		{"tracing otlp-grpc default endpoint, ratio 0", func(c *Config) { c.Tracing = Tracing{Exporter: TracingOTLPGRPC} }, nil},
		{"tracing exporter", func(c *Config) { c.Tracing.Exporter = "jaeger" }, []want{{"tracing.exporter", "must be one of none, otlp-http, otlp-grpc"}}},
		{"tracing endpoint without exporter", func(c *Config) { c.Tracing.Endpoint = "http://collector:4318" },
			[]want{{"tracing.endpoint", "only used with exporter otlp-http or otlp-grpc"}}},
		{"tracing endpoint not a URL", func(c *Config) {
			c.Tracing = Tracing{Exporter: TracingOTLPGRPC, Endpoint: "collector:4317", SampleRatio: 1}
		},
			[]want{{"tracing.endpoint", "must be an http(s) URL"}}},
		{"tracing endpoint password redacted", func(c *Config) {
			c.Tracing = Tracing{Exporter: TracingOTLPHTTP, Endpoint: "ftp://u:secret@collector", SampleRatio: 1}
		}, []want{{"tracing.endpoint", `(got "ftp://u:xxxxx@collector")`}}},
		{"sampleRatio above 1", func(c *Config) { c.Tracing.SampleRatio = 1.5 }, []want{{"tracing.sampleRatio", "must be between 0 and 1 (got 1.5)"}}},
		{"sampleRatio negative", func(c *Config) { c.Tracing.SampleRatio = -0.1 }, []want{{"tracing.sampleRatio", "must be between 0 and 1"}}},
		{"sampleRatio NaN", func(c *Config) { c.Tracing.SampleRatio = math.NaN() }, []want{{"tracing.sampleRatio", "must be between 0 and 1 (got NaN)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			tt.mutate(c)
			err := c.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate() = %v, want a *ValidationError", err)
			}
			var gotPaths, wantPaths []string
			for _, p := range ve.Problems {
				gotPaths = append(gotPaths, p.Path)
			}
			for _, w := range tt.want {
				wantPaths = append(wantPaths, w.path)
			}
			if diff := cmp.Diff(wantPaths, gotPaths); diff != "" {
				t.Fatalf("problem paths (-want +got):\n%s\nerror:\n%v", diff, err)
			}
			for i, w := range tt.want {
				if !strings.Contains(ve.Problems[i].Message, w.msg) {
					t.Errorf("problem %d = %q, want it to contain %q", i, ve.Problems[i].Message, w.msg)
				}
			}
		})
	}
}

// Every problem is reported, each on its own line, not just the first.
func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	c := validConfig()
	c.Store.Kind = "sqlite"
	c.Server.MaxBodyBytes = 0
	c.Agents[0].URL = "ftp://x"
	c.Agents[1].Name = "Bad Name"
	err := c.Validate()
	want := strings.Join([]string{
		`store.kind: must be one of embedded, memory, redis (got "sqlite")`,
		`server.maxBodyBytes: must be > 0 (got 0)`,
		`agents[0].url: must be an http(s) URL (got "ftp://x")`,
		`agents[1].name: must match ^[a-z0-9][a-z0-9_-]{0,62}$: lowercase letters, digits, - and _, at most 63 characters (got "Bad Name")`,
	}, "\n")
	if err == nil {
		t.Fatal("Validate() = nil, want an error")
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("Error() (-want +got):\n%s", diff)
	}
}

func TestValidationErrorFormat(t *testing.T) {
	t.Parallel()
	e := &ValidationError{Source: "bridge.yaml", Problems: []Problem{
		{Path: "agents[0].timeout", Message: "unknown key", Line: 7},
		{Path: "agents", Message: "at least one agent is required"},
		{Message: "holds more than one YAML document", Line: 3},
	}}
	want := "bridge.yaml: agents[0].timeout: unknown key (line 7)\n" +
		"bridge.yaml: agents: at least one agent is required\n" +
		"bridge.yaml: line 3: holds more than one YAML document"
	if diff := cmp.Diff(want, e.Error()); diff != "" {
		t.Errorf("Error() (-want +got):\n%s", diff)
	}
}
