package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// A session's queue (spec 002 §8.3, §8.9): messages sent to a busy session wait here, in order,
// and each starts, continuing the run that ran last, once the run before it has ended.

// sendToSession sends a message to a session (spec 002 §8.3): queue, steer or replace.
func (s *Service) sendToSession(ctx context.Context, o origin, root, title, prompt, delivery string) (nodeRun, error) {
	return s.sendWith(ctx, o, root, title, prompt, delivery, SettingSet{})
}

// sendWith is sendToSession with run settings for the message; each one left out is kept from the
// session (spec 002 §8.10).
func (s *Service) sendWith(ctx context.Context, o origin, root, title, prompt, delivery string, set SettingSet) (nodeRun, error) {
	if s.cfg.Jobs == nil {
		return nodeRun{}, errNoJobs
	}
	prompt = strings.TrimSpace(prompt)
	if prompt == "" {
		return nodeRun{}, problem.Invalid("Say what the agent should do (prompt).")
	}
	if delivery == "" {
		delivery = DeliverQueue
	}
	if delivery != DeliverQueue && delivery != DeliverSteer && delivery != DeliverReplace {
		return nodeRun{}, problem.Invalid("delivery is queue, steer or replace, not %q.", delivery)
	}
	if err := s.refuseWhilePaused(ctx, o.node.ID); err != nil {
		return nodeRun{}, err
	}
	if err := s.refuseDeleted(ctx, root); err != nil {
		return nodeRun{}, err
	}
	if set.Model != "" {
		if j, err := s.cfg.Jobs.Get(ctx, root); err == nil {
			if err := modelFit(ctx, j.Agent, set.Model, nil); err != nil {
				return nodeRun{}, err
			}
		}
	}
	if strings.TrimSpace(title) == "" {
		title = oneLineOf(prompt, 60)
	}
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	var queued nodeRun
	var stopJob string
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		if err := ownsTx(tx, root, o.node.ID); err != nil {
			return err
		}
		live, err := s.liveRun(tx.Context(), tx, root)
		if err != nil {
			return err
		}
		if live.JobID == "" && delivery != DeliverQueue {
			delivery = DeliverQueue // on an idle session a steer or replace is a queued message
		}
		var lo, hi int
		tx.QueryRowContext(tx.Context(), "SELECT coalesce(min(position), 0), coalesce(max(position), 0) FROM node_runs WHERE session_root = ? AND state = 'queued'", root).Scan(&lo, &hi)
		pos := hi + 1
		switch delivery {
		case DeliverSteer:
			pos = lo - 1
		case DeliverReplace:
			if _, err := tx.ExecContext(tx.Context(), "UPDATE node_runs SET state = 'cancelled', quiet = 1, error = 'replaced' WHERE session_root = ? AND state = 'queued'", root); err != nil {
				return err
			}
			pos = 1
		}
		queued = nodeRun{ID: ledger.NewID("nrn_"), NodeID: o.node.ID, RoomID: o.roomID, Lane: o.lane, Private: o.private, ByOwner: o.byOwner,
			TurnID: o.turnID, Root: root, Title: title, Prompt: prompt, State: runQueued, Position: pos,
			Settings: RunSettings{Requested: set}}
		if err := insertRunTx(tx, queued); err != nil {
			return err
		}
		if delivery != DeliverQueue && live.JobID != "" {
			if _, err := tx.ExecContext(tx.Context(), "UPDATE node_runs SET quiet = 1 WHERE id = ?", live.ID); err != nil {
				return err
			}
			stopJob = live.JobID
		}
		return sessionEventTx(tx, root, o.node.ID, delivery, o, queued.ID, title)
	})
	if err != nil {
		return nodeRun{}, err
	}
	if stopJob != "" {
		if _, err := s.cfg.Jobs.Stop(ctx, stopJob); err != nil && problem.KindOf(err) != problem.KindConflict {
			s.log.Warn("node: stop a run for a steer", "job", stopJob, "err", err)
		}
	}
	s.dispatchLocked(ctx, root)
	s.refreshSession(ctx, root)
	if r, err := s.runByID(ctx, queued.ID); err == nil {
		queued = r
	}
	return queued, nil
}

