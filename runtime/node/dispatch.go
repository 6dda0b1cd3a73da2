package node

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Straight to the agent (spec 002 §6.2): a step that is work in files of the mission's folder
// skips its node's turn. Code compiles its packet and starts the person's coding agent: a repair
// continues the builder's own run's session and a retest the checker's; a first check starts a
// session of its own. The run is recorded on the attempt in the transaction that saves it, with
// the effect marked delivered, so a redelivered effect starts no second run. The run's
// report_result ends the step with no node turn.

// errDelivered is a dispatch whose effect another delivery already made.
var errDelivered = errors.New("node: the effect was delivered already")

// agentOf is the agent a step runs with: its own run settings, else the mission's.
func agentOf(m Mission, stepID string) string {
	for _, p := range m.Contract.Steps {
		if p.ID == stepID && p.Run != nil && p.Run.Agent != "" {
			return p.Run.Agent
		}
	}
	return m.Contract.Constraints.Agent
}

// lastJob is the latest run of a step's earlier attempts.
func lastJob(st *MissionStep) string {
	for i := len(st.Attempts) - 2; i >= 0; i-- {
		if j := st.Attempts[i].JobID; j != "" {
			return j
		}
	}
	return ""
}

// lastJobOf is the latest run of any of a step's attempts.
func lastJobOf(st *MissionStep) string {
	for i := len(st.Attempts) - 1; i >= 0; i-- {
		if j := st.Attempts[i].JobID; j != "" {
			return j
		}
	}
	return ""
}

// dispatch starts a step's attempt as a run of the coding agent. It reports false when the step
// is not one to dispatch (then its node takes a turn).
func (s *Service) dispatchStep(ctx context.Context, e effect) (bool, error) {
	if s.cfg.Jobs == nil || e.Kind != EffectStartStep {
		return false, nil
	}
	m, err := s.Mission(ctx, e.Mission)
	if err != nil {
		return false, err
	}
	st := m.step(e.Payload.Step)
	if st == nil || m.ended() || st.Status != StepWorking || st.Attempt != e.Payload.Attempt || !dispatchable(m, st) {
		return false, nil
	}
	agent := agentOf(m, st.ID)
	if agent == "" {
		return false, nil
	}
	n, err := s.Node(ctx, st.NodeID)
	if err != nil {
		return false, err
	}
	var pl place
	err = s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		lm, err := s.lockMissionTx(t, m.ID)
		if err != nil {
			return err
		}
		if cur := lm.step(st.ID); cur == nil || cur.Status != StepWorking || cur.Attempt != st.Attempt {
			return errDelivered
		}
		pl, err = placeStepTx(t, lm, st)
		return err
	})
	if errors.Is(err, errDelivered) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if pl.WaitingFor != "" {
		// Its start stays in the outbox: it goes when the holder lets go.
		s.log.Info("node: a plan step waits for its place", "step", st.ID, "for", pl.WaitingFor)
		return true, nil
	}
	brief := packet(m, st, "@"+n.Slug+", "+n.Role)
	if pl.Port != 0 {
		brief += fmt.Sprintf("\nIf you start a development server, use port %d.\n", pl.Port)
	}
	a := st.Attempts[len(st.Attempts)-1]
	req := jobs.AssignRequest{Title: fmt.Sprintf("%s: %s", m.Goal, st.ID), Brief: brief,
		Actor: ledger.Actor{Kind: ledger.Node, ID: n.ID, Name: n.Name},
		Within: func(t *ledger.Tx, j jobs.Job) error {
			return s.recordAttemptRunTx(t, e, m.ID, st.ID, a.N, j.ID, false)
		}}
	s.withSavedSecrets(ctx, &req, m.RoomID)
	if a.Reason != "start" {
		req.Continue = lastJob(st)
	}
	if req.Continue == "" {
		req.Agent, req.Folder, req.NewSession, req.Worktree = agent, m.Contract.Constraints.Folder, true, pl.Worktree
		if b := m.step(st.Verifies); pl.Worktree && b != nil {
			// A check works in its build's worktree, on the commit the build reported.
			if j, err := s.cfg.Jobs.Get(ctx, lastJobOf(b)); err == nil && j.WorkDir != "" {
				req.Folder, req.Worktree = j.WorkDir, false
			}
		}
	}
	if _, err := s.cfg.Jobs.Assign(ctx, req); err != nil {
		if errors.Is(err, errDelivered) {
			return true, nil
		}
		s.log.Warn("node: a plan step could not go to the agent; its node takes it", "step", st.ID, "err", err)
		return false, nil
	}
	return true, nil
}

