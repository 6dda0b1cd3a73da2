package acp

import (
	"context"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
)

var _ engines.Detector = (*Driver)(nil)

// Detect finds the agent's program and its version. Whether it is signed in shows only when a
// session starts (the run then stops with the sign-in command), so it is reported as unknown.
func (d *Driver) Detect(ctx context.Context, home string) engines.Detection {
	p := d.p
	det := engines.Detection{Name: p.Name, Title: p.Title, Login: p.Login, SignedIn: engines.SignInUnknown}
	bin := d.bin
	if bin == "" {
		var err error
		if bin, err = find(p, home, ""); err != nil {
			det.Problem = err.Error()
			return det
		}
	}
	det.Installed, det.Path = true, bin
	conf, err := d.confinement(ctx, engines.Spec{Sandbox: engines.Sandbox{On: true}})
	det.Sandbox = engines.CheckOf(conf.receipt, err)
	if out, code, err := agentproc.Probe(ctx, bin, home, "--version"); err == nil && code == 0 {
		if v := agentproc.FirstLine(out); len(v) <= 80 {
			det.Version = v
		}
	}
	return det
}
