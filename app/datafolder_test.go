//go:build !windows

package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestDataFolderIsPrivate: the runtime's data folder is 0700 even when it existed before with wider
// access, and api.json, which holds the launch token, is 0600.
func TestDataFolderIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ensemble")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: dir, Addr: "127.0.0.1:0",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	for path, want := range map[string]os.FileMode{dir: 0o700, apiFilePath(dir): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s is %o, want %o", filepath.Base(path), got, want)
		}
	}
}
