package config

import (
	"fmt"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"
)

// Defaults. A key that is absent from the file (or null) takes these values;
// [Config.ApplyDefaults] uses them for zero-valued fields of a Config built in code.
const (
	DefaultListen             = "127.0.0.1:8080"
	DefaultStoreKind          = StoreEmbedded
	DefaultStorePath          = "./data/bridge.db"
	DefaultStoreLease         = Duration(15 * time.Second)
	DefaultStoreWaitTimeout   = Duration(time.Second)
	DefaultMaxBodyBytes       = 1 << 20 // 1 MiB
	DefaultMaxInlineBytes     = 1 << 20 // 1 MiB
	DefaultStateKey           = "a2a"
	DefaultReadHeaderTimeout  = Duration(10 * time.Second)
	DefaultIdleTimeout        = Duration(120 * time.Second)
	DefaultKeepAlive          = Duration(15 * time.Second)
	DefaultShutdownGrace      = Duration(10 * time.Second)
	DefaultClientQueue        = 32
	DefaultSlowClientTimeout  = Duration(10 * time.Second)
	DefaultWSPingInterval     = Duration(30 * time.Second)
	DefaultWSReadLimit        = 1<<20 + 4<<10 // a 1 MiB RunAgentInput in a run frame
	DefaultWSMaxStreams       = 32
	DefaultWSPrincipalStreams = 4096
	DefaultRunTimeout         = Duration(10 * time.Minute)
	DefaultIdleRunTimeout     = Duration(2 * time.Minute)
	DefaultRequestTimeout     = Duration(30 * time.Second)
	DefaultPollInitial        = Duration(250 * time.Millisecond)
	DefaultPollMax            = Duration(5 * time.Second)
	DefaultStatusText         = StatusTextAuto
	DefaultLogFormat          = LogText
	DefaultLogLevel           = LogInfo
	DefaultTracingExporter    = TracingNone
	DefaultSampleRatio        = 1.0
	DefaultMaxCardBytes       = 1 << 20
)

// Log formats (Log.Format) and levels (Log.Level).
const (
	LogText  = "text"
	LogJSON  = "json"
	LogDebug = "debug"
	LogInfo  = "info"
	LogWarn  = "warn"
	LogError = "error"
)

// Trace exporters (Tracing.Exporter).
const (
	TracingNone     = "none"
	TracingOTLPHTTP = "otlp-http"
	TracingOTLPGRPC = "otlp-grpc"
)

// Store kinds (Store.Kind).
const (
	StoreEmbedded = "embedded"
	StoreMemory   = "memory"
	StoreRedis    = "redis"
)

// A2UI switches (Agent.A2UI).
const (
	A2UIAuto = "auto"
	A2UIOn   = "on"
	A2UIOff  = "off"
)

// Status-text policies (Agent.StatusText).
const (
	StatusTextAuto      = "auto"
	StatusTextMessage   = "message"
	StatusTextActivity  = "activity"
	StatusTextReasoning = "reasoning"
	StatusTextNone      = "none"
)

// Transports (Agent.Transports), spelled as A2A agent cards spell them.
const (
	TransportJSONRPC  = "JSONRPC"
	TransportHTTPJSON = "HTTP+JSON"
	TransportGRPC     = "GRPC"
)