// stopSession stops a session's run going on, and drops its queue unless keep (spec 002 §8.3).
func (s *Service) stopSession(ctx context.Context, o origin, root string, keep bool) (stopped, dropped int, err error) {
	if s.cfg.Jobs == nil {
		return 0, 0, errNoJobs
	}
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	var stopJob string
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		if err := ownsTx(tx, root, o.node.ID); err != nil {
			return err
		}
		live, err := s.liveRun(tx.Context(), tx, root)
		if err != nil {
			return err
		}
		if !keep {
			res, err := tx.ExecContext(tx.Context(), "UPDATE node_runs SET state = 'cancelled', quiet = 1, error = 'stopped' WHERE session_root = ? AND state = 'queued'", root)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			dropped = int(n)
		}
		if live.JobID != "" {
			if _, err := tx.ExecContext(tx.Context(), "UPDATE node_runs SET quiet = 1 WHERE id = ?", live.ID); err != nil {
				return err
			}
			stopJob = live.JobID
		}
		return sessionEventTx(tx, root, o.node.ID, "stop", o, live.JobID, "")
	})
	if err != nil {
		return 0, 0, err
	}
	if stopJob != "" {
		if _, err := s.cfg.Jobs.Stop(ctx, stopJob); err == nil {
			stopped = 1
		} else if problem.KindOf(err) != problem.KindConflict {
			return 0, dropped, err
		}
	}
	if keep {
		s.dispatchLocked(ctx, root)
	}
	s.refreshSession(ctx, root)
	return stopped, dropped, nil
}

// editQueue reorders a session's queued messages (order: every queued id, in the new order) or
// takes some out (cancel), by compare-and-set: an order made from a queue that changed since,
// or a message that already started, is refused and changes nothing.
func (s *Service) editQueue(ctx context.Context, o origin, root string, order, cancel []string) error {
	if (len(order) == 0) == (len(cancel) == 0) {
		return problem.Invalid("Give either the new order of the queued messages (order) or the ones to take out (cancel).")
	}
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		if err := ownsTx(tx, root, o.node.ID); err != nil {
			return err
		}
		queued, err := s.queryRuns(tx.Context(), tx, "WHERE session_root = ? AND state = 'queued' ORDER BY position, created_at", root)
		if err != nil {
			return err
		}
		ids := map[string]bool{}
		for _, q := range queued {
			ids[q.ID] = true
		}
		if len(order) > 0 {
			seen := map[string]bool{}
			for _, id := range order {
				if !ids[id] || seen[id] {
					return problem.Conflict("The queue changed since that order was made (%s is not waiting in it, or is named twice); read the session again and order what is queued now.", id)
				}
				seen[id] = true
			}
			if len(seen) != len(ids) {
				return problem.Conflict("The queue changed since that order was made: name every queued message, in the new order.")
			}
			for i, id := range order {
				if _, err := tx.ExecContext(tx.Context(), "UPDATE node_runs SET position = ? WHERE id = ? AND state = 'queued'", i+1, id); err != nil {
					return err
				}
			}
			return sessionEventTx(tx, root, o.node.ID, "reorder", o, "", strings.Join(order, ","))
		}
		for _, id := range cancel {
			res, err := tx.ExecContext(tx.Context(), "UPDATE node_runs SET state = 'cancelled', quiet = 1, error = 'taken out of the queue' WHERE id = ? AND session_root = ? AND state = 'queued'", id, root)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return problem.Conflict("The message %s is no longer waiting in the queue (it started or was taken out); nothing was changed.", id)
			}
			if err := sessionEventTx(tx, root, o.node.ID, "cancel", o, id, ""); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.refreshSession(ctx, root)
	return nil
}

// ownsTx refuses, inside tx, a session that is not nodeID's.
func ownsTx(tx *ledger.Tx, root, nodeID string) error {
	owner, err := sessionOwner(tx.Context(), tx, root)
	if err != nil {
		return err
	}
	if owner != nodeID {
		return errSessionGone
	}
	return nil
}

// liveRun is the session's run that has a job not ended yet, if any.
func (s *Service) liveRun(ctx context.Context, db querier, root string) (nodeRun, error) {
	started, err := s.queryRuns(ctx, db, "WHERE session_root = ? AND state = 'started' ORDER BY created_at DESC, rowid DESC", root)
	if err != nil {
		return nodeRun{}, err
	}
	for _, r := range started {
		if s.jobGoing(ctx, r.JobID) {
			return r, nil
		}
	}
	return nodeRun{}, nil
}

// jobGoing says whether a job has not ended (the writer is held while a change is made, so what
// the runs read is what was last committed).
func (s *Service) jobGoing(ctx context.Context, id string) bool {
	j, err := s.cfg.Jobs.Get(ctx, id)
	return err == nil && !j.Status.Ended()
}

