package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Duration
		wantErr bool
	}{
		{in: "30s", want: Duration(30 * time.Second)},
		{in: "2m", want: Duration(2 * time.Minute)},
		{in: "250ms", want: Duration(250 * time.Millisecond)},
		{in: "1h30m", want: Duration(90 * time.Minute)},
		{in: "0", want: 0},
		{in: "-5s", want: Duration(-5 * time.Second)}, // parses; Validate rejects it
		{in: "30", wantErr: true},                     // unit would be a guess
		{in: "5 minutes", wantErr: true},
		{in: "", wantErr: true},
		{in: "s", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseDuration(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseDuration(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ParseDuration(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestDurationYAML(t *testing.T) {
	t.Parallel()
	var v struct {
		D Duration `yaml:"d"`
	}
	if err := yaml.Unmarshal([]byte("d: 1m30s"), &v); err != nil {
		t.Fatal(err)
	}
	if v.D.Std() != 90*time.Second {
		t.Errorf("decoded %v, want 1m30s", v.D)
	}
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("d: 1m30s\n", string(out)); diff != "" {
		t.Errorf("Marshal (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"d: 90", "d: [1s]", "d: {a: b}"} {
		if err := yaml.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("Unmarshal(%q) succeeded, want an error", bad)
		}
	}
}

func TestApplyDefaults(t *testing.T) {
	t.Parallel()
	c := &Config{Agents: []Agent{{Name: "a", URL: "http://a"}}}
	c.ApplyDefaults()
	want := Default()
	want.Agents = []Agent{defaultAgent()}
	want.Agents[0].Name, want.Agents[0].URL = "a", "http://a"
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("ApplyDefaults (-want +got):\n%s", diff)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate after ApplyDefaults: %v", err)
	}

	// Set fields are kept, and the store path is only defaulted for embedded.
	c = &Config{Listen: ":9", Store: Store{Kind: StoreMemory}, Agents: []Agent{{StatusText: StatusTextNone, Timeouts: Timeouts{Run: Duration(time.Hour)}}}}
	c.ApplyDefaults()
	if c.Listen != ":9" || c.Store.Path != "" || c.Agents[0].StatusText != StatusTextNone || c.Agents[0].Timeouts.Run.Std() != time.Hour {
		t.Errorf("ApplyDefaults overwrote set fields: %+v", c)
	}
}

// The documented defaults are the ones in force.
func TestDefaultValues(t *testing.T) {
	t.Parallel()
	d := Default()
	a := defaultAgent()
	got := map[string]any{
		"listen":                   d.Listen,
		"store.kind":               d.Store.Kind,
		"store.path":               d.Store.Path,
		"store.lease":              d.Store.Lease.Std(),
		"server.maxBodyBytes":      d.Server.MaxBodyBytes,
		"server.readHeaderTimeout": d.Server.ReadHeaderTimeout.Std(),
		"server.idleTimeout":       d.Server.IdleTimeout.Std(),
		"server.keepAlive":         d.Server.KeepAlive.Std(),
		"server.shutdownGrace":     d.Server.ShutdownGrace.Std(),
		"timeouts.run":             a.Timeouts.Run.Std(),
		"timeouts.idle":            a.Timeouts.Idle.Std(),
		"timeouts.request":         a.Timeouts.Request.Std(),
		"poll.initial":             a.Poll.Initial.Std(),
		"poll.max":                 a.Poll.Max.Std(),
		"statusText":               a.StatusText,
		"interruptTTL":             a.InterruptTTL.Std(),
	}
	want := map[string]any{
		"listen":                   "127.0.0.1:8080",
		"store.kind":               "embedded",
		"store.path":               "./data/bridge.db",
		"store.lease":              15 * time.Second,
		"server.maxBodyBytes":      int64(1 << 20),
		"server.readHeaderTimeout": 10 * time.Second,
		"server.idleTimeout":       120 * time.Second,
		"server.keepAlive":         15 * time.Second,
		"server.shutdownGrace":     10 * time.Second,
		"timeouts.run":             10 * time.Minute,
		"timeouts.idle":            2 * time.Minute,
		"timeouts.request":         30 * time.Second,
		"poll.initial":             250 * time.Millisecond,
		"poll.max":                 5 * time.Second,
		"statusText":               "auto",
		"interruptTTL":             time.Duration(0),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}
