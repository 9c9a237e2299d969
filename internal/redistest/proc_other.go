//go:build !linux

package redistest

import "os/exec"

// dieWithParent does nothing where the kernel offers no parent-death
// signal; Stop and the caller's context still end the servers.
func dieWithParent(*exec.Cmd) {}
