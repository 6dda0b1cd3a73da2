package node

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// A dispatched step's place on the computer (spec 002 §8.15): the folder's checkout for serial
// work, an integration step and its check; a build's own worktree in parallel work, with a free
// development-server port (4300–4399). A claim blocks only its resource; a step that finds its
// place taken waits, and its start stays in the outbox until the holder lets go. Claims end with
// their step, or their mission.

const (
	firstPort = 4300
	lastPort  = 4399
)

// device names this computer in claim keys: the runtime runs on one.
const device = "local"

// place is where a step works: the claims it holds, or the step it waits for.
type place struct {
	Worktree   bool
	Port       int
	WaitingFor string // the step holding the place, when the step must wait
}

// placeKeys are the resources a step needs, by kind.
func placeKeys(m Mission, st *MissionStep) (key, kind string) {
	c := m.Contract.Constraints
	isolated := c.Parallel == "worktrees" || c.Parallel == "snapshots"
	integrates := false
	for _, p := range m.Contract.Steps {
		if p.ID == st.ID || p.ID == st.Verifies {
			integrates = integrates || len(p.Integrates) > 0
		}
	}
	if isolated && !integrates && (st.Kind == KindBuild || st.Kind == KindVerify) {
		build := st.ID
		if st.Kind == KindVerify {
			build = st.Verifies
		}
		return device + ":worktree:" + m.ID + "/" + build, "worktree"
	}
	return device + ":checkout:" + c.Folder, "checkout"
}

// placeStepTx takes a step's place, or says for whom it waits. A claim whose step has ended, or
// whose mission is gone or over, is let go as it is asked for.
func placeStepTx(t *ledger.Tx, m Mission, st *MissionStep) (place, error) {
	ctx := t.Context()
	key, kind := placeKeys(m, st)
	p := place{Worktree: kind == "worktree"}
	if _, err := t.ExecContext(ctx, `DELETE FROM node_claims WHERE key = ? AND NOT EXISTS (SELECT 1 FROM node_steps s
		JOIN node_missions n ON n.id = s.mission_id WHERE s.mission_id = node_claims.mission_id AND s.id = node_claims.step_id
		AND s.status = 'working' AND n.state IN ('running', 'reporting'))`, key); err != nil {
		return p, fmt.Errorf("node: let go of a stale claim: %w", err)
	}
	var holderMission, holderStep string
	err := t.QueryRowContext(ctx, "SELECT mission_id, step_id FROM node_claims WHERE key = ?", key).Scan(&holderMission, &holderStep)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := t.ExecContext(ctx, "INSERT INTO node_claims (key, kind, mission_id, step_id, created_at) VALUES (?, ?, ?, ?, ?)",
			key, kind, m.ID, st.ID, store.Stamp(t.Now())); err != nil {
			return p, fmt.Errorf("node: claim a place: %w", err)
		}
	case err != nil:
		return p, err
	case holderMission != m.ID || (holderStep != st.ID && !(kind == "worktree" && holderStep == st.Verifies)):
		p.WaitingFor = holderStep
		return p, nil
	}
	if m.Contract.Constraints.Parallel == "worktrees" || m.Contract.Constraints.Parallel == "snapshots" {
		port, err := claimPortTx(t, m.ID, st.ID)
		if err != nil {
			return p, err
		}
		p.Port = port
	}
	return p, nil
}

// claimPortTx gives the step a free development-server port, keeping the one it has.
func claimPortTx(t *ledger.Tx, mission, step string) (int, error) {
	ctx := t.Context()
	var have int
	err := t.QueryRowContext(ctx, "SELECT port FROM node_claims WHERE kind = 'port' AND mission_id = ? AND step_id = ?", mission, step).Scan(&have)
	if err == nil {
		return have, nil
	}
	if _, err := t.ExecContext(ctx, `DELETE FROM node_claims WHERE kind = 'port' AND NOT EXISTS (SELECT 1 FROM node_steps s
		WHERE s.mission_id = node_claims.mission_id AND s.id = node_claims.step_id AND s.status = 'working')`); err != nil {
		return 0, err
	}
	for port := firstPort; port <= lastPort; port++ {
		res, err := t.ExecContext(ctx, `INSERT INTO node_claims (key, kind, mission_id, step_id, port, created_at)
			VALUES (?, 'port', ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
			device+":port:"+strconv.Itoa(port), mission, step, port, store.Stamp(t.Now()))
		if err != nil {
			return 0, fmt.Errorf("node: claim a port: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return port, nil
		}
	}
	return 0, nil // every port is in use: the packet names none
}

// releaseClaimsTx lets go of the claims of the mission's steps that are not working (all of them
// when the mission has ended).
func releaseClaimsTx(t *ledger.Tx, m Mission) error {
	if m.ended() {
		_, err := t.ExecContext(t.Context(), "DELETE FROM node_claims WHERE mission_id = ?", m.ID)
		return err
	}
	_, err := t.ExecContext(t.Context(), `DELETE FROM node_claims WHERE mission_id = ?
		AND step_id NOT IN (SELECT id FROM node_steps WHERE mission_id = ? AND status = 'working')`, m.ID, m.ID)
	return err
}