// Config is the whole bridge configuration, as read from the YAML file.
type Config struct {
	// Listen is the host:port the HTTP server listens on. Default "127.0.0.1:8080"
	// (loopback only; use ":8080" or "0.0.0.0:8080" to accept remote clients).
	// `bridge serve --listen` overrides it.
	Listen string `yaml:"listen"`

	// Store chooses where threads, interrupts and event journals live.
	Store Store `yaml:"store"`

	// Server holds HTTP server limits and timeouts.
	Server Server `yaml:"server"`

	// Agents are the remote A2A agents; each becomes /agents/{name}. At least one is required.
	Agents []Agent `yaml:"agents"`

	// Teams put several agents behind one endpoint, /agents/{name}, every
	// event attributed to the member that produced it. Optional.
	Teams []Team `yaml:"teams"`

	// Log sets the format and level of the bridge's logs (on stderr).
	Log Log `yaml:"log"`

	// Tracing exports OpenTelemetry traces of runs and A2A calls. Off by default.
	Tracing Tracing `yaml:"tracing"`

	// Auth requires callers to authenticate (API keys, JWTs). Off by
	// default, and then the bridge listens only on loopback addresses
	// unless auth.mode is "none".
	Auth Auth `yaml:"auth"`

	// Metrics configures GET /metrics.
	Metrics MetricsConfig `yaml:"metrics"`

	// Limits bound requests, runs and callers.
	Limits Limits `yaml:"limits"`

	// RedactKeys are object keys (case and separators ignored; a key
	// ending in one as its last words matches too) whose values are
	// replaced by "[REDACTED]" in every agent- or client-supplied object
	// reaching a client, the journal or a thread's record (scope:
	// config/REFERENCE.md, mapping/redact.go). Default: password, token, secret, api_key, apikey,
	// authorization. An empty list turns redaction off.
	RedactKeys []string `yaml:"redactKeys"`
}

// Team strategies (Team.Strategy).
const (
	StrategyRouter     = "router"
	StrategyParallel   = "parallel"
	StrategySequential = "sequential"
)

// Team is several agents answering as one.
type Team struct {
	// Name identifies the team in routes (/agents/{name}), like an agent's:
	// required, unique among agents and teams, ^[a-z0-9][a-z0-9_-]{0,62}$.
	Name string `yaml:"name"`

	// Description is shown in GET /agents. Optional.
	Description string `yaml:"description"`

	// Strategy says how a user turn reaches the members: "router" (one
	// member per run: forwardedProps.agent, else the best match of the text
	// against the members' skills), "parallel" (every member at once) or
	// "sequential" (a pipeline: each member's answer is the next member's
	// input). Required.
	Strategy string `yaml:"strategy"`

	// Members are names from agents: (not teams), each at most once.
	// Required: at least one.
	Members []string `yaml:"members"`

	// Allow lists the principals that may use the team. Optional; absent:
	// every authenticated principal. Needs auth.
	Allow []string `yaml:"allow"`
}

// Log configures the bridge's logs.
type Log struct {
	// Format is "text" (default: key=value lines, for people) or "json" (one
	// object per line, for log pipelines).
	Format string `yaml:"format"`

	// Level is the least severe level written: "debug", "info" (default),
	// "warn" or "error".
	Level string `yaml:"level"`
}

// Tracing configures OpenTelemetry tracing: a span per run and per A2A call,
// and the W3C trace context (traceparent) read from run requests and sent to
// agents.
type Tracing struct {
	// Exporter is "none" (default: no spans, no traceparent read or sent),
	// "otlp-http" or "otlp-grpc".
	Exporter string `yaml:"exporter"`

	// Endpoint is the OTLP collector's http(s) URL (http:// is plaintext); for
	// otlp-http a URL without a path gets /v1/traces. Default "": the
	// OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT variables, else localhost:4318
	// (HTTP) or localhost:4317 (gRPC). Only with an exporter.
	Endpoint string `yaml:"endpoint"`

	// SampleRatio is the share of new traces recorded, from 0 to 1. Default 1.
	// A request that carries a traceparent keeps its caller's sampling decision.
	SampleRatio float64 `yaml:"sampleRatio"`
}

