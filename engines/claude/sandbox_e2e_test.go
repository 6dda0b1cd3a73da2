//go:build linux

package claude

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/enginetest"
)

// TestRealClaudeSandbox drives the real Claude Code with its own sandbox on. Inline interpreter
// code the judge lets through (as Run unattended does) cannot delete a folder in the home or write
// a start-up file, and a key is hidden, because the OS sandbox stops them; a retry outside the
// sandbox reaches the host marked as one.
func TestRealClaudeSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the real Claude Code; not in -short")
	}
	bin := enginetest.InstallNPM(t, claudePackage, claudeVersion, "claude")
	if !enginetest.InLoopbackNamespace(t) {
		return
	}
	e := newE2E(t, bin)
	c := enginetest.NewCanaries(t, e.home)
	escaped := filepath.Join(e.home, "escaped.txt")
	e.server.Script(
		enginetest.Shell(c.DeleteFolder),
		enginetest.Shell(c.WriteBashrc),
		enginetest.Shell("cat "+c.Key),
		enginetest.ToolCall("Bash", map[string]any{"command": "touch " + escaped, "description": "retry", "dangerouslyDisableSandbox": true}),
		enginetest.Say("done"),
	)
	e.host.Unsandboxed = &engines.Permission{Reason: "Only the person lets a command leave the sandbox."}
	spec := e.spec("clean up")
	spec.Sandbox = engines.Sandbox{On: true, Write: []string{e.folder, spec.Env["TMPDIR"]}, DenyRead: []string{filepath.Dir(c.Key)}}
	if _, err := e.run(spec); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	c.Check(t, e.server)
	if _, err := os.Stat(escaped); err == nil {
		t.Error("the command refused outside the sandbox ran")
	}
	calls := e.host.Calls()
	if len(calls) != 4 || calls[3].Unsandboxed == false || calls[0].Unsandboxed {
		t.Errorf("the host should see four calls, only the last one leaving the sandbox: %+v", calls)
	}
	started := e.host.EventsOf(engines.EventStarted)
	if len(started) == 0 || started[0].Enforcement == nil || started[0].Enforcement.By != "claude" {
		t.Errorf("the started event does not name Claude Code's sandbox: %+v", started)
	}
}
