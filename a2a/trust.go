package a2a

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
)

// ErrCardUntrusted: the card was fetched but the bridge refuses it: an
// interface (or OAuth2 token URL) points off the agent's host, the card is
// too large, a redirect left the host, or its signature does not verify
// against the configured trusted keys.
var ErrCardUntrusted = errors.New("a2a: agent not trusted")

// TrustError says why a card was refused. Its text names hosts and key ids,
// never a credential, so it may be shown in health and `bridge check`.
type TrustError struct{ Reason string }

func (e *TrustError) Error() string { return e.Reason }
func (e *TrustError) Unwrap() error { return ErrCardUntrusted }

// DefaultMaxCardBytes bounds an agent card when Options.MaxCardBytes is 0.
const DefaultMaxCardBytes = 1 << 20

// hostGuard decides which URLs the bridge may contact for one agent: the
// origins (scheme, host, port) of the configured URL and card URL, plus the
// hosts an operator allowed. A card is data from the network: without this
// an agent (or whoever can change its card) could point the bridge, and the
// credentials it attaches, at any host it can reach (SSRF).
type hostGuard struct {
	origins []origin // configured URL and card URL
	allow   []allowed
}

type origin struct{ scheme, host, port string }

// allowed is one Options.AllowHosts entry: host, or host:port.
type allowed struct{ host, port string }

func newHostGuard(o Options) (*hostGuard, error) {
	g := &hostGuard{}
	for _, raw := range []string{o.URL, o.CardURL} {
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			// Not quoted: a URL may carry a password.
			return nil, errors.New("the agent URL is not an absolute URL")
		}
		g.origins = append(g.origins, originOf(u))
	}
	for _, h := range o.AllowHosts {
		a, err := parseAllowed(h)
		if err != nil {
			return nil, err
		}
		g.allow = append(g.allow, a)
	}
	return g, nil
}

// parseAllowed reads "host" or "host:port" ("[::1]:8080" for IPv6).
func parseAllowed(s string) (allowed, error) {
	if s == "" || strings.Contains(s, "/") {
		return allowed{}, fmt.Errorf("allowed host %q: want host or host:port", s)
	}
	if h, p, err := net.SplitHostPort(s); err == nil {
		return allowed{host: strings.ToLower(h), port: p}, nil
	}
	return allowed{host: strings.ToLower(strings.Trim(s, "[]"))}, nil
}

func originOf(u *url.URL) origin {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = defaultPort(scheme)
	}
	return origin{scheme: scheme, host: strings.ToLower(u.Hostname()), port: port}
}

func defaultPort(scheme string) string {
	if scheme == "https" || scheme == "grpcs" {
		return "443"
	}
	return "80"
}

// allowHostPort reports whether host:port is on an allowed host. Scheme is
// "" for gRPC targets: they are compared by host only, since a gRPC server
// needs a listener of its own and so never shares the port the card is
// served on (a2a-go and the demo agents run it on another port of the same
// host). HTTP interfaces must match the origin exactly.
func (g *hostGuard) allowHostPort(scheme, host, port string) bool {
	host = strings.ToLower(host)
	for _, o := range g.origins {
		if o.host == host && (scheme == "" || (o.port == port && scheme == o.scheme)) {
			return true
		}
	}
	for _, a := range g.allow {
		if a.host == host && (a.port == "" || a.port == port) {
			return true
		}
	}
	return false
}

// checkHTTP checks an http(s) URL.
func (g *hostGuard) checkHTTP(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	o := originOf(u)
	if o.scheme != "http" && o.scheme != "https" {
		return fmt.Errorf("%q is not an http(s) URL", raw)
	}
	if !g.allowHostPort(o.scheme, o.host, o.port) {
		return fmt.Errorf("%s is not the agent's host %s (list it in allowHosts to trust it)", net.JoinHostPort(o.host, o.port), g.describe())
	}
	return nil
}

func (g *hostGuard) describe() string {
	var s []string
	for _, o := range g.origins {
		s = append(s, o.scheme+"://"+net.JoinHostPort(o.host, o.port))
	}
	return strings.Join(s, " or ")
}

// checkCard refuses a card any of whose interfaces the bridge could dial
// points off the allowed hosts. The whole card is refused rather than the interface dropped, so
// that an operator sees the problem instead of a quietly different binding.
func (g *hostGuard) checkCard(card *AgentCard) error {
	for _, iface := range card.SupportedInterfaces {
		var err error
		switch iface.ProtocolBinding {
		case a2asdk.TransportProtocolGRPC:
			err = g.checkGRPC(iface.URL)
		case a2asdk.TransportProtocolJSONRPC, a2asdk.TransportProtocolHTTPJSON:
			err = g.checkHTTP(iface.URL)
		default:
			continue // a binding the bridge never dials
		}
		if err != nil {
			return &TrustError{Reason: fmt.Sprintf("card interface %s: %v", iface.ProtocolBinding, err)}
		}
	}
	return nil
}

// checkGRPC checks a gRPC target the way grpcTarget will dial it.
func (g *hostGuard) checkGRPC(raw string) error {
	target, useTLS := grpcTarget(raw)
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return fmt.Errorf("gRPC target %q is not host:port", raw)
	}
	_ = useTLS // the scheme is not compared for gRPC: its URLs rarely carry one
	if !g.allowHostPort("", host, port) {
		return fmt.Errorf("%s is not the agent's host %s (list it in allowHosts to trust it)", net.JoinHostPort(host, port), g.describe())
	}
	return nil
}

// guardRedirects returns a copy of hc that follows a redirect only to an
// allowed host: a card or agent answering 302 to another host would
// otherwise lead the bridge, with the agent's headers, anywhere.
func (g *hostGuard) guardRedirects(hc *http.Client) *http.Client {
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := g.checkHTTP(req.URL.String()); err != nil {
			return &TrustError{Reason: "redirect refused: " + err.Error()}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}