// Store selects the thread/journal store backend.
type Store struct {
	// Kind is "embedded" (default: a single file that survives restarts),
	// "memory" (lost on exit; for tests and demos) or "redis" (shared by many
	// bridge instances behind a load balancer).
	Kind string `yaml:"kind"`

	// Path is the embedded store's file. Default "./data/bridge.db", relative to
	// the working directory. Used only when Kind is "embedded".
	Path string `yaml:"path"`

	// URL is the Redis server, redis://[user:password@]host:port[/db],
	// rediss://… for TLS or unix:///path.sock, or a primary watched by
	// Sentinel, redis-sentinel://[user:password@]host:port[,host:port…]/master[/db]
	// (rediss-sentinel:// for TLS; the hosts are the Sentinels, the
	// credentials the primary's). With Kind "redis", exactly one of URL,
	// Sentinel and Cluster is required; rejected with any other kind. No
	// default.
	URL string `yaml:"url"`

	// Sentinel is a primary watched by Sentinel, field by field (instead of
	// a redis-sentinel:// URL). Unset by default.
	Sentinel StoreSentinel `yaml:"sentinel"`

	// Cluster lists seed nodes (host:port) of a Redis Cluster; the bridge
	// discovers the rest. Unset by default.
	Cluster []string `yaml:"cluster"`

	// Username, Password and TLS are the Redis data nodes' ACL user,
	// password and whether to use TLS, with Sentinel or Cluster (a URL
	// carries its own, so they are rejected with one). Default none, none,
	// false.
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	TLS      bool   `yaml:"tls"`

	// WaitReplicas, when above 0, makes every journal append and thread
	// write wait (Redis WAIT) until that many replicas have it, so a
	// failover loses no event a client was shown; a write the replicas do
	// not confirm within WaitTimeout fails. Default 0 (do not wait). Must
	// be >= 0.
	WaitReplicas int64 `yaml:"waitReplicas"`

	// WaitTimeout bounds WaitReplicas' wait. Default 1s. Must be > 0 when
	// WaitReplicas is set.
	WaitTimeout Duration `yaml:"waitTimeout"`

	// Lease is how long a run's claim on its thread lasts without renewal when
	// the store is shared (redis): the owning instance renews it every
	// Lease/3, and once it lapses (the instance died) another instance adopts
	// the run. Default 15s. Must be >= 1s. Memory and embedded stores have one
	// writer and ignore it.
	Lease Duration `yaml:"lease"`

	// Retention says how long threads are kept.
	Retention Retention `yaml:"retention"`
}

// Retention bounds how long the store keeps threads.
type Retention struct {
	// IdleThreadTTL, when above 0, deletes a thread without a run in
	// progress once it has had no activity for that long: a background
	// sweep every minute (or every IdleThreadTTL, when shorter) deletes up
	// to 100 such threads per sweep, each only if unchanged since it was
	// found (safe with many instances on Redis). Its streams end as on
	// DELETE. Default 0: threads are kept until deleted. Must be >= 0.
	IdleThreadTTL Duration `yaml:"idleThreadTTL"`
}

// StoreSentinel names a Redis primary watched by Sentinel.
type StoreSentinel struct {
	// Master is the name the Sentinels know the primary by. Required in a
	// sentinel block. No default.
	Master string `yaml:"master"`

	// Addrs are the Sentinels, host:port (26379 is Sentinel's usual port).
	// Required in a sentinel block. No default.
	Addrs []string `yaml:"addrs"`

	// Username and Password are the Sentinels' own credentials, when they
	// require AUTH (the primary's are store.username and store.password).
	// Default none.
	Username string `yaml:"username"`
	Password string `yaml:"password"`

	// DB is the Redis database number. Default 0. Must be >= 0.
	DB int64 `yaml:"db"`
}

// Set reports whether a sentinel block was given.
func (s StoreSentinel) Set() bool {
	return s.Master != "" || len(s.Addrs) > 0 || s.Username != "" || s.Password != "" || s.DB != 0
}

