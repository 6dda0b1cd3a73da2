package node

import (
	"encoding/json"
	"fmt"

	"github.com/ensemblework/ensemble/runtime/ledger"
)

// KindPlan is a mission's card: its data is the mission as the tables hold it, rebuilt on every
// change (spec 002 §6.2).
const KindPlan = "plan"

// planCardData is the card's data.
type planCardData struct {
	MissionID    string            `json:"missionId"`
	Goal         string            `json:"goal"`
	State        string            `json:"state"`
	Revision     int               `json:"revision"`
	Steps        []planCardStep    `json:"steps"`
	Requirements map[string]string `json:"requirements"`
}

type planCardStep struct {
	ID       string    `json:"id"`
	NodeID   string    `json:"nodeId"`
	Kind     string    `json:"kind"`
	Brief    string    `json:"brief"`
	After    []string  `json:"after"`
	Status   string    `json:"status"`
	Outcome  string    `json:"outcome"`
	Held     bool      `json:"held"`
	HeldBy   []string  `json:"heldBy,omitempty"`
	Attempts []Attempt `json:"attempts"`
}

func planCard(m Mission) (string, json.RawMessage) {
	d := planCardData{MissionID: m.ID, Goal: m.Goal, State: m.State, Revision: m.Revision, Requirements: m.Ledger}
	done := 0
	for _, st := range m.Steps {
		if st.Status == StepDone && (st.Outcome == OutcomeDone || st.Outcome == OutcomePass) {
			done++
		}
		d.Steps = append(d.Steps, planCardStep{ID: st.ID, NodeID: st.NodeID, Kind: st.Kind, Brief: st.Brief, After: nonNil(st.After),
			Status: st.Status, Outcome: st.Outcome, Held: st.Status == StepWaiting && len(st.HeldBy) > 0, HeldBy: st.HeldBy,
			Attempts: append([]Attempt{}, st.Attempts...)})
	}
	b, _ := json.Marshal(d)
	return fmt.Sprintf("%s: %d of %d steps done (%s).", m.Goal, done, len(m.Steps), m.State), b
}

// refreshCardTx rewrites the mission's card from m.
func (s *Service) refreshCardTx(t *ledger.Tx, m Mission) error {
	if m.MessageID == "" {
		return nil
	}
	msg, err := s.messageIn(t.Context(), t, m.MessageID)
	if err != nil {
		return err
	}
	msg.Body, msg.Data = planCard(m)
	return s.updateMessageTx(t, msg)
}
