// Package smallfs gives tests a small filesystem of their own to fill: a
// tmpfs of a chosen size mounted on a directory the test made, so that a
// full disk is the kernel's ENOSPC, not a simulation. Mounting needs root
// (CAP_SYS_ADMIN), which `make test` and CI have; elsewhere Mount fails
// with ErrCannotMount and the test says it skipped.
package smallfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrCannotMount: this process may not mount a filesystem.
var ErrCannotMount = errors.New("smallfs: cannot mount a tmpfs here (needs root on Linux)")

// Fill writes a file named name in dir until the filesystem is full
// (ENOSPC) and returns its path; removing it frees the space again.
func Fill(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return path, nil
			}
			return "", fmt.Errorf("smallfs: fill %s: %w", path, err)
		}
	}
}