// Server holds the HTTP server's limits and timeouts. All durations are YAML
// strings such as "10s" or "2m".
type Server struct {
	// MaxBodyBytes is the largest accepted request body, in bytes; larger bodies
	// get 413. Default 1048576 (1 MiB). Must be > 0.
	MaxBodyBytes int64 `yaml:"maxBodyBytes"`

	// MaxInlineBytes bounds one inline file, in bytes, in both directions:
	// a user's inline media part above it is refused (413), and an agent's
	// raw file part above it reaches the client as a description without
	// its bytes. Default 1048576 (1 MiB). Must be > 0.
	MaxInlineBytes int64 `yaml:"maxInlineBytes"`

	// ReadHeaderTimeout bounds reading a request's headers (http.Server.ReadHeaderTimeout).
	// Default 10s. Must be > 0.
	ReadHeaderTimeout Duration `yaml:"readHeaderTimeout"`

	// IdleTimeout is how long an idle keep-alive connection stays open
	// (http.Server.IdleTimeout). Default 120s. Must be > 0.
	IdleTimeout Duration `yaml:"idleTimeout"`

	// KeepAlive is the interval between ": keep-alive" comments on an open SSE
	// stream, so that proxies do not drop quiet streams. Default 15s. Must be > 0.
	KeepAlive Duration `yaml:"keepAlive"`

	// ShutdownGrace is how long in-flight streams may take to finish after
	// SIGTERM before they are cut with a final event. Default 10s. Must be > 0.
	ShutdownGrace Duration `yaml:"shutdownGrace"`

	// CORSOrigins are the browser origins allowed to call the bridge, each
	// "scheme://host[:port]" (no path), or "*" for any. Default none: no CORS
	// headers are sent, so only same-origin pages and non-browser clients can call.
	// The same list decides which browser pages may open a WebSocket (with
	// none, only pages of the bridge's own host).
	CORSOrigins []string `yaml:"corsOrigins"`

	// ClientQueue bounds the events waiting to be written to one
	// WebSocket connection (an SSE stream needs none: its events are read
	// from the journal as it writes). Default 32. Must be > 0.
	ClientQueue int64 `yaml:"clientQueue"`

	// SlowClientTimeout is how long a client may leave the bridge's
	// writes untaken (a WebSocket queue full, an SSE write blocked) before
	// it is dropped; its runs go on, and it can reconnect and resume after
	// the last event id it saw. Default 10s. Must be > 0.
	SlowClientTimeout Duration `yaml:"slowClientTimeout"`

	// WSPingInterval is how often WebSocket clients are pinged; one silent
	// for twice as long is dropped. Default 30s. Must be > 0.
	WSPingInterval Duration `yaml:"wsPingInterval"`

	// WSReadLimit is the largest WebSocket message a client may send, in
	// bytes; a larger one closes the connection with 1009. Default 1052672
	// (1 MiB + 4 KiB: a run frame wraps a RunAgentInput). Must be > 0.
	WSReadLimit int64 `yaml:"wsReadLimit"`

	// WSMaxStreams bounds the runs and subscriptions one WebSocket
	// connection carries at once; WSMaxStreamsPerPrincipal those of one
	// principal over all its connections. A run or subscribe frame above
	// either is answered RUN_ERROR too_many_streams. Defaults 32 and 4096.
	// Must be > 0.
	WSMaxStreams             int `yaml:"wsMaxStreams"`
	WSMaxStreamsPerPrincipal int `yaml:"wsMaxStreamsPerPrincipal"`
}

