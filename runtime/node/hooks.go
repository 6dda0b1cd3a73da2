package node

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// ErrHookRefused is every refusal of a routine's webhook, the same whatever the reason (no such
// routine, not a webhook, paused, no token or the wrong one), so a caller learns nothing from it.
var ErrHookRefused = problem.Forbidden("This webhook refuses the call.")

// HookDedupe is how long a delivery id is remembered: the same id again within it starts nothing.
const HookDedupe = 24 * time.Hour

// maxDeliveryID bounds the delivery id kept.
const maxDeliveryID = 200

// HookDelivery is one call of a routine's webhook.
type HookDelivery struct {
	// ID is the caller's delivery id (X-GitHub-Delivery, Idempotency-Key, X-Request-Id); empty,
	// a SHA-256 of the body stands for it.
	ID   string
	Body []byte
}

// HookResult says what a call did.
type HookResult struct {
	RunID string `json:"runId,omitempty"`
	// Duplicate: the delivery id was seen in the last day, so the call started nothing.
	Duplicate bool `json:"duplicate,omitempty"`
}

// Deliver takes a call of routine id's webhook with its token: a delivery seen in the last day
// starts nothing; another joins the occurrence gathering the calls of its window (hook:<window>),
// its body (the first MaxHookBody characters) kept for the node as information.
func (s *Service) Deliver(ctx context.Context, id, token string, d HookDelivery) (HookResult, error) {
	r, err := s.routineIn(ctx, s.cfg.Store.Reader(), id)
	stored := strings.Repeat("0", 64)
	if err == nil && r.tokenHash != "" {
		stored = r.tokenHash
	}
	match := subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(stored)) == 1
	if err != nil || !match || token == "" || r.Trigger.Kind != TriggerWebhook || r.Status != StatusActive {
		return HookResult{}, ErrHookRefused
	}
	delivery := strings.TrimSpace(d.ID)
	if delivery == "" {
		sum := sha256.Sum256(d.Body)
		delivery = "sha256:" + hex.EncodeToString(sum[:])
	}
	if len(delivery) > maxDeliveryID {
		delivery = delivery[:maxDeliveryID]
	}
	change := fmt.Sprintf("webhook call (delivery %s), its body:\n%s", delivery, hookBody(d.Body))
	var out HookResult
	err = s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		now := s.now()
		if _, err := tx.ExecContext(tx.Context(), "DELETE FROM node_hook_deliveries WHERE received_at < ?", store.Stamp(now.Add(-HookDedupe))); err != nil {
			return fmt.Errorf("node: forget old deliveries: %w", err)
		}
		res, err := tx.ExecContext(tx.Context(), `INSERT INTO node_hook_deliveries (id, routine_id, delivery_id, received_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (routine_id, delivery_id) DO NOTHING`, ledger.NewID("hkd_"), r.ID, delivery, store.Stamp(now))
		if err != nil {
			return fmt.Errorf("node: record a delivery: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			out.Duplicate = true
			return nil
		}
		if out.RunID, err = s.gatherTx(tx, r, "hook", change); err != nil {
			return err
		}
		_, err = tx.ExecContext(tx.Context(), "UPDATE node_hook_deliveries SET run_id = ? WHERE routine_id = ? AND delivery_id = ?", out.RunID, r.ID, delivery)
		return err
	})
	return out, err
}

// hookBody is the part of a body kept: valid UTF-8, at most MaxHookBody characters.
func hookBody(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if utf8.RuneCountInString(s) <= MaxHookBody {
		return s
	}
	return string([]rune(s)[:MaxHookBody]) + "… (the rest was cut)"
}

// gatherTx adds one change to the occurrence gathering r's changes (prefix event or hook), in one
// statement, at most MaxRoutineChanges listed; when none is open (or it has started) it opens a
// new one, due when its window ends. It returns the occurrence's id.
func (s *Service) gatherTx(tx *ledger.Tx, r Routine, prefix, change string) (string, error) {
	ctx := tx.Context()
	var id string
	err := tx.QueryRowContext(ctx, `UPDATE node_routine_runs SET changes = CASE WHEN json_array_length(changes) < ? THEN json_insert(changes, '$[#]', ?)
		ELSE changes END WHERE id = (SELECT id FROM node_routine_runs WHERE routine_id = ? AND status = 'gathering' AND key LIKE ? ORDER BY created_at DESC LIMIT 1)
		RETURNING id`, MaxRoutineChanges, change, r.ID, prefix+":%").Scan(&id)
	if err == nil {
		return id, nil
	}
	now := s.now()
	id = ledger.NewID("rrn_")
	key := prefix + ":" + now.UTC().Format(time.RFC3339Nano)
	window := time.Duration(r.Trigger.WindowSeconds) * time.Second
	if err := s.recordRunTx(tx, id, r.ID, key, RunGathering, now.Add(window), []string{change}); err != nil {
		return "", err
	}
	return id, nil
}

// IsHookRefused reports whether err is a refusal of a webhook's call.
func IsHookRefused(err error) bool { return errors.Is(err, ErrHookRefused) }
