package node

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Missions in SQLite (spec 002 §6.2): every change is one transaction that takes the mission's
// row first, applies the pure rules of missionscore.go, stores the steps, rebuilds the plan card
// and writes its effects to node_outbox, which outbox.go delivers after the commit.

// ReasonPlan is a turn a mission started: a step's work, or its lead's report or judgement.
const ReasonPlan = "plan"

// Mission is a mission as GET /api/node/plans/{id} shows it.
type Mission struct {
	ID        string            `json:"id"`
	RoomID    string            `json:"roomId"`
	LeadID    string            `json:"leadNodeId"`
	Goal      string            `json:"goal"`
	State     string            `json:"state"`
	Revision  int               `json:"revision"`
	MessageID string            `json:"messageId"`
	Contract  PlanInput         `json:"contract"`
	Steps     []MissionStep     `json:"steps"`
	Ledger    map[string]string `json:"requirements"`
}

// MissionStep is one step with its attempts.
type MissionStep struct {
	ID             string    `json:"id"`
	NodeID         string    `json:"nodeId"`
	Kind           string    `json:"kind"`
	Brief          string    `json:"brief"`
	After          []string  `json:"after"`
	Verifies       string    `json:"verifies,omitempty"`
	RequirementIDs []string  `json:"requirementIds"`
	Status         string    `json:"status"`
	Outcome        string    `json:"outcome"`
	HeldBy         []string  `json:"heldBy,omitempty"`
	Attempt        int       `json:"attempt"`
	ConversationID string    `json:"-"`
	Attempts       []Attempt `json:"attempts"`
}

// Attempt is one attempt of a step.
type Attempt struct {
	N         int         `json:"n"`
	Reason    string      `json:"reason"`
	Note      string      `json:"note,omitempty"`
	Tested    string      `json:"tested,omitempty"`
	Outcome   string      `json:"outcome"`
	Report    *StepReport `json:"report,omitempty"`
	Candidate string      `json:"candidate,omitempty"`
	Signature string      `json:"signature,omitempty"`
	JobID     string      `json:"jobId,omitempty"`
}

func (m Mission) step(id string) *MissionStep {
	for i := range m.Steps {
		if m.Steps[i].ID == id {
			return &m.Steps[i]
		}
	}
	return nil
}

func (m Mission) ended() bool {
	return m.State != MissionRunning && m.State != MissionReporting
}

func (m Mission) core() []coreStep {
	out := make([]coreStep, len(m.Steps))
	for i, s := range m.Steps {
		out[i] = coreStep{ID: s.ID, Kind: s.Kind, After: s.After, Verifies: s.Verifies, Status: s.Status, Outcome: s.Outcome}
	}
	return out
}

func (m Mission) ledger() map[string]string {
	var reqs []coreRequirement
	deferred := map[string]bool{}
	for _, d := range m.Contract.Deferred {
		deferred[d.RequirementID] = true
	}
	for _, r := range m.Contract.Requirements {
		reqs = append(reqs, coreRequirement{ID: r.ID, Deferred: deferred[r.ID], HasCrit: len(r.Acceptance) > 0})
	}
	covers := map[string][]string{}
	for _, s := range m.Steps {
		for _, id := range s.RequirementIDs {
			covers[id] = append(covers[id], s.ID)
		}
	}
	return ledgerOf(reqs, covers, m.core())
}

// criteriaOf are the acceptance criteria of the requirements a step covers.
func (m Mission) criteriaOf(s *MissionStep) []Criterion {
	var out []Criterion
	for _, id := range s.RequirementIDs {
		for _, r := range m.Contract.Requirements {
			if r.ID != id {
				continue
			}
			for _, a := range r.Acceptance {
				out = append(out, Criterion{Requirement: r.ID, ID: a.ID, Mandatory: a.IsMandatory()})
			}
		}
	}
	return out
}