// Agent is one remote A2A agent.
type Agent struct {
	// Name identifies the agent in routes (/agents/{name}) and logs. Required,
	// unique, matching ^[a-z0-9][a-z0-9_-]{0,62}$. No default.
	Name string `yaml:"name"`

	// URL is the agent's base URL (http or https); its card is read from
	// {URL}/.well-known/agent-card.json. Required unless Card is set.
	URL string `yaml:"url"`

	// Card is an explicit agent card URL (http or https), for agents whose card
	// is not at the well-known path. Optional; no default.
	Card string `yaml:"card"`

	// Description replaces the card's description in GET /agents. Optional;
	// default "" (use the card's).
	Description string `yaml:"description"`

	// Headers are sent on every call to this agent (for example Authorization).
	// Values usually come from ${ENV}. Optional; default none. Names must be
	// valid HTTP header names; values must not contain CR, LF or NUL.
	Headers map[string]string `yaml:"headers"`

	// Transports is the preference order among the transports the card offers:
	// "JSONRPC", "HTTP+JSON", "GRPC". Optional; default empty, meaning the
	// card's preferred transport.
	Transports []string `yaml:"transports"`

	// Timeouts bound the calls made to this agent.
	Timeouts Timeouts `yaml:"timeouts"`

	// Poll sets the polling backoff for agents whose card says they cannot stream.
	Poll Poll `yaml:"poll"`

	// StatusText says where the text of A2A status-update messages goes:
	// "auto" (default: assistant text when the agent answers there — more
	// status text follows, or the task completes with nothing else — and
	// progress beside the answer when an artifact answers or the task asks),
	// "message" (always assistant text), "activity", "reasoning" or "none".
	// The answer appears exactly once whatever the policy.
	StatusText string `yaml:"statusText"`

	// InterruptTTL is how long a pending interrupt (input or auth required)
	// waits for a resume before it expires. Default 0: never expires. Must be >= 0.
	InterruptTTL Duration `yaml:"interruptTTL"`

	// StateKey is the one key of the AG-UI shared state the bridge owns for
	// this agent; the client's other keys are never touched. Default "a2a".
	StateKey string `yaml:"stateKey"`

	// A2UI says when the bridge activates the A2UI extension
	// (https://a2ui.org/a2a-extension/a2ui/v0.8, v0.9, v0.9.1, v1.0) on this agent's
	// calls: "auto" (default: for protocol 1.0 clients, when the card lists a
	// version), "on" (for every client; older ones get CUSTOM a2ui events;
	// v0.8 when the card lists none) or "off".
	A2UI string `yaml:"a2ui"`

	// ADKReliability says whether the bridge activates ADK Python's A2A
	// extension "for improved reliability"
	// (https://a2a-adk/a2a-extension/new-integration) on every call to this
	// agent: "auto" (default: when the agent's card declares it) or "off".
	// An ADK server given it stops duplicating user messages in the task
	// history, stops turning outputs into thoughts and keeps sub-agent
	// output. It is never sent to an agent whose card does not declare it.
	ADKReliability string `yaml:"adkReliability"`

	// A2UICatalogs are the A2UI catalog ids announced to the agent as the
	// client's a2uiClientCapabilities when the client sends none. Optional;
	// default: the activated version's standard catalog (which the web
	// console renders). Each must be non-empty.
	A2UICatalogs []string `yaml:"a2uiCatalogs"`

	// Allow lists the principals that may use the agent (others get 403,
	// and GET /agents does not list it). Optional; absent: every
	// authenticated principal. Needs auth.
	Allow []string `yaml:"allow"`

	// Auth holds the credentials presented to the agent; where each goes
	// is read from the agent card's security schemes.
	Auth AgentAuth `yaml:"auth"`

	// Trust says which hosts the agent's card may send the bridge to and
	// which card signatures it requires.
	Trust Trust `yaml:"trust"`
}

// AgentAuth is what the bridge presents to one agent on every call (never on
// the card fetch). Secrets come from ${ENV}; none is ever logged.
type AgentAuth struct {
	// Bearer is a token sent as "Authorization: Bearer ..." when the card
	// declares an http Bearer scheme (or no scheme at all). Default "".
	Bearer string `yaml:"bearer"`

	// APIKey is sent where the card's apiKey scheme says: in the header,
	// query parameter or cookie it names. Default "".
	APIKey string `yaml:"apiKey"`

	// OAuth2 obtains tokens with the client-credentials grant for an oauth2
	// (or openIdConnect) scheme of the card. Unset (no clientId) by default.
	OAuth2 OAuth2 `yaml:"oauth2"`

	// ForwardCallerToken sends the Authorization header of the AG-UI request
	// that started a run to the agent for that run's calls, instead of any
	// configured Authorization. Default false.
	ForwardCallerToken bool `yaml:"forwardCallerToken"`
}

