package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Start recovers the queue as the last process left it and runs turns until Close (spec 002
// §5.1). A turn cut off before it acted runs again; one cut off after it acted is not run twice:
// a new turn in its lane resumes it with a note of what it ran. Queued turns older than an hour
// are dropped. Cards still waiting are put on Needs me again.
func (s *Service) Start(ctx context.Context) error {
	if err := s.recoverTurns(ctx); err != nil {
		return err
	}
	if err := s.remirrorCards(ctx); err != nil {
		s.log.Warn("node: put waiting cards on Needs me again", "err", err)
	}
	if err := s.expireDeviceCodes(ctx); err != nil {
		s.log.Warn("node: end the sign-in codes of commands a restart ended", "err", err)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.loop()
	}()
	s.watchTasks()
	s.startRunWatch(ctx)
	s.startRoutines()
	s.watchRuns()
	s.sweepOutbox()
	s.every(HelperSweep, "sweep helpers", s.sweepHelpers)
	return nil
}

func (s *Service) recoverTurns(ctx context.Context) error {
	return s.cfg.Writer.Exec(ctx, func(t *ledger.Tx) error {
		now := store.Stamp(t.Now())
		running, err := s.queryTurns(t.Context(), t, "WHERE status = 'running' ORDER BY created_at")
		if err != nil {
			return err
		}
		for _, tr := range running {
			if tr.ActedAt == nil {
				if _, err := t.ExecContext(t.Context(), "UPDATE node_turns SET status = 'queued', started_at = NULL WHERE id = ?", tr.ID); err != nil {
					return fmt.Errorf("node: requeue a turn: %w", err)
				}
				continue
			}
			if _, err := t.ExecContext(t.Context(), "UPDATE node_turns SET status = 'failed', error = 'cut off by a restart after it acted', ended_at = ? WHERE id = ?", now, tr.ID); err != nil {
				return fmt.Errorf("node: end a cut-off turn: %w", err)
			}
			next := Turn{NodeID: tr.NodeID, RoomID: tr.RoomID, Lane: tr.Lane, Private: tr.Private, Reason: ReasonResume,
				ByOwner: tr.ByOwner, MessageID: tr.MessageID, UptoSeq: tr.UptoSeq, Depth: tr.Depth,
				OperationID: "resume:" + tr.ID, OriginID: originOf(tr), Note: joinNotes(tr.Note, resumeNote(tr.Receipts)),
				ConversationID: tr.ConversationID, ReportTo: tr.ReportTo}
			if err := s.enqueueTx(t, next); err != nil {
				return err
			}
		}
		_, err = t.ExecContext(t.Context(), "UPDATE node_turns SET status = 'dropped', ended_at = ?, error = 'queued for over an hour' WHERE status = 'queued' AND created_at < ?",
			now, store.Stamp(t.Now().Add(-QueuedMaxAge)))
		if err != nil {
			return fmt.Errorf("node: drop stale turns: %w", err)
		}
		return nil
	})
}

// originOf is the turn a resumed or retried turn continues: the first of its line.
func originOf(t Turn) string {
	if t.OriginID != "" {
		return t.OriginID
	}
	return t.ID
}

func joinNotes(a, b string) string {
	return strings.TrimSpace(strings.TrimSpace(a) + "\n\n" + strings.TrimSpace(b))
}

// resumeNote tells a resumed turn what its cut-off predecessor already did, so it does not do it
// again.
func resumeNote(rs []Receipt) string {
	var lines []string
	for _, r := range rs {
		if r.Status == "done" || r.Status == "proposed" {
			lines = append(lines, fmt.Sprintf("- %s: %s", r.Name, r.Summary))
		}
	}
	if len(lines) == 0 {
		return "Your previous turn on this was cut off by a restart after it started acting. Check what is already done before doing anything again."
	}
	return "Your previous turn on this was cut off by a restart after it ran these tools. They are done: do not run them again; carry on from there.\n" + strings.Join(lines, "\n")
}

// loop runs queued turns as lanes and capacity allow, until the Service closes.
func (s *Service) loop() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := s.schedule()
		wait := time.Hour
		if !next.IsZero() {
			wait = max(time.Until(next), 10*time.Millisecond)
		}
		timer.Reset(wait)
		select {
		case <-s.life.Done():
			return
		case <-s.kick:
		case <-timer.C:
		}
	}
}

