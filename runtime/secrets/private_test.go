//go:build !windows

package secrets

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDataFolderAndKeysArePrivate: the data folder is closed to everyone but its owner (0700) even
// when it existed before with wider access, and secret.key and seal-key.json are 0600, set back if
// something loosened them.
func TestDataFolderAndKeysArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755) // whatever the umask
	open(t, dir)
	check := func(when string) {
		t.Helper()
		for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, KeyFile): 0o600, filepath.Join(dir, SealKeyFile): 0o600} {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("%s: %s is %o, want %o", when, filepath.Base(path), got, want)
			}
		}
	}
	check("first start")
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Join(dir, KeyFile), 0o644)
	os.Chmod(filepath.Join(dir, SealKeyFile), 0o644)
	open(t, dir)
	check("after being loosened")
}
