package claude

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ensemblework/ensemble/engines/agentproc"

	"github.com/ensemblework/ensemble/engines"
)

var _ engines.SessionDeleter = (*Driver)(nil)

// sessionID is what Claude Code's session ids look like (UUIDs); anything else, a path above
// all, is never made into a file name.
var sessionID = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z-]{7,63}$`)

// DeleteSession deletes a Claude Code session: its transcript (projects/<folder>/<id>.jsonl in
// Claude Code's config folder) and the folder of the same name beside it (its sub-agents' and tool
// results), in whichever project folder holds it.
func (d *Driver) DeleteSession(_ context.Context, id, _ string) error {
	if !sessionID.MatchString(id) {
		return fmt.Errorf("claude: %q: %w", id, engines.ErrNoSession)
	}
	dir := configDir(d.environ())
	if dir == "" {
		return errors.New("claude: delete a session: no home folder to find Claude Code's sessions in")
	}
	found, err := filepath.Glob(filepath.Join(dir, "projects", "*", id+".jsonl"))
	if err != nil {
		return fmt.Errorf("claude: delete session %s: %w", id, err)
	}
	for _, f := range found {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("claude: delete session %s: %w", id, err)
		}
		if err := os.RemoveAll(strings.TrimSuffix(f, ".jsonl")); err != nil {
			return fmt.Errorf("claude: delete session %s: %w", id, err)
		}
	}
	return nil
}

// configDir is Claude Code's config folder in env: CLAUDE_CONFIG_DIR, else ~/.claude.
func configDir(env []string) string {
	if dir := agentproc.ConfigDir(env, "CLAUDE_CONFIG_DIR", ".claude"); dir != "" {
		return dir
	}
	if home, _ := os.UserHomeDir(); home != "" {
		return filepath.Join(home, ".claude")
	}
	return ""
}
