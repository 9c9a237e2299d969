package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/a2a-agui-bridge/bridge/config"
)

// healthTimeout bounds `bridge health`: a container runtime runs it every
// few seconds, and a bridge that does not answer /healthz within it is as
// unhealthy as one that answers 503.
const healthTimeout = 3 * time.Second

// cmdHealth asks a running bridge's /healthz and exits 0 on 200, 1
// otherwise. It exists for images without a shell or curl: their
// HEALTHCHECK runs the bridge binary itself. The address comes from
// --url, or from the listen of the --config the server was started with.
func cmdHealth(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	rawURL := fs.String("url", "", "the `URL` to GET (default http://<listen>/healthz, listen from --config or "+config.DefaultListen+")")
	path := fs.String("config", "", "YAML config `file` of the bridge to ask: its listen address is used")
	if err := fs.Parse(args); err != nil {
		return err
	}
	target := *rawURL
	if target == "" {
		listen := config.DefaultListen
		if *path != "" {
			cfg, err := config.Load(*path)
			if err != nil {
				return exitError{2, err.Error()}
			}
			listen = cfg.Listen
		}
		target = "http://" + dialable(listen) + "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return exitError{2, fmt.Sprintf("health: %v", err)}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return exitError{1, fmt.Sprintf("health: %v", err)}
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return exitError{1, fmt.Sprintf("health: %s answered %s", target, resp.Status)}
	}
	fmt.Fprintln(stdout, "ok")
	return nil
}

// dialable turns a listen address into one to connect to: a server
// listening on every interface (":8080", "0.0.0.0:8080", "[::]:8080") is
// asked on loopback, from inside its own container or host.
func dialable(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		if ip.Is6() {
			return net.JoinHostPort("::1", port)
		}
		return net.JoinHostPort("127.0.0.1", port)
	}
	return listen
}
