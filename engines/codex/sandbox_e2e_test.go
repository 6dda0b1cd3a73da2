//go:build linux

package codex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestRealCodexSandbox drives the real Codex with its own sandbox on: commands the judge lets
// through cannot delete a folder in the home or write a start-up file, and a request to run a
// command outside the sandbox (require_escalated) reaches the host marked as one.
func TestRealCodexSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Codex; not in -short")
	}
	bin := enginetest.InstallNPM(t, codexPackage, codexVersion, "codex")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	e := newE2E(t, bin)
	home := t.TempDir()
	c := enginetest.NewCanaries(t, home)
	escaped := filepath.Join(home, "escaped.txt")
	e.server.Script(
		enginetest.Shell(c.DeleteFolder),
		enginetest.Shell(c.WriteBashrc),
		enginetest.ToolCall("exec_command", map[string]any{"cmd": "touch " + escaped, "sandbox_permissions": "require_escalated", "justification": "I need to write outside"}),
		enginetest.Say("done"),
	)
	e.host.Unsandboxed = &engines.Permission{Reason: "Only the person lets a command leave the sandbox."}
	spec := e.spec("clean up")
	spec.Sandbox = engines.Sandbox{On: true, Write: []string{e.folder}}
	if _, err := e.run(spec); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	// Codex's sandbox hides no file (the judge refuses reading keys), so only the writes count here.
	if _, err := os.Stat(filepath.Join(c.Victim, "keep.txt")); err != nil {
		t.Errorf("the folder in the home was deleted: %v", err)
	}
	if b, _ := os.ReadFile(c.Bashrc); string(b) != "# mine\n" {
		t.Errorf(".bashrc was written: %q", b)
	}
	if _, err := os.Stat(escaped); err == nil {
		t.Error("the command refused outside the sandbox ran")
	}
	calls := e.host.Calls()
	if len(calls) != 3 || calls[0].Unsandboxed || calls[1].Unsandboxed || !calls[2].Unsandboxed {
		t.Errorf("the host should see three calls, only the last leaving the sandbox: %+v", calls)
	}
	started := e.host.EventsOf(engines.EventStarted)
	if len(started) == 0 || started[0].Enforcement == nil || started[0].Enforcement.By != "codex" {
		t.Errorf("the started event does not name Codex's sandbox: %+v", started)
	}
}