// Mission reads a mission.
func (s *Service) Mission(ctx context.Context, id string) (Mission, error) {
	return s.missionIn(ctx, s.cfg.Store.Reader(), id)
}

func (s *Service) missionIn(ctx context.Context, db querier, id string) (Mission, error) {
	var m Mission
	var contract string
	err := db.QueryRowContext(ctx, `SELECT id, room_id, lead_node_id, goal, contract, state, revision, message_id
		FROM node_missions WHERE id = ?`, id).Scan(&m.ID, &m.RoomID, &m.LeadID, &m.Goal, &contract, &m.State, &m.Revision, &m.MessageID)
	if errors.Is(err, sql.ErrNoRows) {
		return Mission{}, problem.NotFound("There is no plan %q.", id)
	}
	if err != nil {
		return Mission{}, fmt.Errorf("node: read a mission: %w", err)
	}
	if err := json.Unmarshal([]byte(contract), &m.Contract); err != nil {
		return Mission{}, fmt.Errorf("node: read a mission's contract: %w", err)
	}
	rows, err := db.QueryContext(ctx, `SELECT id, node_id, kind, brief, after, verifies, requirement_ids, status, outcome, held_by,
		attempt, conversation_id FROM node_steps WHERE mission_id = ? ORDER BY position`, id)
	if err != nil {
		return Mission{}, fmt.Errorf("node: read a mission's steps: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st MissionStep
		var after, reqs, heldBy string
		if err := rows.Scan(&st.ID, &st.NodeID, &st.Kind, &st.Brief, &after, &st.Verifies, &reqs, &st.Status, &st.Outcome,
			&heldBy, &st.Attempt, &st.ConversationID); err != nil {
			return Mission{}, fmt.Errorf("node: read a step: %w", err)
		}
		_ = json.Unmarshal([]byte(after), &st.After)
		_ = json.Unmarshal([]byte(reqs), &st.RequirementIDs)
		_ = json.Unmarshal([]byte(heldBy), &st.HeldBy)
		m.Steps = append(m.Steps, st)
	}
	if err := rows.Err(); err != nil {
		return Mission{}, err
	}
	rows.Close()
	arows, err := db.QueryContext(ctx, `SELECT step_id, n, reason, note, tested, outcome, report, candidate, signature, job_id
		FROM node_attempts WHERE mission_id = ? ORDER BY step_id, n`, id)
	if err != nil {
		return Mission{}, fmt.Errorf("node: read a mission's attempts: %w", err)
	}
	defer arows.Close()
	for arows.Next() {
		var a Attempt
		var step, report string
		if err := arows.Scan(&step, &a.N, &a.Reason, &a.Note, &a.Tested, &a.Outcome, &report, &a.Candidate, &a.Signature, &a.JobID); err != nil {
			return Mission{}, fmt.Errorf("node: read an attempt: %w", err)
		}
		if report != "" {
			var r StepReport
			if json.Unmarshal([]byte(report), &r) == nil {
				a.Report = &r
			}
		}
		if st := m.step(step); st != nil {
			st.Attempts = append(st.Attempts, a)
		}
	}
	if err := arows.Err(); err != nil {
		return Mission{}, err
	}
	m.Ledger = m.ledger()
	return m, nil
}

// lockMissionTx takes the mission's row for this transaction and reads the mission.
func (s *Service) lockMissionTx(t *ledger.Tx, id string) (Mission, error) {
	res, err := t.ExecContext(t.Context(), "UPDATE node_missions SET updated_at = ? WHERE id = ?", store.Stamp(t.Now()), id)
	if err != nil {
		return Mission{}, fmt.Errorf("node: lock a mission: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Mission{}, problem.NotFound("There is no plan %q.", id)
	}
	return s.missionIn(t.Context(), t, id)
}

// createMissionTx stores a validated plan as a mission of the crew r led by lead, posts its card
// and starts the steps that can start.
func (s *Service) createMissionTx(t *ledger.Tx, r Room, lead Node, p PlanInput, byOwner bool, turnID string) (Mission, error) {
	ctx := t.Context()
	id := ledger.NewID("msn_")
	contract, _ := json.Marshal(p)
	now := store.Stamp(t.Now())
	if _, err := t.ExecContext(ctx, `INSERT INTO node_missions (id, room_id, lead_node_id, goal, contract, by_owner, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, r.ID, lead.ID, p.Goal, string(contract), b2i(byOwner), now, now); err != nil {
		return Mission{}, fmt.Errorf("node: store a mission: %w", err)
	}
	if err := insertStepsTx(t, id, r, p.Steps, 0); err != nil {
		return Mission{}, err
	}
	card, err := s.insertMessageTx(t, Message{RoomID: r.ID, Author: AuthorNode, NodeID: lead.ID, Kind: KindPlan, Body: p.Goal,
		Data: json.RawMessage(`{"missionId":"` + id + `"}`), Private: true, TurnID: turnID})
	if err != nil {
		return Mission{}, err
	}
	if _, err := t.ExecContext(ctx, "UPDATE node_missions SET message_id = ? WHERE id = ?", card.ID, id); err != nil {
		return Mission{}, fmt.Errorf("node: link a mission's card: %w", err)
	}
	m, err := s.missionIn(ctx, t, id)
	if err != nil {
		return Mission{}, err
	}
	return s.advanceTx(t, m)
}

// insertStepsTx stores steps of mission id from position from on, each for the member of r its
// To names.
func insertStepsTx(t *ledger.Tx, id string, r Room, steps []PlanStep, from int) error {
	slugs := map[string]string{}
	for _, mb := range r.Members {
		slugs[mb.Slug] = mb.NodeID
	}
	now := store.Stamp(t.Now())
	for i, st := range steps {
		after, _ := json.Marshal(nonNil(st.After))
		integ, _ := json.Marshal(nonNil(st.Integrates))
		reqs, _ := json.Marshal(nonNil(st.RequirementIDs))
		run, _ := json.Marshal(st.Run)
		if _, err := t.ExecContext(t.Context(), `INSERT INTO node_steps (mission_id, id, position, node_id, kind, brief, after, verifies,
			integrates, requirement_ids, run, conversation_id, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, st.ID, from+i, slugs[st.To], st.Kind, st.Brief, string(after), st.Verifies, string(integ), string(reqs), string(run),
			ledger.NewID("cnv_"), now); err != nil {
			return fmt.Errorf("node: store a step: %w", err)
		}
	}
	return nil
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// setStepTx stores a step's status, outcome, hold and attempt.
func setStepTx(t *ledger.Tx, mission string, st *MissionStep) error {
	held, _ := json.Marshal(nonNil(st.HeldBy))
	_, err := t.ExecContext(t.Context(), `UPDATE node_steps SET status = ?, outcome = ?, held_by = ?, attempt = ?, updated_at = ?
		WHERE mission_id = ? AND id = ?`, st.Status, st.Outcome, string(held), st.Attempt, store.Stamp(t.Now()), mission, st.ID)
	if err != nil {
		return fmt.Errorf("node: store a step: %w", err)
	}
	return nil
}

// openAttemptTx starts a step's next attempt and puts its start in the outbox.
func (s *Service) openAttemptTx(t *ledger.Tx, m Mission, st *MissionStep, reason, note, tested string) error {
	st.Attempt++
	st.Status, st.Outcome, st.HeldBy = StepWorking, OutcomeUnknown, nil
	if err := setStepTx(t, m.ID, st); err != nil {
		return err
	}
	if _, err := t.ExecContext(t.Context(), `INSERT INTO node_attempts (id, mission_id, step_id, n, reason, note, tested, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ledger.NewID("att_"), m.ID, st.ID, st.Attempt, reason, note, tested, store.Stamp(t.Now())); err != nil {
		return fmt.Errorf("node: store an attempt: %w", err)
	}
	st.Attempts = append(st.Attempts, Attempt{N: st.Attempt, Reason: reason, Note: note, Tested: tested, Outcome: OutcomeUnknown})
	return outboxTx(t, m.ID, EffectStartStep, stepOp(m.ID, st.ID, st.Attempt), map[string]any{"step": st.ID, "attempt": st.Attempt})
}

// stepOp is the operation id of a step's attempt: the turn or run it starts carries it.
func stepOp(mission, step string, n int) string {
	return "step:" + mission + ":" + step + ":" + strconv.Itoa(n)
}

// parseStepOp reads stepOp back; a nudge to report carries the attempt's operation id too.
func parseStepOp(op string) (mission, step string, n int, ok bool) {
	parts := strings.Split(strings.TrimPrefix(op, "nudge:"), ":")
	if len(parts) != 4 || parts[0] != "step" {
		return "", "", 0, false
	}
	n, err := strconv.Atoi(parts[3])
	return parts[1], parts[2], n, err == nil
}

// stepOfTurn is the plan step a turn works on: from its operation id, or for a turn resumed
// after a restart from its lane (work:<mission>:<step>:<node>), with attempt 0 for the current.
func stepOfTurn(t Turn) (mission, step string, n int, ok bool) {
	if m, st, n, ok := parseStepOp(t.OperationID); ok {
		return m, st, n, true
	}
	parts := strings.Split(t.Lane, ":")
	if len(parts) == 4 && parts[0] == "work" && strings.HasPrefix(parts[1], "msn_") {
		return parts[1], parts[2], 0, true
	}
	return "", "", 0, false
}

// advanceTx starts what can start, marks what is held, and when nothing can move ends the
// mission and asks its lead for the report; then it rebuilds the card.
func (s *Service) advanceTx(t *ledger.Tx, m Mission) (Mission, error) {
	if m.ended() {
		return m, s.refreshCardTx(t, m)
	}
	for _, id := range startable(m.core()) {
		st := m.step(id)
		reason := "start"
		if len(st.Attempts) > 0 {
			reason = "retest"
		}
		tested := ""
		if st.Kind == KindVerify {
			tested = m.candidateOf(st.Verifies)
		}
		if err := s.openAttemptTx(t, m, st, reason, "", tested); err != nil {
			return m, err
		}
	}
	holds := held(m.core())
	for i := range m.Steps {
		st := &m.Steps[i]
		if st.Status != StepWaiting {
			continue
		}
		if by := holds[st.ID]; strings.Join(by, ",") != strings.Join(st.HeldBy, ",") {
			st.HeldBy = by
			if err := setStepTx(t, m.ID, st); err != nil {
				return m, err
			}
		}
	}
	if quiet(m.core()) {
		core := m.core()
		skipped := skipHeld(core)
		for i := range m.Steps {
			st := &m.Steps[i]
			if by, ok := skipped[st.ID]; ok {
				st.Status, st.HeldBy = StepSkipped, by
				if err := setStepTx(t, m.ID, st); err != nil {
					return m, err
				}
			}
		}
		m.Ledger = m.ledger()
		m.State = missionEnd(m.core(), m.Ledger)
		if _, err := t.ExecContext(t.Context(), "UPDATE node_missions SET state = ?, ended_at = ? WHERE id = ?",
			m.State, store.Stamp(t.Now()), m.ID); err != nil {
			return m, fmt.Errorf("node: end a mission: %w", err)
		}
		// A judgement asked in this same change is the lead's one turn; it hears the ending there.
		var judging int
		if err := t.QueryRowContext(t.Context(), `SELECT count(*) FROM node_outbox WHERE mission_id = ? AND kind = 'judge'
			AND delivered_at IS NULL`, m.ID).Scan(&judging); err != nil {
			return m, err
		}
		if judging == 0 {
			if err := outboxTx(t, m.ID, EffectReport, "report:"+m.ID, map[string]any{}); err != nil {
				return m, err
			}
		}
	}
	m.Ledger = m.ledger()
	if err := releaseClaimsTx(t, m); err != nil {
		return m, err
	}
	return m, s.refreshCardTx(t, m)
}

// candidateOf is the last candidate a step reported.
func (m Mission) candidateOf(step string) string {
	st := m.step(step)
	if st == nil {
		return ""
	}
	for i := len(st.Attempts) - 1; i >= 0; i-- {
		if c := st.Attempts[i].Candidate; c != "" {
			return c
		}
	}
	return ""
}

// ReportStep ends a step's attempt with its report (node_step_report, node_step_blocked or a
// coding agent's report_result). A report for an attempt that is not the step's current one, or
// for a step that is not working, changes nothing. It returns the step's outcome.
func (s *Service) ReportStep(ctx context.Context, mission, step string, attempt int, r StepReport) (string, error) {
	var outcome string
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		m, err := s.lockMissionTx(t, mission)
		if err != nil {
			return err
		}
		st := m.step(step)
		if st != nil && attempt == 0 {
			attempt = st.Attempt
		}
		switch {
		case st == nil:
			return problem.NotFound("The plan has no step %q.", step)
		case m.ended():
			return problem.Conflict("This plan has ended; the report changes nothing.")
		case st.Status != StepWorking || st.Attempt != attempt:
			return problem.Conflict("This attempt of step %q has ended; the report changes nothing.", step)
		}
		outcome, err = verdictOf(st.Kind, r, m.criteriaOf(st))
		if err != nil {
			return problem.Invalid("%s", err.Error())
		}
		sig := ""
		if outcome == OutcomeFail {
			sig = failureSignature(r.Checks)
		}
		rep, _ := json.Marshal(r)
		if _, err := t.ExecContext(ctx, `UPDATE node_attempts SET outcome = ?, report = ?, candidate = ?, signature = ?, ended_at = ?
			WHERE mission_id = ? AND step_id = ? AND n = ?`, outcome, string(rep), r.candidate(), sig, store.Stamp(t.Now()),
			mission, step, attempt); err != nil {
			return fmt.Errorf("node: store a report: %w", err)
		}
		cur := &st.Attempts[len(st.Attempts)-1]
		cur.Outcome, cur.Report, cur.Candidate, cur.Signature = outcome, &r, r.candidate(), sig
		st.Status, st.Outcome = StepDone, outcome
		if outcome == OutcomeBlocked {
			st.Status = StepBlocked
		}
		if err := setStepTx(t, mission, st); err != nil {
			return err
		}
		if err := s.afterReportTx(t, m, st, cur, r); err != nil {
			return err
		}
		m, err = s.missionIn(ctx, t, mission)
		if err != nil {
			return err
		}
		_, err = s.advanceTx(t, m)
		return err
	})
	if err == nil {
		s.deliverSoon()
	}
	return outcome, err
}

// afterReportTx applies the repair rules: a failed check reopens its build, and a repair that
// changed nothing goes back to the check's failure for the lead's judgement.
func (s *Service) afterReportTx(t *ledger.Tx, m Mission, st *MissionStep, cur *Attempt, r StepReport) error {
	if st.Kind == KindBuild && cur.Reason == "repair" && cur.Outcome == OutcomeDone && unchanged(cur.Tested, r) {
		for i := range m.Steps {
			v := &m.Steps[i]
			if v.Kind != KindVerify || v.Verifies != st.ID || v.Status != StepWaiting || len(v.Attempts) == 0 {
				continue
			}
			v.Status, v.Outcome = StepDone, OutcomeFail
			if err := setStepTx(t, m.ID, v); err != nil {
				return err
			}
			return outboxTx(t, m.ID, EffectJudge, "judge:"+m.ID+":"+v.ID+":"+strconv.Itoa(v.Attempt),
				map[string]any{"step": v.ID, "why": fmt.Sprintf("The repair of %s changed nothing (still %s).", st.ID, cur.Tested)})
		}
		return nil
	}
	if st.Kind != KindVerify || cur.Outcome != OutcomeFail {
		return nil
	}
	var earlier []checkFailure
	for _, a := range st.Attempts[:len(st.Attempts)-1] {
		if a.Outcome == OutcomeFail {
			earlier = append(earlier, checkFailure{Signature: a.Signature, Candidate: a.Tested})
		}
	}
	now := checkFailure{Signature: cur.Signature, Candidate: cur.Tested}
	switch repairDecision(st.Verifies, earlier, now) {
	case RepairAgain:
		b := m.step(st.Verifies)
		tested := cur.Tested
		if tested == "" {
			tested = r.candidate()
		}
		if err := s.openAttemptTx(t, m, b, "repair", repairNote(st, r, tested), tested); err != nil {
			return err
		}
		st.Status, st.Outcome = StepWaiting, OutcomeUnknown // it runs again as a retest of the repair
		return setStepTx(t, m.ID, st)
	case RepairJudge:
		return outboxTx(t, m.ID, EffectJudge, "judge:"+m.ID+":"+st.ID+":"+strconv.Itoa(st.Attempt),
			map[string]any{"step": st.ID, "why": "The same check failed the same way again."})
	case RepairAsk:
		return outboxTx(t, m.ID, EffectAskOwner, "ask:"+m.ID+":"+st.ID+":"+strconv.Itoa(st.Attempt),
			map[string]any{"step": st.ID, "why": "The same check failed the same way a third time."})
	}
	return nil
}

// repairNote is what a reopened build is told: the failing checks and the commit they tested.
func repairNote(v *MissionStep, r StepReport, tested string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The check %s failed", v.ID)
	if tested != "" {
		fmt.Fprintf(&b, " on %s", tested)
	}
	b.WriteString(". Repair it and report the new commit:\n")
	for _, c := range r.Checks {
		if c.Verdict == "fail" {
			fmt.Fprintf(&b, "- %s: %s\n", c.Name, c.Note)
		}
	}
	return strings.TrimSpace(b.String())
}

// StopMission stops a plan: its turns stop, steps that have not ended become stopped, the agent
// runs its steps started are stopped, effects not yet delivered are dropped and nobody reports.
func (s *Service) StopMission(ctx context.Context, id string) (Mission, error) {
	var m Mission
	err := s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		var err error
		m, err = s.lockMissionTx(t, id)
		if err != nil {
			return err
		}
		if m.ended() {
			return nil
		}
		for i := range m.Steps {
			st := &m.Steps[i]
			if st.Status == StepWaiting || st.Status == StepWorking {
				st.Status = StepStopped
				if err := setStepTx(t, id, st); err != nil {
					return err
				}
			}
		}
		m.State = MissionStopped
		now := store.Stamp(t.Now())
		if _, err := t.ExecContext(t.Context(), "UPDATE node_missions SET state = 'stopped', ended_at = ? WHERE id = ?", now, id); err != nil {
			return err
		}
		if _, err := t.ExecContext(t.Context(), "UPDATE node_outbox SET delivered_at = ?, error = 'stopped' WHERE mission_id = ? AND delivered_at IS NULL", now, id); err != nil {
			return err
		}
		m.Ledger = m.ledger()
		if err := releaseClaimsTx(t, m); err != nil {
			return err
		}
		return s.refreshCardTx(t, m)
	})
	if err != nil {
		return Mission{}, err
	}
	s.deliverSoon() // a step of another mission may wait for a place this one held
	prefix := "work:" + id + ":"
	s.dropQueued("lane LIKE ?", prefix+"%")
	s.stopRunning(func(t Turn) bool { return strings.HasPrefix(t.Lane, prefix) })
	s.stopMissionRuns(ctx, id)
	return m, nil
}
