package node

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// The plan tools (spec 002 §6.2–§6.3): node_plan for a crew's lead in a turn its owner started;
// node_step_report and node_step_blocked for a step's own turn.
const (
	ToolPlan        = "node_plan"
	ToolStepReport  = "node_step_report"
	ToolStepBlocked = "node_step_blocked"
)

type stepBlockedIn struct {
	Why string `json:"why" jsonschema:"what stands in the way, in a sentence for your owner" check:"minLength=1,maxLength=1000"`
}

func planTools() []tools.Tool {
	tool := func(name, desc string) tools.Tool {
		return tools.Tool{Name: name, Description: desc, Area: assistant.AgentArea, Risk: tools.RiskLow}
	}
	return []tools.Tool{
		tools.Define(tool(ToolPlan, "Hand your owner's request to this crew as one plan: its goal, the requirements with acceptance criteria, the constraints written once, and the steps (each for a member, with kind, brief and after). Every build with acceptance criteria is followed by a verify step. The steps that can start, start when this turn ends."),
			tools.Typed[PlanInput]{Run: func(ctx context.Context, tc *tools.ToolContext, in PlanInput) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				m, err := c.s.plan(ctx, c, in)
				if err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Summary: fmt.Sprintf("Plan %s made with %d steps.", m.ID, len(m.Steps)),
					Data: map[string]any{"plan": m.ID, "note": "The plan card is in the crew; steps start on their own. Do not announce each one."}}, nil
			}}),
		tools.Define(tool(ToolStepReport, "End your plan step with its result: outcome (done, pass, fail), a summary, and for a check every check you ran with its verdict and the acceptance criteria it covers. The outcome is computed from the checks."),
			tools.Typed[StepReport]{Run: func(ctx context.Context, tc *tools.ToolContext, in StepReport) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.stepToolReport(ctx, c, in)
			}}),
		tools.Define(tool(ToolStepBlocked, "End your plan step as blocked, saying what stands in the way."),
			tools.Typed[stepBlockedIn]{Run: func(ctx context.Context, tc *tools.ToolContext, in stepBlockedIn) (tools.Result, error) {
				c, err := turnOf(tc)
				if err != nil {
					return tools.Result{}, err
				}
				return c.s.stepToolReport(ctx, c, StepReport{Outcome: "blocked", Summary: in.Why, BlockedBy: in.Why})
			}}),
		planReviseTool(tool),
	}
}

// planToolsFor are the plan tools a turn offers.
func planToolsFor(t Turn, r Room, n Node) []string {
	var out []string
	if t.ByOwner && isConvLane(t.Lane) && r.Kind == RoomCrew && r.Lead == n.ID {
		out = append(out, ToolPlan, ToolPlanRevise)
	}
	if _, _, _, ok := stepOfTurn(t); ok {
		out = append(out, ToolStepReport, ToolStepBlocked)
	}
	return out
}

// plan makes a mission from node_plan.
func (s *Service) plan(ctx context.Context, c *turnCtx, in PlanInput) (Mission, error) {
	t := c.rt.turn
	switch {
	case !t.ByOwner:
		return Mission{}, problem.Invalid("Only a turn your owner started may make a plan.")
	case c.room.Kind != RoomCrew || c.room.Lead != c.node.ID:
		return Mission{}, problem.Invalid("node_plan is for a crew's lead, in its crew.")
	}
	crew := map[string]string{}
	for _, m := range c.room.Members {
		if m.NodeID != c.node.ID || len(c.room.Members) == 1 {
			crew[m.Slug] = m.Role
		}
	}
	p, err := validatePlan(in, crew)
	if err != nil {
		return Mission{}, problem.Invalid("%s", err.Error())
	}
	var m Mission
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		var err error
		m, err = s.createMissionTx(tx, c.room, c.node, p, t.ByOwner, t.ID)
		return err
	})
	if err != nil {
		return Mission{}, err
	}
	s.deliverSoon()
	return m, nil
}

// stepToolReport ends the step whose turn this is.
func (s *Service) stepToolReport(ctx context.Context, c *turnCtx, r StepReport) (tools.Result, error) {
	mission, step, n, ok := stepOfTurn(c.rt.turn)
	if !ok {
		return tools.Result{}, problem.Invalid("This turn is not a plan step's.")
	}
	outcome, err := s.ReportStep(ctx, mission, step, n, r)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Summary: fmt.Sprintf("Step %s ended: %s.", step, outcome),
		Data: map[string]string{"step": step, "outcome": outcome, "note": "Your step is over; end the turn."}}, nil
}

// stepTurnEndedTx is the end of a step's turn that did not report: it is asked once, in its lane,
// to report; after that its attempt is unverified.
func (s *Service) stepTurnEndedTx(tx *ledger.Tx, t Turn) error {
	mission, step, n, ok := stepOfTurn(t)
	if !ok {
		return nil
	}
	m, err := s.lockMissionTx(tx, mission)
	if err != nil {
		return nil // the mission is gone
	}
	st := m.step(step)
	if st == nil || m.ended() || st.Status != StepWorking || (n != 0 && st.Attempt != n) {
		return nil
	}
	a := st.Attempts[len(st.Attempts)-1]
	if a.JobID != "" {
		return nil // its agent run ends it
	}
	res, err := tx.ExecContext(tx.Context(), `UPDATE node_attempts SET report_asked = 1
		WHERE mission_id = ? AND step_id = ? AND n = ? AND report_asked = 0`, mission, step, st.Attempt)
	if err != nil {
		return err
	}
	if k, _ := res.RowsAffected(); k == 1 {
		return s.enqueueTx(tx, Turn{NodeID: t.NodeID, RoomID: t.RoomID, Lane: t.Lane, Reason: ReasonPlan, ByOwner: t.ByOwner,
			Depth: t.Depth, OperationID: "nudge:" + stepOp(mission, step, st.Attempt), ConversationID: t.ConversationID,
			Note: "Your plan step " + step + " is not over: end it now with node_step_report (with your checks) or node_step_blocked."})
	}
	rep, _ := json.Marshal(StepReport{Outcome: OutcomeUnverified, Summary: "It ended its turn without a report, twice."})
	if _, err := tx.ExecContext(tx.Context(), `UPDATE node_attempts SET outcome = 'unverified', report = ?, ended_at = ?
		WHERE mission_id = ? AND step_id = ? AND n = ?`, string(rep), store.Stamp(tx.Now()), mission, step, st.Attempt); err != nil {
		return err
	}
	st.Status, st.Outcome = StepDone, OutcomeUnverified
	if err := setStepTx(tx, mission, st); err != nil {
		return err
	}
	m, err = s.missionIn(tx.Context(), tx, mission)
	if err != nil {
		return err
	}
	_, err = s.advanceTx(tx, m)
	return err
}
