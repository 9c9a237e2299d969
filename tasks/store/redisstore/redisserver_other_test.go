//go:build !linux

package tasks_test

import "os/exec"

// dieWithParent does nothing here: only Linux offers a parent-death signal,
// and TestMain's cleanup still stops the server.
func dieWithParent(*exec.Cmd) {}
