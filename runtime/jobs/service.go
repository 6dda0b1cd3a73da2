package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Start recovers from the last shutdown and starts the queue. Runs that were going (or had been
// started from the queue) when Ensemble stopped are marked interrupted and never started again;
// runs still waiting in the queue go back in line, oldest first.
func (s *Service) Start(ctx context.Context) error {
	var stale []string
	err := s.w.Exec(ctx, func(t *ledger.Tx) error {
		rows, err := t.QueryContext(ctx, `SELECT id FROM jobs WHERE status IN ('running', 'paused')
			OR (status = 'queued' AND started_at IS NOT NULL) ORDER BY created_at`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			stale = append(stale, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		why := "Ensemble stopped while the run was going; it was not started again."
		for _, id := range stale {
			if err := updateJob(t, id, map[string]any{"status": string(Interrupted), "ended_at": store.Stamp(t.Now()), "error": why}); err != nil {
				return err
			}
			if err := t.Emit(KindStatus, id, Trace{RunID: id, Status: Interrupted, Reason: why}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("jobs: recover: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT id, resource_key FROM jobs WHERE status = 'queued' ORDER BY created_at, id")
	if err != nil {
		return fmt.Errorf("jobs: read the queue: %w", err)
	}
	defer rows.Close()
	type queued struct{ id, key string }
	var waiting []queued
	for rows.Next() {
		var q queued
		if err := rows.Scan(&q.id, &q.key); err != nil {
			return fmt.Errorf("jobs: read the queue: %w", err)
		}
		waiting = append(waiting, q)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("jobs: read the queue: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return nil
	}
	s.started = true
	for _, q := range waiting {
		if _, in := s.keys[q.id]; !in {
			s.enqueueLocked(q.id, q.key)
		}
	}
	if len(stale) > 0 {
		s.log.Info("runs interrupted by the last shutdown", "count", len(stale))
	}
	return nil
}

// Close stops every run (they are marked interrupted) and waits for them to record it. Call it
// before closing the store.
func (s *Service) Close() error {
	s.mu.Lock()
	s.closed = true
	for _, r := range s.runs {
		r.halt(errShutdown)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		s.log.Warn("runs did not end in time at shutdown")
	}
	s.cancel()
	return nil
}

// enqueueLocked puts a job in line for its key and starts it if the key is free.
func (s *Service) enqueueLocked(id, key string) {
	s.keys[id] = key
	if s.q.add(id, key) {
		s.startLocked(id)
	}
}

func (s *Service) startLocked(id string) {
	r := s.newRun(id)
	s.runs[id] = r
	s.wg.Add(1)
	go r.main()
}

// finish takes an ended run out of the queue and starts the next one for its folder.
func (s *Service) finish(r *run) {
	r.cancel(nil)
	close(r.done)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.runs, r.job.ID)
	key := s.keys[r.job.ID]
	delete(s.keys, r.job.ID)
	if next := s.q.remove(r.job.ID, key); next != "" {
		if s.closed {
			return
		}
		s.startLocked(next)
	}
}

// Stop stops a run: a waiting one leaves the queue, a going one's agent is stopped.
func (s *Service) Stop(ctx context.Context, id string) (Job, error) {
	j, err := s.Get(ctx, id)
	if err != nil {
		return Job{}, err
	}
	if j.Status.Ended() {
		return Job{}, problem.Conflict("The run has already ended (%s).", j.Status)
	}
	s.mu.Lock()
	if r, ok := s.runs[id]; ok {
		s.mu.Unlock()
		r.halt(errStopRequested)
		select {
		case <-r.done:
		case <-ctx.Done():
		}
		return s.Get(ctx, id)
	}
	key, queued := s.keys[id]
	if queued {
		s.q.remove(id, key)
		delete(s.keys, id)
	}
	s.mu.Unlock()
	err = s.w.Exec(ctx, func(t *ledger.Tx) error {
		res, err := t.ExecContext(ctx, "UPDATE jobs SET status = 'stopped', ended_at = ?, updated_at = ?, error = ? WHERE id = ? AND status = 'queued'",
			store.Stamp(t.Now()), store.Stamp(t.Now()), "Stopped before it started.", id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ledger.ErrNoChange
		}
		return t.Emit(KindStatus, id, Trace{RunID: id, Status: Stopped, Reason: "Stopped before it started."})
	})
	if err != nil {
		return Job{}, err
	}
	return s.Get(ctx, id)
}

// Pause stops a going run from making new tool calls until Resume; calls it already started go on.
func (s *Service) Pause(ctx context.Context, id string) (Job, error) {
	return s.setPaused(ctx, id, true)
}

// Resume lets a paused run go on.
func (s *Service) Resume(ctx context.Context, id string) (Job, error) {
	return s.setPaused(ctx, id, false)
}

func (s *Service) setPaused(ctx context.Context, id string, pause bool) (Job, error) {
	j, err := s.Get(ctx, id)
	if err != nil {
		return Job{}, err
	}
	s.mu.Lock()
	r, going := s.runs[id]
	s.mu.Unlock()
	if !going || j.Status.Ended() || j.Status == Queued {
		verb := "paused"
		if !pause {
			verb = "resumed"
		}
		return Job{}, problem.Conflict("Only a going run can be %s; this one is %s.", verb, j.Status)
	}
	r.mu.Lock()
	changed := r.paused != pause
	if changed {
		// Recorded before a resumed call can go on, so the status never lands after the run's end.
		st, why := Paused, "Paused: the agent may make no new tool calls."
		if !pause {
			st, why = Running, "Resumed."
		}
		r.rec.add(KindStatus, Trace{Status: st, Reason: why}, map[string]any{"status": string(st)})
		r.paused = pause
		if pause {
			r.resumed = make(chan struct{})
		} else {
			close(r.resumed)
			r.lastSign = time.Now()
		}
	}
	r.mu.Unlock()
	r.rec.flush()
	return s.Get(ctx, id)
}

// Events returns up to limit events of a run with seq greater than after, oldest first: its
// trace and progress.
func (s *Service) Events(ctx context.Context, id string, after int64, limit int) ([]events.Event, error) {
	evs, err := events.Select(ctx, s.db, TraceFilter(id), after, limit)
	if err != nil {
		return nil, fmt.Errorf("jobs: events of %s: %w", id, err)
	}
	return evs, nil
}

// TraceFilter selects the events of run id's trace: family "run", subject the run. The event
// stream serves a run's trace through it.
func TraceFilter(id string) events.Filter {
	return events.Filter{Kinds: []string{Family + "."}, Subject: id}
}
