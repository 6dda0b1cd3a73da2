package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
)

// watchChanges feeds the event routines Ensemble's own live frames for tasks and pages, until the
// Service closes (spec 002 §6.5 Bursts).
func (s *Service) watchChanges() {
	if s.cfg.Bus == nil {
		return
	}
	s.onBus(256, "the event routines' changes", nil, func(ev events.Event) {
		if err := s.routineChange(s.life, ev); err != nil && s.life.Err() == nil {
			s.log.Warn("node: give a change to the event routines", "err", err)
		}
	})
}

// routineChange adds one task or page change to the occurrence gathering each event routine that
// watches it. A routine whose run is still going starts nothing from it: the change is its own.
func (s *Service) routineChange(ctx context.Context, ev events.Event) error {
	on, action, ok := strings.Cut(string(ev.Kind), ".")
	if !ok || on != "task" && on != "page" {
		return nil
	}
	var rec struct {
		ID      string `json:"id"`
		Title   string `json:"title"`
		SpaceID string `json:"spaceId"`
	}
	json.Unmarshal(ev.Data, &rec)
	rs, err := s.queryRoutines(ctx, s.cfg.Store.Reader(), "WHERE r.trigger = 'event' AND r.status = 'active' AND r.event_on = ? AND r.event_space IN ('', ?)",
		on, rec.SpaceID)
	if err != nil || len(rs) == 0 {
		return err
	}
	change := fmt.Sprintf("%s %s: %s (%s)", on, action, quoteTitle(rec.Title), rec.ID)
	return s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		for _, r := range rs {
			var going int
			if err := tx.QueryRowContext(tx.Context(), "SELECT count(*) FROM node_routine_runs WHERE routine_id = ? AND status = 'started'", r.ID).Scan(&going); err != nil {
				return fmt.Errorf("node: read a routine's runs: %w", err)
			}
			if going > 0 {
				continue
			}
			if _, err := s.gatherTx(tx, r, "event", change); err != nil {
				return err
			}
		}
		return nil
	})
}

func quoteTitle(t string) string {
	if t == "" {
		return "(untitled)"
	}
	if r := []rune(t); len(r) > 120 {
		t = string(r[:120]) + "…"
	}
	return "“" + t + "”"
}
