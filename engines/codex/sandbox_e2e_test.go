//go:build linux

package codex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestRealCodexSandbox drives the real Codex inside Ensemble's sandbox with its own inside it:
// commands the judge lets through cannot delete a folder in the home or write a start-up file or
// read a key, and a request to run a command outside Codex's sandbox (require_escalated) reaches
// the host marked as one.
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
		enginetest.Shell("cat "+c.Key),
		enginetest.ToolCall("exec_command", map[string]any{"cmd": "touch " + escaped, "sandbox_permissions": "require_escalated", "justification": "I need to write outside"}),
		enginetest.Say("done"),
	)
	e.host.Unsandboxed = &engines.Permission{Reason: "Only the person lets a command leave the sandbox."}
	spec := e.spec("clean up")
	spec.Sandbox = engines.Sandbox{On: true, Write: []string{e.folder, e.tmp}, DenyRead: []string{filepath.Dir(c.Key)}}
	if _, err := e.run(spec); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	c.Check(t, e.server)
	if _, err := os.Stat(escaped); err == nil {
		t.Error("the command refused outside the sandbox ran")
	}
	calls := e.host.Calls()
	if len(calls) != 4 || calls[0].Unsandboxed || calls[1].Unsandboxed || calls[2].Unsandboxed || !calls[3].Unsandboxed {
		t.Errorf("the host should see four calls, only the last leaving the sandbox: %+v", calls)
	}
	started := e.host.EventsOf(engines.EventStarted)
	if len(started) == 0 || started[0].Enforcement == nil || started[0].Enforcement.By != "ensemble" || !started[0].Enforcement.Whole {
		t.Errorf("the started event does not say Ensemble's sandbox holds Codex whole: %+v", started)
	}
}