// OAuth2 is a client-credentials grant.
type OAuth2 struct {
	// TokenURL is the token endpoint (http(s)). Default "": the tokenUrl of
	// the card's clientCredentials flow, which must then be on the agent's
	// host or in trust.allowHosts, since the client secret is sent there.
	TokenURL string `yaml:"tokenURL"`
	// ClientID and ClientSecret identify the bridge. Both required when
	// oauth2 is set.
	ClientID     string `yaml:"clientId"`
	ClientSecret string `yaml:"clientSecret"`
	// Scopes are requested with each token. Default none.
	Scopes []string `yaml:"scopes"`
}

// Set reports whether an OAuth2 grant is configured.
func (o OAuth2) Set() bool {
	return o.ClientID != "" || o.ClientSecret != "" || o.TokenURL != "" || len(o.Scopes) > 0
}

// Trust limits what an agent's card can make the bridge do.
type Trust struct {
	// AllowHosts are hosts ("host" or "host:port") that the card's
	// interfaces, its OAuth2 token URL and redirects may lead to besides the
	// scheme, host and port of url (and card). Default none.
	AllowHosts []string `yaml:"allowHosts"`

	// TrustedKeys, when set, require the card to carry a signature (A2A
	// v1.0 §8.4) that verifies with one of these keys; each entry is a file
	// (PEM public keys or certificates, a JWKS or a JWK) or inline PEM.
	// Default none: signatures are not checked.
	TrustedKeys []string `yaml:"trustedKeys"`

	// MaxCardBytes bounds the card's size. Default 1048576 (1 MiB). Must be > 0.
	MaxCardBytes int64 `yaml:"maxCardBytes"`
}

// Timeouts bound the work done against one agent. Durations are YAML strings such as "30s".
type Timeouts struct {
	// Run bounds a whole run, from the first call to the final event. Default 10m. Must be > 0.
	Run Duration `yaml:"run"`

	// Idle bounds the time without progress (no event from the agent) during a
	// run. Default 2m. Must be > 0.
	Idle Duration `yaml:"idle"`

	// Request bounds a single unary call such as GetTask, CancelTask or a card
	// fetch. Default 30s. Must be > 0.
	Request Duration `yaml:"request"`
}

// Poll is the exponential backoff used to poll a non-streaming agent's task.
type Poll struct {
	// Initial is the first delay between polls. Default 250ms. Must be > 0 and <= Max.
	Initial Duration `yaml:"initial"`

	// Max caps the delay between polls. Default 5s. Must be > 0.
	Max Duration `yaml:"max"`
}