// schedule starts every queued turn that may run now, and returns when the next one waiting for
// its time is due (zero for none).
func (s *Service) schedule() time.Time {
	ctx := s.life
	queued, err := s.queryTurns(ctx, s.cfg.Store.Reader(), "WHERE status = 'queued' ORDER BY created_at, rowid")
	if err != nil {
		s.log.Warn("node: read the queue", "err", err)
		return s.now().Add(time.Second)
	}
	var next time.Time
	now := s.now()
	for _, t := range queued {
		if t.RunAfter.After(now) {
			if next.IsZero() || t.RunAfter.Before(next) {
				next = t.RunAfter
			}
			continue
		}
		if !s.mayStart(t) {
			continue
		}
		if !s.claim(ctx, t) {
			continue
		}
		rt := s.track(t)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(rt)
			s.runTurn(rt)
		}()
	}
	return next
}

// mayStart reports whether t's lane is free and there is capacity for it.
func (s *Service) mayStart(t Turn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[t.Lane] != nil {
		return false
	}
	talk, work, perNode := 0, 0, 0
	for _, rt := range s.running {
		if isConvLane(rt.turn.Lane) {
			talk++
		} else {
			work++
			if rt.turn.NodeID == t.NodeID {
				perNode++
			}
		}
	}
	if isConvLane(t.Lane) {
		return talk < s.cfg.Talk
	}
	return work < s.cfg.Work && perNode < s.cfg.PerNode
}

// claim moves t from queued to running, so no other scheduler pass starts it.
func (s *Service) claim(ctx context.Context, t Turn) bool {
	var n int64
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		res, err := tx.ExecContext(tx.Context(), "UPDATE node_turns SET status = 'running', started_at = ? WHERE id = ? AND status = 'queued'",
			store.Stamp(tx.Now()), t.ID)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		s.log.Warn("node: start a turn", "turn", t.ID, "err", err)
	}
	return n == 1
}

func (s *Service) track(t Turn) *runningTurn {
	ctx, cancel := context.WithCancelCause(s.life)
	rt := &runningTurn{turn: t, cancel: cancel, ctx: ctx}
	rt.acted.Store(t.ActedAt != nil)
	s.mu.Lock()
	s.running[t.Lane] = rt
	s.mu.Unlock()
	return rt
}

func (s *Service) untrack(rt *runningTurn) {
	rt.cancel(nil)
	s.mu.Lock()
	if s.running[rt.turn.Lane] == rt {
		delete(s.running, rt.turn.Lane)
	}
	s.mu.Unlock()
	s.wake()
}

// markActed records, before the tool runs, that the turn has started acting: from now on a
// restart resumes it instead of running it again.
func (s *Service) markActed(rt *runningTurn) error {
	if rt.acted.Swap(true) {
		return nil
	}
	return s.cfg.Writer.Exec(context.WithoutCancel(rt.ctx), func(t *ledger.Tx) error {
		_, err := t.ExecContext(t.Context(), "UPDATE node_turns SET acted_at = ? WHERE id = ? AND acted_at IS NULL", store.Stamp(t.Now()), rt.turn.ID)
		return err
	})
}

// addReceipt writes one tool's receipt to its turn as the tool ends.
func (s *Service) addReceipt(rt *runningTurn, r Receipt) {
	b, _ := json.Marshal(r)
	err := s.cfg.Writer.Exec(context.WithoutCancel(rt.ctx), func(t *ledger.Tx) error {
		_, err := t.ExecContext(t.Context(), "UPDATE node_turns SET receipts = json_insert(receipts, '$[#]', json(?)) WHERE id = ?", string(b), rt.turn.ID)
		return err
	})
	if err != nil {
		s.log.Warn("node: write a receipt", "turn", rt.turn.ID, "err", err)
	}
}

// every runs f at once, then every d until the service closes.
func (s *Service) every(d time.Duration, what string, f func(context.Context) error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			if err := f(s.life); err != nil && s.life.Err() == nil {
				s.log.Warn("node: "+what, "err", err)
			}
			select {
			case <-s.life.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// onBus hands every event on the bus to handle until the service closes. When the bus drops the
// subscription for falling behind (a burst of thousands of changes), it subscribes again, saying
// so in a warning (what names the follower): catchUp, when set, reads what it missed, as it does
// first of all.
func (s *Service) onBus(size int, what string, catchUp func(context.Context), handle func(events.Event)) {
	sub := s.cfg.Bus.Subscribe(size)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			if catchUp != nil {
				catchUp(s.life)
			}
			if !s.follow(sub, handle) {
				return
			}
			s.log.Warn("node: fell behind following "+what+"; following again", "err", sub.Err())
			sub = s.cfg.Bus.Subscribe(size)
		}
	}()
}

// follow hands sub's events to handle until it ends; it reports whether the bus dropped it for
// falling behind, so that it is worth following again.
func (s *Service) follow(sub *events.Subscription, handle func(events.Event)) bool {
	defer sub.Close()
	for {
		select {
		case <-s.life.Done():
			return false
		case <-sub.Done():
			return s.life.Err() == nil && errors.Is(sub.Err(), events.ErrSlow)
		case ev := <-sub.C:
			handle(ev)
		}
	}
}
