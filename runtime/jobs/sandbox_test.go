package jobs

import (
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/judge"
)

func TestSandboxStopped(t *testing.T) {
	for out, want := range map[string]bool{
		"OSError: [Errno 30] Read-only file system: '/home/me/.bashrc'": true,
		"EROFS: read-only file system, open '/home/me/x'":               true,
		"rm: cannot remove 'x': Operation not permitted":                true,
		"touch: cannot touch 'x': Permission denied":                    false, // the file's own mode, not the sandbox
		"ok": false,
	} {
		if got := sandboxStopped(out); got != want {
			t.Errorf("sandboxStopped(%q) = %v, want %v", out, got, want)
		}
	}
}

func TestSandboxOf(t *testing.T) {
	js := judge.Settings{Folder: "/w/run", Home: "/home/me", DataDir: "/home/me/.local/share/ensemble", Writable: []string{"/tmp/r"}}
	if sb := sandboxOf(Settings{Sandbox: false}, js); sb.On || len(sb.Write) > 0 {
		t.Errorf("sandbox off: %+v", sb)
	}
	sb := sandboxOf(Settings{Sandbox: true, Internet: false}, js)
	if !sb.On || sb.Internet || len(sb.Write) != 2 || len(sb.DenyRead) == 0 || len(sb.DenyWrite) == 0 {
		t.Errorf("sandbox on, internet off: %+v", sb)
	}
	r := &run{unsandboxed: map[string]bool{"item1": true}, enforcement: &engines.Enforcement{By: "claude", Note: "x"}}
	if e := r.receiptOfLocked("item1/approval2"); e == nil || e.By != "" || e.Note != unsandboxedReceipt.Note {
		t.Errorf("an allowed escape's receipt: %+v", e)
	}
	if e := r.receiptOfLocked("item2"); e == nil || e.By != "claude" {
		t.Errorf("a step's receipt: %+v", e)
	}
}
