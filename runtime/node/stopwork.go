package node

import (
	"context"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// stopWork stops the work started in a room, or everywhere, without a model (spec 002 §6.4):
// the plans made there and the agent runs the nodes started there. Stopped runs wake nobody;
// their queued messages are taken out. It returns how many plans and runs it stopped.
func (s *Service) stopWork(ctx context.Context, roomID, scope string) (plans, runs int) {
	where, args := "WHERE ended_at IS NULL AND state IN ('running', 'reporting')", []any{}
	if scope != "all" {
		where, args = where+" AND room_id = ?", append(args, roomID)
	}
	ids, err := queryAll(ctx, s.cfg.Store.Reader(), "read the plans to stop", "SELECT id FROM node_missions "+where, args, scanString)
	if err != nil {
		s.log.Warn("node: stop: read plans", "err", err)
	}
	for _, id := range ids {
		if _, err := s.StopMission(ctx, id); err != nil {
			s.log.Warn("node: stop a plan", "mission", id, "err", err)
			continue
		}
		plans++
	}
	return plans, s.stopRoomRuns(ctx, roomID, scope)
}

// stopRoomRuns stops the node runs started in the room (every room for scope all): queued
// messages are cancelled and runs going on are marked quiet, then stopped.
func (s *Service) stopRoomRuns(ctx context.Context, roomID, scope string) int {
	if s.cfg.Jobs == nil {
		return 0
	}
	in, args := "", []any{}
	if scope != "all" {
		in, args = " AND room_id = ?", []any{roomID}
	}
	started, err := s.queryRuns(ctx, s.cfg.Store.Reader(), "WHERE state = 'started' AND ended_notified IS NULL"+in, args...)
	if err != nil {
		s.log.Warn("node: stop: read runs", "err", err)
		return 0
	}
	var live []nodeRun
	for _, r := range started {
		if s.jobGoing(ctx, r.JobID) {
			live = append(live, r)
		}
	}
	err = s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		if _, err := t.ExecContext(t.Context(), "UPDATE node_runs SET state = 'cancelled', quiet = 1, error = 'stopped by the owner' WHERE state = 'queued'"+in, args...); err != nil {
			return err
		}
		for _, r := range live {
			if _, err := t.ExecContext(t.Context(), "UPDATE node_runs SET quiet = 1 WHERE id = ?", r.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.log.Warn("node: stop: mark runs", "err", err)
		return 0
	}
	roots := map[string]bool{}
	for _, r := range live {
		s.stopJob(ctx, r.JobID)
		roots[r.Root] = true
	}
	for root := range roots {
		s.refreshSession(ctx, root)
	}
	return len(live)
}

// stopMissionRuns stops the agent runs a mission's steps started that are still going.
func (s *Service) stopMissionRuns(ctx context.Context, missionID string) {
	if s.cfg.Jobs == nil {
		return
	}
	jobs, err := queryAll(ctx, s.cfg.Store.Reader(), "read a plan's runs",
		"SELECT job_id FROM node_attempts WHERE mission_id = ? AND job_id != ''", []any{missionID}, scanString)
	if err != nil {
		s.log.Warn("node: stop a plan's runs", "mission", missionID, "err", err)
		return
	}
	for _, id := range jobs {
		if s.jobGoing(ctx, id) {
			s.stopJob(ctx, id)
		}
	}
}

func (s *Service) stopJob(ctx context.Context, id string) {
	if _, err := s.cfg.Jobs.Stop(ctx, id); err != nil && problem.KindOf(err) != problem.KindConflict {
		s.log.Warn("node: stop a run", "job", id, "err", err)
	}
}

func scanString(sc scanner) (string, error) {
	var v string
	err := sc.Scan(&v)
	return v, err
}
