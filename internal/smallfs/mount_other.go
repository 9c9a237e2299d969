//go:build !linux

package smallfs

// Mount is Linux's only.
func Mount(dir string, size int64) (unmount func() error, err error) {
	return nil, ErrCannotMount
}
