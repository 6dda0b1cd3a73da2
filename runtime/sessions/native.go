package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
)

// nativeRetry is how often deletions still owed at the agent are tried again while the runtime
// runs; they are tried at start and right after each deletion too.
const nativeRetry = 30 * time.Minute

// nativeTimeout bounds one agent's deletion of one session.
const nativeTimeout = 2 * time.Minute

// KindNativeDeleted is the event of a session deleted at the agent too (or found impossible to);
// subject the session id.
const KindNativeDeleted = "session.native_deleted"

type nativeEvent struct {
	Session string `json:"session"`
	Agent   string `json:"agent"`
	Native  string `json:"native"` // done, failed
	Text    string `json:"text"`
}

// owed is a deletion still to carry out at the agent.
type owed struct {
	id, agent, agentSession, lastRun, folder string
}

// DeleteOwed deletes at each agent the sessions deleted in Ensemble that the agent still has
// (native "owed"), with the agent's own way (engines.SessionDeleter): done when it is gone there,
// failed when the agent has no way or the id cannot be its; left owed, to try again, on any other
// error. It returns how many it settled.
func (s *Service) DeleteOwed(ctx context.Context) (int, error) {
	if len(s.opts.Drivers) == 0 {
		return 0, nil
	}
	list, err := s.owedDeletions(ctx)
	if err != nil {
		return 0, err
	}
	settled := 0
	for _, o := range list {
		native, text := s.deleteNative(ctx, o)
		if native == "" {
			continue
		}
		err := s.w.Exec(ctx, func(t *ledger.Tx) error {
			if _, err := t.ExecContext(ctx, `UPDATE session_deletions SET native = ? WHERE session_id = ? AND native = 'owed'`,
				native, o.id); err != nil {
				return err
			}
			return t.Emit(KindNativeDeleted, o.id, nativeEvent{Session: o.id, Agent: o.agent, Native: native, Text: text})
		})
		if err != nil {
			return settled, fmt.Errorf("sessions: record the deletion of %s at the agent: %w", o.id, err)
		}
		settled++
	}
	return settled, nil
}

// owedDeletions lists the deletions still owed at the agents, oldest first, each with the folder
// its last run worked in (which jobs keeps).
func (s *Service) owedDeletions(ctx context.Context) ([]owed, error) {
	var list []owed
	var runs []string
	rows, err := s.db.QueryContext(ctx, `SELECT session_id, agent, agent_session, last_run
		FROM session_deletions WHERE native = 'owed' ORDER BY deleted_at`)
	if err != nil {
		return nil, fmt.Errorf("sessions: list deletions owed: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var o owed
		if err := rows.Scan(&o.id, &o.agent, &o.agentSession, &o.lastRun); err != nil {
			return nil, fmt.Errorf("sessions: list deletions owed: %w", err)
		}
		list, runs = append(list, o), append(runs, o.lastRun)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: list deletions owed: %w", err)
	}
	rows.Close()
	dirs, err := jobs.WorkDirs(ctx, s.db, runs)
	if err != nil {
		return nil, fmt.Errorf("sessions: list deletions owed: %w", err)
	}
	for i := range list {
		list[i].folder = dirs[list[i].lastRun]
	}
	return list, nil
}

// deleteNative deletes one session at its agent: "done" or "failed" with a sentence, or "" to
// try again later.
func (s *Service) deleteNative(ctx context.Context, o owed) (native, text string) {
	if o.agentSession == "" {
		return "done", "The agent kept no session of its own to delete."
	}
	d := s.opts.Drivers[o.agent]
	del, ok := d.(engines.SessionDeleter)
	if !ok {
		return "failed", fmt.Sprintf("Ensemble cannot delete %s's own copy of the session; it is still in %s.", o.agent, o.agent)
	}
	ctx, cancel := context.WithTimeout(ctx, nativeTimeout)
	defer cancel()
	err := del.DeleteSession(ctx, o.agentSession, o.folder)
	switch {
	case err == nil:
		return "done", fmt.Sprintf("Deleted %s's own copy of the session too.", o.agent)
	case errors.Is(err, engines.ErrNoSession), errors.Is(err, errors.ErrUnsupported):
		return "failed", fmt.Sprintf("Ensemble cannot delete %s's own copy of the session (%v); it is still in %s.", o.agent, err, o.agent)
	}
	s.log.Warn("sessions: deleting a session at its agent failed; trying again later", "session", o.id, "agent", o.agent, "err", err)
	return "", ""
}

// kickNative asks the deleter loop to look at owed deletions now.
func (s *Service) kickNative() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// deleteOwedLoop carries out owed deletions at start, after each deletion and every nativeRetry.
func (s *Service) deleteOwedLoop() {
	defer s.wg.Done()
	for {
		if n, err := s.DeleteOwed(s.ctx); err != nil && s.ctx.Err() == nil {
			s.log.Warn("sessions: deleting sessions at their agents failed", "err", err)
		} else if n > 0 {
			s.log.Info("sessions: deleted at their agents", "sessions", n)
		}
		select {
		case <-s.ctx.Done():
			return
		case <-s.kick:
		case <-time.After(nativeRetry):
		}
	}
}
