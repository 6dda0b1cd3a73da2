package node

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// ToolPlanRevise changes a running plan its node leads (spec 002 §6.2): steps added, waiting
// steps cancelled, constraints merged, requirements added or deferred. The revised plan is
// validated whole, as node_plan's is; the revision number goes up.
const ToolPlanRevise = "node_plan_revise"

func init() { actingTools[ToolPlanRevise] = true }

// PlanRevision is node_plan_revise's argument.
type PlanRevision struct {
	Plan   string     `json:"plan" jsonschema:"the plan's id (msn_…)" check:"minLength=1,maxLength=100"`
	Add    []PlanStep `json:"add,omitempty" jsonschema:"new steps; their after names new or existing step ids"`
	Cancel []string   `json:"cancel,omitempty" jsonschema:"ids of steps that have not started, to drop" check:"maxItems=30,items.maxLength=60"`
	// Constraints are merged into the plan's: a field given replaces the plan's, an empty one clears it.
	Constraints  map[string]string `json:"constraints,omitempty" jsonschema:"constraints to change; an empty value clears one"`
	Requirements []PlanRequirement `json:"requirements,omitempty" jsonschema:"new requirements"`
	Defer        []PlanDeferral    `json:"defer,omitempty" jsonschema:"requirements that will not be done now, with why"`
}

func planReviseTool(def func(name, desc string) tools.Tool) tools.Tool {
	return tools.Define(def(ToolPlanRevise, "Change a running plan you lead: add steps, cancel steps that have not started, change its constraints, add or defer requirements. The whole plan is checked again."),
		tools.Typed[PlanRevision]{Run: func(ctx context.Context, tc *tools.ToolContext, in PlanRevision) (tools.Result, error) {
			c, err := turnOf(tc)
			if err != nil {
				return tools.Result{}, err
			}
			m, err := c.s.revisePlan(ctx, c.node.ID, in)
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Summary: fmt.Sprintf("Plan %s is at revision %d, with %d steps.", m.ID, m.Revision, len(m.Steps))}, nil
		}})
}

// revisePlan applies a revision to a running mission nodeID leads, in one transaction.
func (s *Service) revisePlan(ctx context.Context, nodeID string, in PlanRevision) (Mission, error) {
	var m Mission
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		cur, err := s.lockMissionTx(tx, in.Plan)
		if err != nil || cur.LeadID != nodeID {
			return problem.NotFound("You lead no plan %q.", in.Plan)
		}
		if cur.ended() {
			return problem.Conflict("The plan “%s” has ended (%s); make a new plan for what is left.", cur.Goal, cur.State)
		}
		room, err := s.roomIn(tx.Context(), tx, cur.RoomID)
		if err != nil {
			return err
		}
		p, err := revised(cur, in)
		if err != nil {
			return err
		}
		crew := map[string]string{}
		for _, mb := range room.Members {
			if mb.NodeID != nodeID || len(room.Members) == 1 {
				crew[mb.Slug] = mb.Role
			}
		}
		if p, err = validatePlan(p, crew); err != nil {
			return problem.Invalid("%s", err.Error())
		}
		for _, id := range in.Cancel {
			st := cur.step(id)
			st.Status, st.HeldBy = StepStopped, []string{"cancelled"}
			if err := setStepTx(tx, cur.ID, st); err != nil {
				return err
			}
		}
		if err := insertStepsTx(tx, cur.ID, room, p.Steps[len(p.Steps)-len(in.Add):], len(cur.Steps)); err != nil {
			return err
		}
		contract, _ := json.Marshal(p)
		if _, err := tx.ExecContext(tx.Context(), "UPDATE node_missions SET contract = ?, revision = revision + 1 WHERE id = ?",
			string(contract), cur.ID); err != nil {
			return fmt.Errorf("node: revise a plan: %w", err)
		}
		if m, err = s.missionIn(tx.Context(), tx, cur.ID); err != nil {
			return err
		}
		m, err = s.advanceTx(tx, m)
		return err
	})
	if err != nil {
		return Mission{}, err
	}
	s.deliverSoon()
	return m, nil
}

// revised is the plan a revision makes of m's: cancelled steps out, added steps last, the
// constraints merged, requirements and deferrals added.
func revised(m Mission, in PlanRevision) (PlanInput, error) {
	p := m.Contract
	for _, id := range in.Cancel {
		st := m.step(id)
		switch {
		case st == nil:
			return p, problem.Invalid("The plan has no step %q to cancel.", id)
		case st.Status != StepWaiting:
			return p, problem.Invalid("Step %q has started (%s); only a step that has not started can be cancelled.", id, st.Status)
		}
	}
	p.Steps = slices.DeleteFunc(slices.Clone(p.Steps), func(st PlanStep) bool { return slices.Contains(in.Cancel, st.ID) })
	for _, st := range m.Steps {
		// A step the plan already stopped stays out of the check, as a cancelled one does.
		if st.Status == StepStopped {
			p.Steps = slices.DeleteFunc(p.Steps, func(ps PlanStep) bool { return ps.ID == st.ID })
		}
	}
	p.Steps = append(p.Steps, in.Add...)
	if len(in.Constraints) > 0 {
		merged := map[string]any{}
		raw, _ := json.Marshal(p.Constraints)
		_ = json.Unmarshal(raw, &merged)
		for k, v := range in.Constraints {
			if v == "" {
				delete(merged, k)
			} else {
				merged[k] = v
			}
		}
		raw, _ = json.Marshal(merged)
		var c PlanConstraints
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return p, problem.Invalid("The constraints are not the plan's: %v.", err)
		}
		p.Constraints = c
	}
	p.Requirements = append(slices.Clone(p.Requirements), in.Requirements...)
	p.Deferred = append(slices.Clone(p.Deferred), in.Defer...)
	return p, nil
}
