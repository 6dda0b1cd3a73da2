package claude

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ensemblework/ensemble/engines"
)

// TestDeleteSession removes a session's transcript and its folder from whichever project holds
// it, leaves the others, and never takes a path for an id.
func TestDeleteSession(t *testing.T) {
	home := t.TempDir()
	const id = "0b6f2a1e-4c3d-4e5f-8a9b-1c2d3e4f5a6b"
	proj := filepath.Join(home, ".claude", "projects", "-work-my-repo")
	os.MkdirAll(filepath.Join(proj, id, "subagents"), 0o755)
	for _, f := range []string{id + ".jsonl", "other.jsonl", filepath.Join(id, "subagents", "a.jsonl")} {
		os.WriteFile(filepath.Join(proj, f), []byte("{}\n"), 0o600)
	}
	d := New()
	d.environ = func() []string { return []string{"HOME=" + home} }
	if err := d.DeleteSession(context.Background(), id, "/work/my.repo"); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{id + ".jsonl", id} {
		if _, err := os.Stat(filepath.Join(proj, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there: %v", gone, err)
		}
	}
	if _, err := os.Stat(filepath.Join(proj, "other.jsonl")); err != nil {
		t.Errorf("another session went too: %v", err)
	}
	if err := d.DeleteSession(context.Background(), id, ""); err != nil {
		t.Errorf("deleting it again: %v", err)
	}
	for _, bad := range []string{"../../x", "*", ""} {
		if err := d.DeleteSession(context.Background(), bad, ""); !errors.Is(err, engines.ErrNoSession) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// CLAUDE_CONFIG_DIR is where Claude Code keeps them when set.
	cfg := t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "projects", "p"), 0o755)
	os.WriteFile(filepath.Join(cfg, "projects", "p", id+".jsonl"), nil, 0o600)
	d.environ = func() []string { return []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + cfg} }
	if err := d.DeleteSession(context.Background(), id, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cfg, "projects", "p", id+".jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the transcript under CLAUDE_CONFIG_DIR is still there: %v", err)
	}
}
