// Package atomicfile writes a file whole or not at all: a new file beside the old one, synced,
// then renamed over it. A reader never sees half a file, a crash leaves the old one or the new
// one, and a link at the path is replaced, never written through.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write puts b at path with mode perm.
func Write(path string, b []byte, perm fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ensemble-write-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