// recordAttemptRunTx records a run on its attempt, inside the transaction that saves the run. For a
// dispatch (asked false) the effect is marked delivered with it; a second delivery finds it so
// and saves nothing. For the one ask to report, the attempt must not have asked yet.
func (s *Service) recordAttemptRunTx(t *ledger.Tx, e effect, mission, step string, n int, job string, asked bool) error {
	ctx := t.Context()
	if asked {
		res, err := t.ExecContext(ctx, `UPDATE node_attempts SET job_id = ?, report_asked = 1
			WHERE mission_id = ? AND step_id = ? AND n = ? AND report_asked = 0`, job, mission, step, n)
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); k == 0 {
			return errDelivered
		}
		return nil
	}
	res, err := t.ExecContext(ctx, "UPDATE node_outbox SET delivered_at = ?, tries = tries + 1 WHERE id = ? AND delivered_at IS NULL",
		store.Stamp(t.Now()), e.ID)
	if err != nil {
		return err
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return errDelivered
	}
	_, err = t.ExecContext(ctx, "UPDATE node_attempts SET job_id = ? WHERE mission_id = ? AND step_id = ? AND n = ?", job, mission, step, n)
	return err
}

// watchRuns follows the runs' status on the bus: a run of a current attempt that ended ends its
// step with its report, or is asked once to report.
func (s *Service) watchRuns() {
	if s.cfg.Bus == nil || s.cfg.Jobs == nil {
		return
	}
	s.onBus(256, "the plan steps' runs", nil, func(ev events.Event) {
		if ev.Kind != jobs.KindStatus {
			return
		}
		var tr jobs.Trace
		if json.Unmarshal(ev.Data, &tr) != nil || !tr.Status.Ended() {
			return
		}
		s.wg.Add(1)
		go func(id string) {
			defer s.wg.Done()
			if err := s.stepRunEnded(s.life, id); err != nil && s.life.Err() == nil {
				s.log.Warn("node: a plan step's run ended", "run", id, "err", err)
			}
		}(tr.RunID)
	})
}

// stepRunEnded ends the step of a run that ended.
func (s *Service) stepRunEnded(ctx context.Context, jobID string) error {
	var mission, step string
	var n int
	var asked bool
	err := s.cfg.Store.Reader().QueryRowContext(ctx, `SELECT mission_id, step_id, n, report_asked FROM node_attempts
		WHERE job_id = ? AND outcome = 'unknown'`, jobID).Scan(&mission, &step, &n, &asked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // not a plan's run, or its attempt has ended
	}
	if err != nil {
		return err
	}
	j, err := s.cfg.Jobs.Get(ctx, jobID)
	if err != nil {
		return err
	}
	if j.Report != nil {
		_, err := s.ReportStep(ctx, mission, step, n, fromJobReport(*j.Report))
		if err == nil {
			return nil
		}
		return s.endAttempt(ctx, mission, step, n, OutcomeUnverified, "Its report was refused: "+err.Error())
	}
	if j.Status != jobs.Done && j.Status != jobs.Stopped {
		// A failed run is tried again in its session, until the attempt has had maxFailedRuns.
		failed, err := s.countFailedRun(ctx, mission, step, n, jobID)
		if err != nil || failed == 0 {
			return err
		}
		if failed < maxFailedRuns {
			_, err := s.cfg.Jobs.Assign(ctx, jobs.AssignRequest{Continue: jobID, TaskID: j.TaskID,
				Brief: "Your last run ended " + string(j.Status) + " before you reported. Go on with your part, then call report_result.",
				Within: func(t *ledger.Tx, nj jobs.Job) error {
					return s.recordRetryTx(t, mission, step, n, jobID, nj.ID)
				}})
			if err == nil || errors.Is(err, errDelivered) {
				return nil
			}
			s.log.Warn("node: a plan step's failed run could not be tried again", "run", jobID, "err", err)
		}
		return s.endAttempt(ctx, mission, step, n, OutcomeUnverified, fmt.Sprintf("Its attempt stopped after %d failed runs.", failed))
	}
	if !asked && j.Status == jobs.Done {
		_, err := s.cfg.Jobs.Assign(ctx, jobs.AssignRequest{Continue: jobID, TaskID: j.TaskID,
			Brief: "You ended without reporting your result. Call report_result now: outcome, summary, the checks you ran with their verdicts, and the commit you produced or tested.",
			Within: func(t *ledger.Tx, nj jobs.Job) error {
				return s.recordAttemptRunTx(t, effect{}, mission, step, n, nj.ID, true)
			}})
		if err == nil || errors.Is(err, errDelivered) {
			return nil
		}
		s.log.Warn("node: a plan step's run could not be asked to report", "run", jobID, "err", err)
	}
	return s.endAttempt(ctx, mission, step, n, OutcomeUnverified, fmt.Sprintf("Its run ended %s without a report.", j.Status))
}

