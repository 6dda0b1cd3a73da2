package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	target := filepath.Join(dir, "target.txt")
	os.WriteFile(target, []byte("keep"), 0o644)
	os.Symlink(target, path)
	if err := Write(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the link's target was written through: %q", b)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the file: %v, %v", fi, err)
	}
	if es, _ := os.ReadDir(dir); len(es) != 2 {
		t.Fatalf("left behind: %v", es)
	}
}
