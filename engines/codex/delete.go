package codex

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/ensemblework/ensemble/engines"
)

var _ engines.SessionDeleter = (*Driver)(nil)

// threadID is what Codex's thread ids look like (UUIDs).
var threadID = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z-]{7,63}$`)

// DeleteSession deletes a Codex thread with thread/delete, through an app-server of its own. A
// thread Codex does not know is gone already.
func (d *Driver) DeleteSession(ctx context.Context, id, _ string) error {
	if !threadID.MatchString(id) {
		return fmt.Errorf("codex: %q: %w", id, engines.ErrNoSession)
	}
	bin, err := d.binary("", "")
	if err != nil {
		return err
	}
	err = d.appServer(ctx, bin, "", func(ctx context.Context, c *conn) error {
		_, err := c.call(ctx, "thread/delete", map[string]any{"threadId": id})
		return err
	})
	if err != nil && threadGone(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("codex: delete thread %s: %w", id, err)
	}
	return nil
}

// threadGone: Codex's answer says it has no such thread.
func threadGone(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "not found") || strings.Contains(s, "no thread") || strings.Contains(s, "no rollout")
}
