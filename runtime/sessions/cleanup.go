package sessions

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

// retired reports whether a task no longer needs its session: in Trash for
// cleanup.deletedMinutes (so Undo still finds it before), or done or dropped and untouched for
// cleanup.completedDays. Tasks cannot be pinned yet, so none is kept for that.
func retired(cfg Config, now time.Time, status string, updated time.Time, deleted *time.Time) bool {
	if deleted != nil {
		return now.Sub(*deleted) >= time.Duration(cfg.Cleanup.DeletedMinutes)*time.Minute
	}
	if status == "done" || status == "dropped" {
		return now.Sub(updated) >= time.Duration(cfg.Cleanup.CompletedDays)*24*time.Hour
	}
	return false
}

// Sweep marks deleted the sessions whose every task is retired, and returns how many. A session
// with a run queued or going waits for the next sweep; one with a task still in use is looked at
// again after cleanup.inUseHours. Each sweep looks at no more than cleanup.lookAt sessions and
// deletes at most cleanup.delete. Just before it marks one, inside the write, it checks again that
// the session has the same runs, none of them going, and every task still retired.
//
// Each deletion is recorded with native "owed": [Service.DeleteOwed] deletes the agent's own copy
// of the session after the sweep.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	cfg, now := s.Config(), s.opts.Now()
	w, err := s.load(ctx)
	if err != nil {
		return 0, err
	}
	next := map[string]time.Time{}
	if err := s.each(ctx, `SELECT session_id, next_at FROM session_cleanup`, func(r *sql.Rows) error {
		var id, at string
		if err := r.Scan(&id, &at); err != nil {
			return err
		}
		next[id] = store.ReadTime(at)
		return nil
	}); err != nil {
		return 0, err
	}
	later := map[string]time.Time{}
	looked, deleted := 0, 0
	for _, c := range w.chains {
		if c.deleted != nil || next[c.id].After(now) {
			continue
		}
		if looked >= cfg.Cleanup.LookAt || deleted >= cfg.Cleanup.Delete {
			break
		}
		looked++
		ss := w.describe(c)
		if ss.Status != Idle {
			continue // the next sweep
		}
		if !w.allRetired(c, cfg, now) {
			later[c.id] = now.Add(time.Duration(cfg.Cleanup.InUseHours) * time.Hour)
			continue
		}
		err := s.markDeleted(ctx, ss, "retired", ledger.Actor{Kind: ledger.System}, func(t *ledger.Tx) error {
			return guardRetired(t, c, cfg, now)
		})
		switch {
		case err == nil:
			deleted++
		case err == errSkip:
		default:
			return deleted, err
		}
	}
	if len(later) > 0 {
		err := s.w.Exec(ctx, func(t *ledger.Tx) error {
			for id, at := range later {
				if _, err := t.ExecContext(ctx, `INSERT INTO session_cleanup (session_id, next_at, why) VALUES (?, ?, 'in use')
					ON CONFLICT (session_id) DO UPDATE SET next_at = excluded.next_at, why = excluded.why`,
					id, store.Stamp(at)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

func (w *world) allRetired(c *chain, cfg Config, now time.Time) bool {
	for _, r := range c.runs {
		t := w.tasks[r.task]
		if t == nil {
			continue // its task was purged from Trash: nothing holds the session
		}
		if !retired(cfg, now, t.status, t.updated, t.deleted) {
			return false
		}
	}
	return true
}

// guardRetired checks, inside the write, that the session has the runs it was read with, none of
// them going, and that every task is still retired; otherwise errSkip.
func guardRetired(t *ledger.Tx, c *chain, cfg Config, now time.Time) error {
	ctx := t.Context()
	ids := make([]string, len(c.runs))
	for i, r := range c.runs {
		ids[i] = r.id
	}
	newer, err := jobs.Continuing(ctx, t, ids, c.runs[0].agent)
	if err != nil {
		return err
	}
	if newer > 0 {
		return errSkip
	}
	runs, err := jobs.RunTasks(ctx, t, ids)
	if err != nil {
		return err
	}
	taskIDs := make([]string, len(runs))
	for i, r := range runs {
		taskIDs[i] = r.TaskID
	}
	heads, err := records.TaskHeads(ctx, t, taskIDs, 1)
	if err != nil {
		return err
	}
	tasks := make(map[string]records.TaskHead, len(heads))
	for _, h := range heads {
		tasks[h.ID] = h
	}
	for _, r := range runs {
		if !r.Status.Ended() {
			return errSkip
		}
		h, ok := tasks[r.TaskID]
		if !ok {
			continue // its task was purged from Trash: nothing holds the session
		}
		if !retired(cfg, now, h.Status, h.UpdatedAt, h.DeletedAt) {
			return errSkip
		}
	}
	n := len(runs)
	if n != len(ids) || slices.Contains(ids, "") {
		return errSkip
	}
	return nil
}