// Default returns a Config holding every default and no agents.
func Default() *Config {
	return &Config{
		Listen: DefaultListen,
		Store:  Store{Kind: DefaultStoreKind, Path: DefaultStorePath, Lease: DefaultStoreLease, WaitTimeout: DefaultStoreWaitTimeout},
		Server: Server{
			MaxBodyBytes:             DefaultMaxBodyBytes,
			MaxInlineBytes:           DefaultMaxInlineBytes,
			ReadHeaderTimeout:        DefaultReadHeaderTimeout,
			IdleTimeout:              DefaultIdleTimeout,
			KeepAlive:                DefaultKeepAlive,
			ShutdownGrace:            DefaultShutdownGrace,
			ClientQueue:              DefaultClientQueue,
			SlowClientTimeout:        DefaultSlowClientTimeout,
			WSPingInterval:           DefaultWSPingInterval,
			WSReadLimit:              DefaultWSReadLimit,
			WSMaxStreams:             DefaultWSMaxStreams,
			WSMaxStreamsPerPrincipal: DefaultWSPrincipalStreams,
		},
		Log:     Log{Format: DefaultLogFormat, Level: DefaultLogLevel},
		Tracing: Tracing{Exporter: DefaultTracingExporter, SampleRatio: DefaultSampleRatio},
		Auth:    Auth{JWT: JWT{Leeway: DefaultJWTLeeway, Refresh: DefaultJWKSRefresh}},
		Limits: Limits{MaxMessages: DefaultMaxMessages, MaxStateBytes: DefaultMaxStateBytes,
			MaxEventBytes: DefaultMaxEventBytes, MaxRunBytes: DefaultMaxRunBytes,
			MaxThreadJournalBytes: DefaultMaxThreadJournalBytes, MaxA2UIActionBytes: DefaultMaxA2UIActionBytes},
		RedactKeys: slices.Clone(DefaultRedactKeys),
	}
}

// defaultAgent returns an Agent holding every per-agent default.
func defaultAgent() Agent {
	return Agent{
		Timeouts: Timeouts{
			Run:     DefaultRunTimeout,
			Idle:    DefaultIdleRunTimeout,
			Request: DefaultRequestTimeout,
		},
		Poll:       Poll{Initial: DefaultPollInitial, Max: DefaultPollMax},
		StatusText: DefaultStatusText,
		StateKey:   DefaultStateKey,
		A2UI:       A2UIAuto,
		// Spelled as A2UI's "auto": the same word for "when the card says so".
		ADKReliability: A2UIAuto,
		Trust:          Trust{MaxCardBytes: DefaultMaxCardBytes},
	}
}

// ApplyDefaults sets every zero-valued field that has a default to that
// default, for a Config built in code. Store.Path is defaulted only when the
// store is embedded. Fields whose default is zero or empty are left alone.
//
// [Parse] does not need it: keys absent from the file already get their
// defaults there, while a key explicitly set to zero keeps that value, so that
// Validate rejects it instead of it being silently replaced.
func (c *Config) ApplyDefaults() {
	d := Default()
	setString(&c.Listen, d.Listen)
	setString(&c.Store.Kind, d.Store.Kind)
	if c.Store.Kind == StoreEmbedded {
		setString(&c.Store.Path, d.Store.Path)
	}
	setDuration(&c.Store.Lease, d.Store.Lease)
	setDuration(&c.Store.WaitTimeout, d.Store.WaitTimeout)
	if c.Server.MaxBodyBytes == 0 {
		c.Server.MaxBodyBytes = d.Server.MaxBodyBytes
	}
	if c.Server.MaxInlineBytes == 0 {
		c.Server.MaxInlineBytes = d.Server.MaxInlineBytes
	}
	setDuration(&c.Server.ReadHeaderTimeout, d.Server.ReadHeaderTimeout)
	setDuration(&c.Server.IdleTimeout, d.Server.IdleTimeout)
	setDuration(&c.Server.KeepAlive, d.Server.KeepAlive)
	setDuration(&c.Server.ShutdownGrace, d.Server.ShutdownGrace)
	setDuration(&c.Server.SlowClientTimeout, d.Server.SlowClientTimeout)
	setDuration(&c.Server.WSPingInterval, d.Server.WSPingInterval)
	if c.Server.ClientQueue == 0 {
		c.Server.ClientQueue = d.Server.ClientQueue
	}
	if c.Server.WSReadLimit == 0 {
		c.Server.WSReadLimit = d.Server.WSReadLimit
	}
	if c.Server.WSMaxStreams == 0 {
		c.Server.WSMaxStreams = d.Server.WSMaxStreams
	}
	if c.Server.WSMaxStreamsPerPrincipal == 0 {
		c.Server.WSMaxStreamsPerPrincipal = d.Server.WSMaxStreamsPerPrincipal
	}
	for i := range c.Agents {
		c.Agents[i].applyDefaults()
	}
	setDuration(&c.Auth.JWT.Leeway, d.Auth.JWT.Leeway)
	setDuration(&c.Auth.JWT.Refresh, d.Auth.JWT.Refresh)
	for _, f := range []struct {
		v *int64
		d int64
	}{
		{&c.Limits.MaxMessages, d.Limits.MaxMessages},
		{&c.Limits.MaxStateBytes, d.Limits.MaxStateBytes},
		{&c.Limits.MaxEventBytes, d.Limits.MaxEventBytes},
		{&c.Limits.MaxRunBytes, d.Limits.MaxRunBytes},
		{&c.Limits.MaxThreadJournalBytes, d.Limits.MaxThreadJournalBytes},
		{&c.Limits.MaxA2UIActionBytes, d.Limits.MaxA2UIActionBytes},
	} {
		if *f.v == 0 {
			*f.v = f.d
		}
	}
	if c.RedactKeys == nil {
		c.RedactKeys = d.RedactKeys
	}
	setString(&c.Log.Format, d.Log.Format)
	setString(&c.Log.Level, d.Log.Level)
	if c.Tracing.Exporter == "" {
		// A zero ratio is a legitimate choice (only callers' sampled
		// traces), so it is defaulted only with the whole section unset.
		c.Tracing.Exporter = d.Tracing.Exporter
		if c.Tracing.SampleRatio == 0 {
			c.Tracing.SampleRatio = d.Tracing.SampleRatio
		}
	}
}

