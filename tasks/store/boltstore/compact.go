package boltstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// compactTxBytes is how much Compact copies per write transaction: bounds
// its memory whatever the file's size.
const compactTxBytes = 64 << 20

// Compact rewrites the store file at path without its free pages, and
// returns its size before and after. A bbolt file never shrinks by itself:
// deleted threads leave free pages that later writes reuse, but the file
// keeps its largest size. It must run with no bridge using the file (it
// fails, after about a second, when one has it open): it copies every
// bucket into a new file beside it, syncs it, and renames it over path,
// so a crash midway leaves the old file as it was.
func Compact(path string) (before, after int64, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, 0, fmt.Errorf("compact %s: %w", path, err)
	}
	src, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: boltLockTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return 0, 0, fmt.Errorf("compact %s: another process has it open (stop the bridge first): %w", path, err)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("compact %s: %w", path, err)
	}
	defer src.Close()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".compact")
	_ = os.Remove(tmp) // left by a compaction cut short
	dst, err := bbolt.Open(tmp, st.Mode().Perm(), &bbolt.Options{Timeout: boltLockTimeout, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType})
	if err != nil {
		return 0, 0, fmt.Errorf("compact %s: %w", path, err)
	}
	if err := bbolt.Compact(dst, src, compactTxBytes); err != nil {
		dst.Close()
		os.Remove(tmp)
		return 0, 0, fmt.Errorf("compact %s: %w", path, err)
	}
	if err := dst.Close(); err != nil { // syncs
		os.Remove(tmp)
		return 0, 0, fmt.Errorf("compact %s: %w", path, err)
	}
	src.Close()
	if err := os.Rename(tmp, path); err != nil {
		return 0, 0, fmt.Errorf("compact %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // the rename itself survives a crash
		d.Close()
	}
	out, err := os.Stat(path)
	if err != nil {
		return 0, 0, fmt.Errorf("compact %s: %w", path, err)
	}
	return st.Size(), out.Size(), nil
}