// countFailedRun counts a failed run on its attempt once (a second look at the same run finds
// failed_job already set) and returns the attempt's failed runs; 0 when it was counted already.
func (s *Service) countFailedRun(ctx context.Context, mission, step string, n int, jobID string) (int, error) {
	var failed int
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		err := t.QueryRowContext(t.Context(), `UPDATE node_attempts SET failed_runs = failed_runs + 1, failed_job = ?
			WHERE mission_id = ? AND step_id = ? AND n = ? AND job_id = ? AND failed_job != ? RETURNING failed_runs`,
			jobID, mission, step, n, jobID, jobID).Scan(&failed)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	return failed, err
}

// recordRetryTx moves the attempt to its retried run, unless another look retried it already.
func (s *Service) recordRetryTx(t *ledger.Tx, mission, step string, n int, from, job string) error {
	res, err := t.ExecContext(t.Context(), "UPDATE node_attempts SET job_id = ? WHERE mission_id = ? AND step_id = ? AND n = ? AND job_id = ?",
		job, mission, step, n, from)
	if err != nil {
		return err
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return errDelivered
	}
	return nil
}

// sweepRuns looks at the runs of attempts still going, for a run whose end the bus did not bring
// (it ended while the runtime was down, or was marked interrupted as it came up).
func (s *Service) sweepRuns(ctx context.Context) {
	if s.cfg.Jobs == nil {
		return
	}
	rows, err := s.cfg.Store.Reader().QueryContext(ctx, "SELECT job_id FROM node_attempts WHERE job_id != '' AND outcome = 'unknown'")
	if err != nil {
		return
	}
	var ids []string
	for rows.Next() {
		var id string
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	rows.Close()
	for _, id := range ids {
		if j, err := s.cfg.Jobs.Get(ctx, id); err == nil && j.Status.Ended() {
			if err := s.stepRunEnded(ctx, id); err != nil && ctx.Err() == nil {
				s.log.Warn("node: a plan step's run ended", "run", id, "err", err)
			}
		}
	}
}

func fromJobReport(r jobs.Report) StepReport {
	out := StepReport{Outcome: r.Outcome, Summary: r.Summary, BlockedBy: r.BlockedBy}
	for _, c := range r.Checks {
		out.Checks = append(out.Checks, ReportCheck{Name: c.Name, Verdict: c.Verdict, Note: c.Note})
	}
	if r.Subject != nil {
		out.Commit, out.ContentHash = r.Subject.Commit, r.Subject.ContentHash
	}
	return out
}

// endAttempt ends a step's current attempt with an outcome no report gave (unverified).
func (s *Service) endAttempt(ctx context.Context, mission, step string, n int, outcome, why string) error {
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		m, err := s.lockMissionTx(t, mission)
		if err != nil {
			return err
		}
		st := m.step(step)
		if st == nil || m.ended() || st.Status != StepWorking || st.Attempt != n {
			return nil
		}
		rep, _ := json.Marshal(StepReport{Outcome: outcome, Summary: why})
		if _, err := t.ExecContext(t.Context(), `UPDATE node_attempts SET outcome = ?, report = ?, ended_at = ?
			WHERE mission_id = ? AND step_id = ? AND n = ?`, outcome, string(rep), store.Stamp(t.Now()), mission, step, n); err != nil {
			return err
		}
		st.Status, st.Outcome = StepDone, outcome
		if err := setStepTx(t, mission, st); err != nil {
			return err
		}
		m, err = s.missionIn(t.Context(), t, mission)
		if err != nil {
			return err
		}
		_, err = s.advanceTx(t, m)
		return err
	})
	if err == nil {
		s.deliverSoon()
	}
	return err
}