func (a *Agent) applyDefaults() {
	d := defaultAgent()
	setDuration(&a.Timeouts.Run, d.Timeouts.Run)
	setDuration(&a.Timeouts.Idle, d.Timeouts.Idle)
	setDuration(&a.Timeouts.Request, d.Timeouts.Request)
	setDuration(&a.Poll.Initial, d.Poll.Initial)
	setDuration(&a.Poll.Max, d.Poll.Max)
	setString(&a.StatusText, d.StatusText)
	setString(&a.StateKey, d.StateKey)
	setString(&a.A2UI, d.A2UI)
	setString(&a.ADKReliability, d.ADKReliability)
	if a.Trust.MaxCardBytes == 0 {
		a.Trust.MaxCardBytes = d.Trust.MaxCardBytes
	}
}

func setString(p *string, def string) {
	if *p == "" {
		*p = def
	}
}

func setDuration(p *Duration, def Duration) {
	if *p == 0 {
		*p = def
	}
}

// UnmarshalYAML decodes an agent on top of the per-agent defaults, so keys
// missing from the file keep their default while keys set explicitly (even to
// zero) keep the written value for Validate to judge.
func (a *Agent) UnmarshalYAML(n *yaml.Node) error {
	type plain Agent // no methods: avoids recursing into UnmarshalYAML
	p := plain(defaultAgent())
	if err := n.Decode(&p); err != nil {
		return err
	}
	*a = Agent(p)
	return nil
}

// Duration is a time.Duration written in YAML as a Go duration string:
// "250ms", "30s", "2m", "1h30m". A bare number is rejected (except 0), since
// its unit would be a guess.
type Duration time.Duration

// ParseDuration parses s as [time.ParseDuration] does, with an error that
// shows the expected form.
func ParseDuration(s string) (Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: want a number with a unit, such as 500ms, 30s, 2m or 1h", s)
	}
	return Duration(d), nil
}

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d as time.Duration does ("1m30s").
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML reads a duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a duration must be a string such as 30s", n.Line)
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = v
	return nil
}

// MarshalYAML writes d as a duration string, so a Config round-trips.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

var (
	_ yaml.Unmarshaler = (*Duration)(nil)
	_ yaml.Marshaler   = Duration(0)
	_ yaml.Unmarshaler = (*Agent)(nil)
)

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
