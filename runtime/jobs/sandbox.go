package jobs

import (
	"strings"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/sandbox"
	"github.com/ensemblework/ensemble/runtime/judge"
)

// sandboxOf is the OS sandbox the run's agent works in: the judge's lines for the settings it
// judges by (js), so the two agree.
func sandboxOf(s Settings, js judge.Settings) engines.Sandbox {
	if !s.Sandbox {
		return engines.Sandbox{}
	}
	p := judge.Sandbox(js, sandbox.OtherHomes(js.Home))
	return engines.Sandbox{On: true, Write: p.Write, DenyWrite: p.DenyWrite, DenyRead: p.DenyRead, AllowRead: p.AllowRead,
		Internet: s.Internet}
}

// unsandboxedReceipt is a step's receipt when the person let the command leave the sandbox.
var unsandboxedReceipt = engines.Enforcement{Note: "This command ran outside the sandbox, as you allowed on Needs me: only the judge stood before it."}

// receiptOf is the sandbox receipt for the step of tool call id.
func (r *run) receiptOfLocked(id string) *engines.Enforcement {
	base, _, _ := strings.Cut(id, "/")
	if r.unsandboxed[id] || r.unsandboxed[base] {
		e := unsandboxedReceipt
		return &e
	}
	if r.enforcement == nil {
		return nil
	}
	e := *r.enforcement
	return &e
}

// sandboxStopped reports output that says the OS sandbox stopped a command.
func sandboxStopped(out string) bool {
	for _, s := range []string{"Read-only file system", "EROFS", "Operation not permitted", "sandbox-exec: ", "deny(1)"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}
