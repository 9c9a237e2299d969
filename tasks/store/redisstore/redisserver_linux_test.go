package redisstore_test

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the test's redis-server when the test
// binary dies without running its cleanup (a test timeout's panic, a
// kill), so no server is left listening.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