// goingRuns are a node's runs whose job has not ended.
func (s *Service) goingRuns(ctx context.Context, db querier, nodeID string) ([]nodeRun, error) {
	started, err := s.queryRuns(ctx, db, "WHERE node_id = ? AND state = 'started' AND ended_notified IS NULL", nodeID)
	if err != nil {
		return nil, err
	}
	var out []nodeRun
	for _, r := range started {
		if s.jobGoing(ctx, r.JobID) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *Service) runByID(ctx context.Context, id string) (nodeRun, error) {
	rs, err := s.queryRuns(ctx, s.cfg.Store.Reader(), "WHERE id = ? OR job_id = ?", id, id)
	if err != nil {
		return nodeRun{}, err
	}
	if len(rs) == 0 {
		return nodeRun{}, problem.NotFound("There is no node run %q.", id)
	}
	return rs[0], nil
}

// errTaken is a queued message another call started or took out meanwhile.
var errTaken = errors.New("node: the queued message was taken meanwhile")

// dispatch starts the session's first queued message when no run of it is going.
func (s *Service) dispatch(ctx context.Context, root string) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	s.dispatchLocked(ctx, root)
}

func (s *Service) dispatchLocked(ctx context.Context, root string) {
	if s.cfg.Jobs == nil {
		return
	}
	db := s.cfg.Store.Reader()
	live, err := s.liveRun(ctx, db, root)
	if err != nil || live.JobID != "" {
		return
	}
	queued, err := s.queryRuns(ctx, db, "WHERE session_root = ? AND state = 'queued' ORDER BY position, created_at LIMIT 1", root)
	if err != nil || len(queued) == 0 {
		return
	}
	next := queued[0]
	if n, err := s.Node(ctx, next.NodeID); err == nil && n.Paused() {
		return
	}
	// It continues the run of the session that actually ran last: the newest one that reached
	// the agent; with none, it starts afresh in the session's folder.
	ran, err := s.queryRuns(ctx, db, "WHERE session_root = ? AND state = 'started' ORDER BY created_at DESC, rowid DESC", root)
	if err != nil {
		return
	}
	req := jobs.AssignRequest{Title: next.Title, Brief: next.Prompt, Actor: ledger.Actor{Kind: ledger.Node, ID: next.NodeID}}
	for _, r := range ran {
		j, err := s.cfg.Jobs.Get(ctx, r.JobID)
		if err != nil {
			continue
		}
		if req.Agent == "" {
			req.Agent, req.Folder, req.Settings = j.Agent, j.WorkDir, inputOf(j.Settings)
			req.TaskID, req.Title = j.TaskID, ""
		}
		if j.SessionID != "" {
			req.Continue = j.ID
			break
		}
	}
	if req.Agent == "" {
		if d, err := s.cfg.Jobs.Get(ctx, root); err == nil {
			req.Agent, req.Folder, req.Settings = d.Agent, d.WorkDir, inputOf(d.Settings)
		}
	}
	if req.Continue == "" {
		req.NewSession = true
	}
	next.Settings.Requested.into(&req.Settings)
	req.Within = func(tx *ledger.Tx, j jobs.Job) error {
		next.JobID, next.State = j.ID, runStarted
		next.Settings.Resolved = resolvedOf(j)
		card, err := s.postRunCardTx(tx, next, j)
		if err != nil {
			return err
		}
		settings, _ := json.Marshal(next.Settings)
		res, err := tx.ExecContext(tx.Context(), "UPDATE node_runs SET job_id = ?, state = 'started', card_message_id = ?, settings = ? WHERE id = ? AND state = 'queued'",
			j.ID, card.ID, string(settings), next.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errTaken // rolls the job back too
		}
		return nil
	}
	if _, err := s.cfg.Jobs.Assign(ctx, req); err != nil {
		if errors.Is(err, errTaken) {
			return
		}
		s.log.Warn("node: start a queued session message", "run", next.ID, "err", err)
		s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
			_, err := tx.ExecContext(tx.Context(), "UPDATE node_runs SET state = 'failed', error = ? WHERE id = ? AND state = 'queued'", err.Error(), next.ID)
			if err != nil {
				return err
			}
			return s.enqueueTx(tx, Turn{NodeID: next.NodeID, RoomID: next.RoomID, Lane: next.Lane, Private: next.Private, Reason: ReasonRun,
				ByOwner: next.ByOwner, OperationID: "run:" + next.ID + ":end",
				Note: fmt.Sprintf("Your message to session %s (“%s”) could not start: %s", root, next.Title, err.Error())})
		})
		s.wake()
	}
}

func oneLineOf(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) > n {
		return strings.TrimSpace(string([]rune(s)[:n])) + "…"
	}
	return s
}
