package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Problem is one bad field.
type Problem struct {
	// Path locates the field: "listen", "store.url", "agents[1].timeouts.run",
	// "agents[0].headers.Authorization". Empty for the document itself.
	Path string
	// Message says what is wrong, for example "must be an http(s) URL".
	Message string
	// Line is the 1-based line in the YAML source, or 0 when unknown (a Config
	// built in code, or a default value).
	Line int
}

// String formats p as "path: message", with " (line N)" when the line is
// known; a problem of the document itself (a YAML syntax error) as
// "line N: message".
func (p Problem) String() string {
	path := p.Path
	if path == "" {
		if p.Line > 0 {
			return "line " + strconv.Itoa(p.Line) + ": " + p.Message
		}
		path = "(document)"
	}
	s := path + ": " + p.Message
	if p.Line > 0 {
		s += " (line " + strconv.Itoa(p.Line) + ")"
	}
	return s
}

// ValidationError lists every problem found in a configuration. Parse, Load
// and Validate return it (as *ValidationError) whenever the configuration
// itself is at fault, so callers can list the problems with errors.As.
type ValidationError struct {
	// Source names where the configuration came from (the file given to
	// Load); empty otherwise. It prefixes every line of Error().
	Source   string
	Problems []Problem
}

// Error lists the problems one per line.
func (e *ValidationError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		if e.Source != "" {
			b.WriteString(e.Source)
			b.WriteString(": ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// problems collects Problems in the order they are found.
type problems []Problem

func (ps *problems) add(path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return &ValidationError{Problems: ps}
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// Validate reports every bad field of c, each with its path, as a
// *ValidationError; nil when c is usable. It expects defaults to be in place
// (Parse and Load do that; a Config built in code should call ApplyDefaults
// first): a zero duration, for instance, is reported rather than defaulted.
func (c *Config) Validate() error {
	var ps problems
	if c.Listen == "" {
		ps.add("listen", "required (host:port, for example 127.0.0.1:8080)")
	} else if _, port, err := net.SplitHostPort(c.Listen); err != nil || !validPort(port) {
		ps.add("listen", "must be host:port with a numeric port, for example 127.0.0.1:8080 or :8080 (got %q)", c.Listen)
	}
	c.Store.validate(&ps)
	c.Server.validate(&ps)
	c.Log.validate(&ps)
	c.Tracing.validate(&ps)
	c.Auth.validate(&ps)
	c.Limits.validate(&ps)
	validateRedactKeys(&ps, c.RedactKeys)

	if len(c.Agents) == 0 {
		ps.add("agents", "at least one agent is required")
	}
	first := map[string]int{} // agent name → index of its first use
	for i := range c.Agents {
		a := &c.Agents[i]
		path := fmt.Sprintf("agents[%d]", i)
		a.validate(&ps, path)
		validateAllow(&ps, path+".allow", a.Allow, &c.Auth)
		if a.Name == "" {
			continue
		}
		if j, dup := first[a.Name]; dup {
			ps.add(path+".name", "duplicate agent name %q (also agents[%d].name)", a.Name, j)
		} else {
			first[a.Name] = i
		}
	}
	teams := map[string]int{}
	for i := range c.Teams {
		t := &c.Teams[i]
		path := fmt.Sprintf("teams[%d]", i)
		t.validate(&ps, path, first)
		validateAllow(&ps, path+".allow", t.Allow, &c.Auth)
		if t.Name == "" {
			continue
		}
		if j, dup := first[t.Name]; dup {
			ps.add(path+".name", "%q is already an agent's name (agents[%d].name): teams and agents share /agents/{name}", t.Name, j)
		} else if j, dup := teams[t.Name]; dup {
			ps.add(path+".name", "duplicate team name %q (also teams[%d].name)", t.Name, j)
		} else {
			teams[t.Name] = i
		}
	}
	return ps.err()
}

func (t *Team) validate(ps *problems, path string, agents map[string]int) {
	switch {
	case t.Name == "":
		ps.add(path+".name", "required")
	case !nameRE.MatchString(t.Name):
		ps.add(path+".name", "must match %s: lowercase letters, digits, - and _, at most 63 characters (got %q)", nameRE, t.Name)
	}
	switch t.Strategy {
	case StrategyRouter, StrategyParallel, StrategySequential:
	case "":
		ps.add(path+".strategy", "required: router, parallel or sequential")
	default:
		ps.add(path+".strategy", "must be router, parallel or sequential (got %q)", t.Strategy)
	}
	if len(t.Members) == 0 {
		ps.add(path+".members", "at least one member is required")
	}
	seen := map[string]int{}
	for i, m := range t.Members {
		mp := fmt.Sprintf("%s.members[%d]", path, i)
		if _, ok := agents[m]; !ok {
			hint := ""
			if c := closest(m, sortedKeys(agents)); c != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", c)
			}
			ps.add(mp, "no agent is named %q%s: a team's members are the names of agents listed under agents:, not teams", m, hint)
		}
		if j, dup := seen[m]; dup {
			ps.add(mp, "%q is already %s.members[%d]", m, path, j)
		}
		seen[m] = i
	}
}

func (s *Store) validate(ps *problems) {
	redisTargets := 0
	for _, set := range []bool{s.URL != "", s.Sentinel.Set(), s.Cluster != nil} {
		if set {
			redisTargets++
		}
	}
	switch s.Kind {
	case StoreEmbedded:
		if s.Path == "" {
			ps.add("store.path", "required when kind is embedded")
		}
	case StoreMemory:
	case StoreRedis:
		if redisTargets == 0 {
			ps.add("store.url", "required when kind is redis (or store.sentinel, or store.cluster)")
		}
	default:
		ps.add("store.kind", "must be one of embedded, memory, redis (got %q)", s.Kind)
	}
	// Renewal runs every lease/3: below a second, a slow Redis round trip
	// or a GC pause would let a live run's lease lapse and be adopted.
	if s.Lease < Duration(time.Second) {
		ps.add("store.lease", "must be at least 1s (got %s)", s.Lease)
	}
	if s.WaitReplicas < 0 {
		ps.add("store.waitReplicas", "must be >= 0 (got %d)", s.WaitReplicas)
	}
	if s.Retention.IdleThreadTTL < 0 {
		ps.add("store.retention.idleThreadTTL", "must be >= 0 (got %s)", s.Retention.IdleThreadTTL)
	}
	if s.WaitReplicas > 0 && s.WaitTimeout <= 0 {
		ps.add("store.waitTimeout", "must be > 0 (got %s)", s.WaitTimeout)
	}
	if redisTargets == 0 {
		for _, f := range []struct {
			path string
			set  bool
		}{{"store.username", s.Username != ""}, {"store.password", s.Password != ""}, {"store.tls", s.TLS}} {
			if f.set {
				ps.add(f.path, "only used with store.sentinel or store.cluster")
			}
		}
		return
	}
	if s.Kind != StoreRedis {
		// Most likely "kind: redis" was forgotten; running on a local store
		// instead would silently stop instances from sharing threads.
		for _, f := range []struct {
			path string
			set  bool
		}{{"store.url", s.URL != ""}, {"store.sentinel", s.Sentinel.Set()}, {"store.cluster", s.Cluster != nil}} {
			if f.set {
				ps.add(f.path, "only used when kind is redis (kind is %q)", s.Kind)
			}
		}
		return
	}
	if redisTargets > 1 {
		ps.add("store", "name one Redis: url, sentinel or cluster, not several")
	}
	if s.URL != "" && (s.Username != "" || s.Password != "" || s.TLS) {
		ps.add("store.url", "carries its own credentials and TLS (the scheme rediss://): store.username, store.password and store.tls are for sentinel and cluster")
	}
	if s.URL != "" {
		validateRedisURL(ps, s.URL)
	}
	if s.Sentinel.Set() {
		if s.Sentinel.Master == "" {
			ps.add("store.sentinel.master", "required: the name the Sentinels know the primary by")
		}
		if len(s.Sentinel.Addrs) == 0 {
			ps.add("store.sentinel.addrs", "required: the Sentinels, host:port")
		}
		validateAddrs(ps, "store.sentinel.addrs", s.Sentinel.Addrs)
		if s.Sentinel.DB < 0 {
			ps.add("store.sentinel.db", "must be >= 0 (got %d)", s.Sentinel.DB)
		}
	}
	if s.Cluster != nil {
		if len(s.Cluster) == 0 {
			ps.add("store.cluster", "needs at least one seed node, host:port")
		}
		validateAddrs(ps, "store.cluster", s.Cluster)
	}
}

func validateAddrs(ps *problems, path string, addrs []string) {
	for i, a := range addrs {
		if host, port, err := net.SplitHostPort(a); err != nil || host == "" || port == "" {
			ps.add(fmt.Sprintf("%s[%d]", path, i), "must be host:port (got %q)", a)
		}
	}
}

func validateRedisURL(ps *problems, raw string) {
	if scheme, rest, ok := strings.Cut(raw, "://"); ok && (scheme == "redis-sentinel" || scheme == "rediss-sentinel") {
		authority, path, _ := strings.Cut(rest, "/")
		if at := strings.LastIndex(authority, "@"); at >= 0 {
			authority = authority[at+1:]
		}
		for a := range strings.SplitSeq(authority, ",") {
			if host, port, err := net.SplitHostPort(a); err != nil || host == "" || port == "" {
				ps.add("store.url", "a %s:// URL lists Sentinels as host:port,host:port (got %q)", scheme, a)
			}
		}
		if master, _, _ := strings.Cut(strings.Trim(path, "/"), "/"); master == "" || strings.ContainsAny(path, "?#") {
			ps.add("store.url", "a %s:// URL names the primary and nothing more: %s://host:26379/mymaster[/db]", scheme, scheme)
		}
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		ps.add("store.url", "must be a redis://, rediss://, unix:// or redis-sentinel:// URL (%s)", urlError(err))
	case u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "unix":
		ps.add("store.url", "must be a redis://, rediss://, unix:// or redis-sentinel:// URL (got scheme %q)", u.Scheme)
	case u.Scheme == "unix" && u.Path == "":
		ps.add("store.url", "a unix:// URL needs a socket path")
	case u.Scheme != "unix" && u.Host == "":
		ps.add("store.url", "must name a host, as in redis://host:6379")
	}
}

func (s *Server) validate(ps *problems) {
	if s.MaxInlineBytes <= 0 {
		ps.add("server.maxInlineBytes", "must be > 0 (got %d)", s.MaxInlineBytes)
	}
	if s.MaxBodyBytes <= 0 {
		ps.add("server.maxBodyBytes", "must be > 0 (got %d)", s.MaxBodyBytes)
	}
	positive(ps, "server.readHeaderTimeout", s.ReadHeaderTimeout)
	positive(ps, "server.idleTimeout", s.IdleTimeout)
	positive(ps, "server.keepAlive", s.KeepAlive)
	positive(ps, "server.shutdownGrace", s.ShutdownGrace)
	positive(ps, "server.slowClientTimeout", s.SlowClientTimeout)
	positive(ps, "server.wsPingInterval", s.WSPingInterval)
	if s.ClientQueue <= 0 {
		ps.add("server.clientQueue", "must be > 0 (got %d)", s.ClientQueue)
	}
	if s.WSReadLimit <= 0 {
		ps.add("server.wsReadLimit", "must be > 0 (got %d)", s.WSReadLimit)
	}
	if s.WSMaxStreams <= 0 {
		ps.add("server.wsMaxStreams", "must be > 0 (got %d)", s.WSMaxStreams)
	}
	if s.WSMaxStreamsPerPrincipal <= 0 {
		ps.add("server.wsMaxStreamsPerPrincipal", "must be > 0 (got %d)", s.WSMaxStreamsPerPrincipal)
	}
	for i, o := range s.CORSOrigins {
		if o == "*" {
			continue
		}
		if !validOrigin(o) {
			ps.add(fmt.Sprintf("server.corsOrigins[%d]", i),
				`must be "*" or an origin: scheme://host[:port] with no path, as in https://app.example.com (got %q)`, o)
		}
	}
}

func (l *Log) validate(ps *problems) {
	switch l.Format {
	case LogText, LogJSON:
	default:
		ps.add("log.format", "must be one of text, json (got %q)", l.Format)
	}
	switch l.Level {
	case LogDebug, LogInfo, LogWarn, LogError:
	default:
		ps.add("log.level", "must be one of debug, info, warn, error (got %q)", l.Level)
	}
}

func (t *Tracing) validate(ps *problems) {
	switch t.Exporter {
	case TracingNone:
		if t.Endpoint != "" {
			// Most likely the exporter was forgotten: say so rather than
			// silently export nothing.
			ps.add("tracing.endpoint", "only used with exporter otlp-http or otlp-grpc (exporter is none)")
		}
	case TracingOTLPHTTP, TracingOTLPGRPC:
		if t.Endpoint != "" && !httpURL(t.Endpoint) {
			ps.add("tracing.endpoint", "must be an http(s) URL such as http://otel-collector:4318%s", got(t.Endpoint))
		}
	default:
		ps.add("tracing.exporter", "must be one of none, otlp-http, otlp-grpc (got %q)", t.Exporter)
	}
	if !(t.SampleRatio >= 0 && t.SampleRatio <= 1) { // also NaN
		ps.add("tracing.sampleRatio", "must be between 0 and 1 (got %v)", t.SampleRatio)
	}
}

func (a *Agent) validate(ps *problems, path string) {
	switch {
	case a.Name == "":
		ps.add(path+".name", "required")
	case !nameRE.MatchString(a.Name):
		ps.add(path+".name", "must match %s: lowercase letters, digits, - and _, at most 63 characters (got %q)", nameRE, a.Name)
	}
	switch {
	case a.URL == "" && a.Card == "":
		ps.add(path+".url", "required unless card is set")
	case a.URL != "" && !httpURL(a.URL):
		ps.add(path+".url", "must be an http(s) URL%s", got(a.URL))
	}
	if a.Card != "" && !httpURL(a.Card) {
		ps.add(path+".card", "must be an http(s) URL%s", got(a.Card))
	}
	for _, k := range sortedKeys(a.Headers) {
		hp := path + ".headers." + k
		if !validHeaderName(k) {
			ps.add(hp, "not a valid HTTP header name")
		}
		if strings.ContainsAny(a.Headers[k], "\r\n\x00") {
			ps.add(hp, "value must not contain CR, LF or NUL")
		}
	}
	seen := map[string]bool{}
	for i, t := range a.Transports {
		tp := fmt.Sprintf("%s.transports[%d]", path, i)
		// Cards spell them in capitals, people often do not: any case is
		// the same transport (the a2a package compares them so too).
		switch canon := strings.ToUpper(t); canon {
		case TransportJSONRPC, TransportHTTPJSON, TransportGRPC:
			if seen[canon] {
				ps.add(tp, "%s is listed twice", canon)
			}
			seen[canon] = true
		default:
			ps.add(tp, "must be one of JSONRPC, HTTP+JSON, GRPC (got %q)", t)
		}
	}
	positive(ps, path+".timeouts.run", a.Timeouts.Run)
	positive(ps, path+".timeouts.idle", a.Timeouts.Idle)
	positive(ps, path+".timeouts.request", a.Timeouts.Request)
	positive(ps, path+".poll.initial", a.Poll.Initial)
	positive(ps, path+".poll.max", a.Poll.Max)
	if a.Poll.Initial > 0 && a.Poll.Max > 0 && a.Poll.Initial > a.Poll.Max {
		ps.add(path+".poll.initial", "must not exceed poll.max (%s > %s)", a.Poll.Initial, a.Poll.Max)
	}
	if a.StateKey == "" {
		ps.add(path+".stateKey", "must not be empty")
	}
	switch a.StatusText {
	case StatusTextAuto, StatusTextMessage, StatusTextActivity, StatusTextReasoning, StatusTextNone:
	default:
		ps.add(path+".statusText", "must be one of auto, message, activity, reasoning, none (got %q)", a.StatusText)
	}
	switch a.A2UI {
	case A2UIAuto, A2UIOn, A2UIOff:
	default:
		ps.add(path+".a2ui", "must be one of auto, on, off (got %q)", a.A2UI)
	}
	switch a.ADKReliability {
	case A2UIAuto, A2UIOff:
	default:
		ps.add(path+".adkReliability", "must be one of auto, off (got %q)", a.ADKReliability)
	}
	for i, c := range a.A2UICatalogs {
		if strings.TrimSpace(c) == "" {
			ps.add(fmt.Sprintf("%s.a2uiCatalogs[%d]", path, i), "must not be empty")
		}
	}
	if a.InterruptTTL < 0 {
		ps.add(path+".interruptTTL", "must not be negative (got %s; 0 means never expire)", a.InterruptTTL)
	}
	a.Auth.validate(ps, path+".auth", a.Headers)
	a.Trust.validate(ps, path+".trust")
}

// validate never quotes a secret: values come from the environment.
func (au *AgentAuth) validate(ps *problems, path string, headers map[string]string) {
	for _, f := range []struct{ key, v string }{{"bearer", au.Bearer}, {"apiKey", au.APIKey}, {"oauth2.clientId", au.OAuth2.ClientID}, {"oauth2.clientSecret", au.OAuth2.ClientSecret}} {
		if strings.ContainsAny(f.v, "\r\n\x00") {
			ps.add(path+"."+f.key, "must not contain CR, LF or NUL")
		}
	}
	for k := range headers {
		if strings.EqualFold(k, "Authorization") && (au.Bearer != "" || au.OAuth2.Set()) {
			// Two sources for one header: which one wins would be a guess.
			ps.add(path, "headers.%s is set too: give the token in one place", k)
		}
	}
	if au.Bearer != "" && au.OAuth2.Set() {
		ps.add(path+".oauth2", "bearer is set too: use one of bearer and oauth2")
	}
	o := au.OAuth2
	if o.Set() {
		if o.ClientID == "" {
			ps.add(path+".oauth2.clientId", "required with oauth2")
		}
		if o.ClientSecret == "" {
			ps.add(path+".oauth2.clientSecret", "required with oauth2")
		}
		if o.TokenURL != "" && !httpURL(o.TokenURL) {
			ps.add(path+".oauth2.tokenURL", "must be an http(s) URL%s", got(o.TokenURL))
		}
		for i, sc := range o.Scopes {
			if sc == "" || strings.ContainsAny(sc, " \t\r\n\x00\"\\") {
				ps.add(fmt.Sprintf("%s.oauth2.scopes[%d]", path, i), "must be a non-empty scope without spaces, quotes or backslashes (RFC 6749 §3.3)")
			}
		}
	}
}

func (tr *Trust) validate(ps *problems, path string) {
	for i, h := range tr.AllowHosts {
		if !validAllowedHost(h) {
			ps.add(fmt.Sprintf("%s.allowHosts[%d]", path, i), "must be host or host:port, without scheme or path (got %q)", h)
		}
	}
	for i, k := range tr.TrustedKeys {
		kp := fmt.Sprintf("%s.trustedKeys[%d]", path, i)
		t := strings.TrimSpace(k)
		switch {
		case t == "":
			ps.add(kp, "must not be empty")
		case strings.HasPrefix(t, "-----BEGIN") || strings.HasPrefix(t, "{"):
			// Inline PEM or JWK(S): parsed when the agent is set up.
		default:
			if _, err := os.Stat(k); err != nil {
				ps.add(kp, "cannot read the key file: %v", errors.Unwrap(err))
			}
		}
	}
	if tr.MaxCardBytes <= 0 {
		ps.add(path+".maxCardBytes", "must be > 0 (got %d)", tr.MaxCardBytes)
	}
}

func validAllowedHost(s string) bool {
	if s == "" || strings.ContainsAny(s, "/@?# ") {
		return false
	}
	host := s
	if h, p, err := net.SplitHostPort(s); err == nil {
		if !validPort(p) || h == "" {
			return false
		}
		host = h
	}
	return strings.Trim(host, "[]") != ""
}

func positive(ps *problems, path string, d Duration) {
	switch {
	case d < 0:
		ps.add(path, "must not be negative (got %s)", d)
	case d == 0:
		ps.add(path, "must be > 0")
	}
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 0 && n <= 65535
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Opaque == ""
}

func validOrigin(s string) bool {
	u, err := url.Parse(s)
	// A browser's Origin header never has a path, query or trailing slash, so
	// an entry with one could never match.
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.Path == "" && u.RawQuery == "" && u.Fragment == "" && u.User == nil && !strings.HasSuffix(s, "/")
}

// got quotes a bad URL for an error message, with any password redacted;
// it shows nothing when the URL does not parse, as it may then hide one anywhere.
func got(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (got %q)", u.Redacted())
}

// urlError drops the URL itself from a url.Parse error: it may hold a password.
func urlError(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return "malformed URL"
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
