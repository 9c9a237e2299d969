package smallfs

import (
	"errors"
	"fmt"
	"syscall"
)

// Mount mounts a tmpfs of size bytes on dir (which must exist) and
// returns the function that unmounts it (lazily: a file still open in it
// does not keep the mount).
func Mount(dir string, size int64) (unmount func() error, err error) {
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			return nil, fmt.Errorf("%w: %v", ErrCannotMount, err)
		}
		return nil, fmt.Errorf("smallfs: mount tmpfs on %s: %w", dir, err)
	}
	return func() error { return syscall.Unmount(dir, syscall.MNT_DETACH) }, nil
}
