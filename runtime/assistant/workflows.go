package assistant

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// A held hub_run_workflow (runtime/tools) keeps its plan's hash and its steps' states in
// assistant_workflows beside its proposal, so Apply runs the plan the person was shown and the
// chat shows which step failed.

// planHash is the SHA-256 of a workflow's steps as canonical JSON (keys sorted, no spaces, numbers
// as written), which binds the saved proposal to the plan the person was shown.
func planHash(raw json.RawMessage) (string, error) {
	var in struct {
		Steps any `json:"steps"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return "", err
	}
	canon, err := json.Marshal(in.Steps)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// workflowStepState is one step's state as assistant_workflows keeps it.
type workflowStepState struct {
	ID      string `json:"id"`
	Tool    string `json:"tool"`
	Status  string `json:"status"` // waiting, applied, failed, not applied
	Summary string `json:"summary,omitempty"`
	Error   string `json:"error,omitempty"`
}

// saveWorkflow saves a held workflow's plan hash and its steps, waiting, beside its proposal in tx;
// other tools save nothing.
func saveWorkflow(tx *ledger.Tx, proposalID, convID, callID, tool string, input json.RawMessage) error {
	if tool != tools.WorkflowTool {
		return nil
	}
	var in tools.WorkflowPlan
	if err := json.Unmarshal(input, &in); err != nil {
		return err
	}
	hash, err := planHash(input)
	if err != nil {
		return err
	}
	steps := make([]workflowStepState, len(in.Steps))
	for i, s := range in.Steps {
		steps[i] = workflowStepState{ID: s.ID, Tool: s.Tool, Status: "waiting"}
	}
	stepsJSON, err := json.Marshal(steps)
	if err != nil {
		return err
	}
	now := store.Stamp(tx.Now())
	_, err = tx.ExecContext(tx.Context(), `INSERT INTO assistant_workflows
		(proposal_id, conversation_id, call_id, title, plan_hash, steps, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, proposalID, convID, callID, in.Title, hash, string(stepsJSON), now, now)
	return err
}

// checkWorkflowPlan refuses to apply a held workflow whose plan no longer hashes to the one saved
// when it was proposed.
func checkWorkflowPlan(tx *ledger.Tx, p proposal) error {
	if p.tool != tools.WorkflowTool {
		return nil
	}
	var saved string
	err := tx.QueryRowContext(tx.Context(), "SELECT plan_hash FROM assistant_workflows WHERE proposal_id = ?", p.id).Scan(&saved)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s can no longer be applied: its plan was not saved; propose it again.", p.preview)
	}
	if err != nil {
		return fmt.Errorf("assistant: read workflow %s: %w", p.id, err)
	}
	if hash, err := planHash(p.input); err != nil || hash != saved {
		return fmt.Errorf("The workflow's steps changed since they were proposed, so it was not applied; propose it again.")
	}
	return nil
}

// workflowApplied marks every step of an applied workflow applied, with its summary, in tx.
func workflowApplied(tx *ledger.Tx, p proposal, res tools.Result) error {
	if p.tool != tools.WorkflowTool {
		return nil
	}
	var data struct {
		Steps []tools.StepReceipt `json:"steps"`
	}
	if b, err := json.Marshal(res.Data); err == nil {
		json.Unmarshal(b, &data)
	}
	steps := make([]workflowStepState, len(data.Steps))
	for i, s := range data.Steps {
		steps[i] = workflowStepState{ID: s.ID, Tool: s.Tool, Status: applied, Summary: s.Summary}
	}
	return setWorkflowSteps(tx, p.id, steps)
}

// workflowFailed records, in tx, which step of a workflow failed and why; the rest were not
// applied (the steps before it were rolled back with it).
func workflowFailed(tx *ledger.Tx, p proposal, cause error) error {
	if p.tool != tools.WorkflowTool {
		return nil
	}
	var in tools.WorkflowPlan
	if err := json.Unmarshal(p.input, &in); err != nil {
		return err
	}
	n, stepErr, isStep := tools.FailedStep(cause)
	steps := make([]workflowStepState, len(in.Steps))
	for i, s := range in.Steps {
		steps[i] = workflowStepState{ID: s.ID, Tool: s.Tool, Status: "not applied"}
		if isStep && i == n-1 {
			steps[i].Status, steps[i].Error = failed, stepErr.Error()
		}
	}
	return setWorkflowSteps(tx, p.id, steps)
}

func setWorkflowSteps(tx *ledger.Tx, id string, steps []workflowStepState) error {
	stepsJSON, err := json.Marshal(steps)
	if err == nil {
		_, err = tx.ExecContext(tx.Context(), "UPDATE assistant_workflows SET steps = ?, updated_at = ? WHERE proposal_id = ?",
			string(stepsJSON), store.Stamp(tx.Now()), id)
	}
	if err != nil {
		return fmt.Errorf("assistant: save workflow %s steps: %w", id, err)
	}
	return nil
}
