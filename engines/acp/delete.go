package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
)

var _ engines.SessionDeleter = (*Driver)(nil)

// deleteTimeout bounds the agent's delete command.
const deleteTimeout = time.Minute

// sessionID is what the agents' session ids look like (ses_…, UUIDs); anything else never reaches
// a command line.
var sessionID = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z_-]{3,127}$`)

// DeleteSession deletes the session with the agent's own command (Profile.Delete) in folder, with
// a run's environment. An agent without one cannot: the error says so.
func (d *Driver) DeleteSession(ctx context.Context, id, folder string) error {
	p := d.p
	if p.Delete == nil {
		return fmt.Errorf("%s has no command that deletes its sessions: %w", p.Title, errors.ErrUnsupported)
	}
	if !sessionID.MatchString(id) {
		return fmt.Errorf("%s: %q: %w", p.Name, id, engines.ErrNoSession)
	}
	home, _ := os.UserHomeDir()
	bin := d.bin
	if bin == "" {
		var err error
		if bin, err = find(p, home, ""); err != nil {
			return err
		}
	}
	dir := folder
	if fi, err := os.Stat(dir); dir == "" || err != nil || !fi.IsDir() {
		dir = home // the folder is gone: the agent's sessions of it may still be there
	}
	ctx, cancel := context.WithTimeout(ctx, deleteTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, p.Delete.Args(id)...)
	agentproc.OwnGroup(cmd)
	cmd.Cancel = func() error { return agentproc.SignalGroup(cmd, true) }
	cmd.WaitDelay = time.Second
	cmd.Dir = dir
	cmd.Env = agentEnv(d.environ(), p, engines.Spec{}, "")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code, err = ee.ExitCode(), nil
	}
	if err != nil {
		return fmt.Errorf("%s: delete session %s: %w", p.Name, id, err)
	}
	if !p.Delete.Gone(out.String(), code) {
		return fmt.Errorf("%s: delete session %s: exit %d: %s", p.Name, id, code, strings.TrimSpace(agentproc.FirstLine(out.String())))
	}
	return nil
}
