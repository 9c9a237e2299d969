package main

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// TestDemoReplicas (server/scale_e2e_test.go) runs `bridge demo --replicas`
// as a process, with the process helpers of the scale-out tests.

// Bad --replicas and --listen values are usage errors (exit 2) with a
// message naming the flag, before anything starts.
func TestDemoReplicasFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "--replicas", "0"}, "--replicas must be between 1 and 16 (got 0)"},
		{[]string{"demo", "--replicas", "17"}, "--replicas must be between 1 and 16 (got 17)"},
		{[]string{"demo", "--replicas", "2", "--listen", "localhost"}, `demo --listen "localhost"`},
		{[]string{"demo", "--replicas", "2", "--listen", "127.0.0.1:65535"}, "needs a numeric port with 2 free ports"},
	} {
		var out, errOut strings.Builder
		if code := run(t.Context(), tt.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut.String(), tt.want)
		}
	}
}

// TestDemoReplicasPortTaken: a port of the range already taken stops the
// demo before it starts anything, rather than naming a dead instance (or
// another program answering on that port) in the walkthrough.
func TestDemoReplicasPortTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	var out, errOut strings.Builder
	args := []string{"demo", "--replicas", "2", "--listen", fmt.Sprintf("127.0.0.1:%d", port-1)}
	want := "is not free" // port, or port-1 should another program hold it too
	if code := run(t.Context(), args, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), want) {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut.String(), want)
	}
	if out.Len() != 0 {
		t.Errorf("printed a walkthrough anyway:\n%s", out.String())
	}
}
