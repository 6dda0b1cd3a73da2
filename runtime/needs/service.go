package needs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/store"
)

// Service keeps Needs me. It is safe for concurrent use.
type Service struct {
	db *sql.DB // reads
	w  *ledger.Writer

	mu      sync.Mutex // guards the following fields
	waiters map[string][]chan Decision
}

// New returns a Service over st, writing through w (the same Writer as every other write, so the
// events of all writes are published in seq order).
func New(st *store.Store, w *ledger.Writer) *Service {
	return &Service{db: st.Reader(), w: w, waiters: map[string][]chan Decision{}}
}

// AskOption changes how [Service.Ask] asks.
type AskOption func(*askOptions)

type askOptions struct{ unattended bool }

// Unattended answers the decision at once with its recommended option, recorded as answered by
// [ByUnattended]: for runs in Run unattended, whose decisions are still listed on the task.
func Unattended() AskOption { return func(o *askOptions) { o.unattended = true } }

// Ask puts d on Needs me and waits for the answer. It returns when the decision is answered; when it
// is withdrawn (its run ended), with a [*SettledError]; or when ctx ends, with ctx's error, after
// marking it expired, since the answer would reach no one. If an answer wins the race with ctx, that
// answer is returned. A decision that is not valid is refused with an invalid problem and nothing is
// stored.
func (s *Service) Ask(ctx context.Context, d Decision, opts ...AskOption) (Answer, error) {
	var o askOptions
	for _, f := range opts {
		f(&o)
	}
	d, err := prepare(d)
	if err != nil {
		return Answer{}, err
	}
	d.ID = ledger.NewID("dec_")
	// Wait before the decision exists, so an answer that comes at once is not missed.
	wake := s.wait(d.ID)
	defer s.stopWaiting(d.ID, wake)
	var settled Decision
	err = s.w.Exec(ctx, func(t *ledger.Tx) error {
		d.Created = t.Now()
		if err := insert(t, d); err != nil {
			return err
		}
		if err := t.Emit(KindCreated, d.ID, d); err != nil {
			return err
		}
		if o.unattended {
			var err error
			settled, err = answerTx(t, d.ID, d.unattended(), ByUnattended)
			return err
		}
		return nil
	})
	if err != nil {
		return Answer{}, fmt.Errorf("needs: ask: %w", err)
	}
	if o.unattended {
		return *settled.Answer, nil
	}
	select {
	case got := <-wake:
		return outcome(got)
	case <-ctx.Done():
	}
	_, err = s.close(context.WithoutCancel(ctx), d.ID, Expired)
	var se *SettledError
	if errors.As(err, &se) && se.Decision.Status == Answered {
		return *se.Decision.Answer, nil
	}
	if err != nil && !errors.As(err, &se) {
		return Answer{}, errors.Join(ctx.Err(), err)
	}
	return Answer{}, ctx.Err()
}

// Post puts d on Needs me inside t, a transaction the caller writes something else in too (a held
// write and the decision it waits on), and returns it with its id. Its event is published when t
// commits; [Service.Wait] then waits for its answer. A decision that is not valid is refused with
// an invalid problem.
func Post(t *ledger.Tx, d Decision) (Decision, error) {
	d, err := prepare(d)
	if err != nil {
		return Decision{}, err
	}
	d.ID = ledger.NewID("dec_")
	d.Created = t.Now()
	if err := insert(t, d); err != nil {
		return Decision{}, err
	}
	return d, t.Emit(KindCreated, d.ID, d)
}

// Settle answers the open decision id with a inside t, a transaction that makes the answer's
// change too, so the change and the answer commit together or not at all. Like
// [Service.Answer] it is a compare-and-set: a decision settled before gets a [*SettledError]. Once
// t has committed, pass the decision to [Service.Settled] to wake whoever waits on it.
func Settle(t *ledger.Tx, id string, a Answer, by string) (Decision, error) {
	if by == "" {
		return Decision{}, errors.New("needs: answer: who answered is not known")
	}
	return answerTx(t, id, a, by)
}

// Get reads one decision inside t.
func Get(t *ledger.Tx, id string) (Decision, error) { return getTx(t, id) }

// Settled wakes whoever waits on d ([Service.Wait], [Service.Ask]) once the transaction that
// settled it ([Settle]) has committed.
func (s *Service) Settled(d Decision) {
	if d.Status != Open {
		s.wake(d)
	}
}

// Wait blocks until the decision id settles, and returns it as it settled. Unlike [Service.Ask] it
// leaves the decision open when ctx ends (the caller did not ask it, and someone else may still
// wait), returning ctx's error.
func (s *Service) Wait(ctx context.Context, id string) (Decision, error) {
	wake := s.wait(id)
	defer s.stopWaiting(id, wake)
	// Read after waiting starts, so an answer that lands in between is seen one way or the other.
	d, err := s.Get(ctx, id)
	if err != nil || d.Status != Open {
		return d, err
	}
	select {
	case d := <-wake:
		return d, nil
	case <-ctx.Done():
		return Decision{}, ctx.Err()
	}
}

// outcome is what Ask returns for a settled decision.
func outcome(d Decision) (Answer, error) {
	if d.Status == Answered && d.Answer != nil {
		return *d.Answer, nil
	}
	return Answer{}, &SettledError{Decision: d}
}

// Answer settles an open decision with a, answered by by (who, through which client: [ByBrowser],
// [ByCommandLine]). The first answer wins; any later one gets a [*SettledError] that says who
// answered and when. An answer that does not fit the decision gets an invalid problem; an unknown id
// a not-found problem. Neither writes anything.
func (s *Service) Answer(ctx context.Context, id string, a Answer, by string) (Decision, error) {
	if by == "" {
		return Decision{}, errors.New("needs: answer: who answered is not known")
	}
	var d Decision
	err := s.w.Exec(ctx, func(t *ledger.Tx) error {
		var err error
		d, err = answerTx(t, id, a, by)
		return err
	})
	if err != nil {
		return Decision{}, err
	}
	s.wake(d)
	return d, nil
}

// answerTx answers inside a write transaction: check, compare-and-set, event.
func answerTx(t *ledger.Tx, id string, a Answer, by string) (Decision, error) {
	d, err := getTx(t, id)
	if err != nil {
		return Decision{}, err
	}
	if d.Status != Open {
		return Decision{}, &SettledError{Decision: d}
	}
	if a, err = d.resolve(a); err != nil {
		return Decision{}, err
	}
	at := t.Now()
	res, err := t.ExecContext(t.Context(), `UPDATE decisions
		SET status = 'answered', answer_option = ?, answer_text = ?, answered_by = ?, answered_at = ?
		WHERE id = ? AND status = 'open'`, a.Option, a.Text, by, store.Stamp(at), id)
	if err != nil {
		return Decision{}, fmt.Errorf("needs: answer %s: %w", id, err)
	}
	if err := settledOnce(t, res, id); err != nil {
		return Decision{}, err
	}
	d.Status, d.Answer, d.AnsweredBy, d.AnsweredAt = Answered, &a, by, &at
	return d, t.Emit(KindAnswered, id, d)
}

// settledOnce checks that a compare-and-set changed the row; if it did not, someone settled it first.
func settledOnce(t *ledger.Tx, res sql.Result, id string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("needs: settle %s: %w", id, err)
	}
	if n == 1 {
		return nil
	}
	d, err := getTx(t, id)
	if err != nil {
		return err
	}
	return &SettledError{Decision: d}
}

// close withdraws or expires one open decision and wakes its waiter.
func (s *Service) close(ctx context.Context, id string, to Status) (Decision, error) {
	var d Decision
	err := s.w.Exec(ctx, func(t *ledger.Tx) error {
		var err error
		d, err = closeTx(t, id, to)
		return err
	})
	if err != nil {
		return Decision{}, err
	}
	s.wake(d)
	return d, nil
}

func closeTx(t *ledger.Tx, id string, to Status) (Decision, error) {
	d, err := getTx(t, id)
	if err != nil {
		return Decision{}, err
	}
	if d.Status != Open {
		return Decision{}, &SettledError{Decision: d}
	}
	at := t.Now()
	res, err := t.ExecContext(t.Context(), "UPDATE decisions SET status = ?, closed_at = ? WHERE id = ? AND status = 'open'",
		string(to), store.Stamp(at), id)
	if err != nil {
		return Decision{}, fmt.Errorf("needs: %s %s: %w", to, id, err)
	}
	if err := settledOnce(t, res, id); err != nil {
		return Decision{}, err
	}
	d.Status, d.ClosedAt = to, &at
	return d, t.Emit(closedKind(to), id, d)
}

// WithdrawRun withdraws the open decisions of a run that ended, waking whoever waits on them, and
// says how many there were.
func (s *Service) WithdrawRun(ctx context.Context, runID string) (int, error) {
	if runID == "" {
		return 0, errors.New("needs: withdraw: no run id")
	}
	return s.closeAll(ctx, Withdrawn, "run_id = ?", runID)
}

// ExpireOrphans expires every open decision. Call it at start-up, before anything asks: decisions
// left open by a runtime that stopped have no one waiting for their answer.
func (s *Service) ExpireOrphans(ctx context.Context) (int, error) {
	return s.closeAll(ctx, Expired, "1 = 1")
}

func (s *Service) closeAll(ctx context.Context, to Status, where string, args ...any) (int, error) {
	var closed []Decision
	err := s.w.Exec(ctx, func(t *ledger.Tx) error {
		rows, err := t.QueryContext(t.Context(), "SELECT id FROM decisions WHERE status = 'open' AND "+where+" ORDER BY created_at, rowid", args...)
		if err != nil {
			return fmt.Errorf("needs: read open decisions: %w", err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("needs: read open decisions: %w", err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("needs: read open decisions: %w", err)
		}
		for _, id := range ids {
			d, err := closeTx(t, id, to)
			if err != nil {
				return err
			}
			closed = append(closed, d)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, d := range closed {
		s.wake(d)
	}
	return len(closed), nil
}

// Get reads one decision.
func (s *Service) Get(ctx context.Context, id string) (Decision, error) {
	return get(ctx, s.db, id)
}

// Filter chooses what [Service.List] returns.
type Filter struct {
	All   bool   // settled decisions too, not only open ones
	RunID string // only this run's
	Limit int    // at most this many; 100 when zero, never more than 500
}

// List returns decisions, newest first.
func (s *Service) List(ctx context.Context, f Filter) ([]Decision, error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	f.Limit = min(f.Limit, 500)
	out, err := decisions(ctx, s.db, "SELECT "+columns+` FROM decisions
		WHERE (? OR status = 'open') AND (? = '' OR run_id = ?)
		ORDER BY created_at DESC, rowid DESC LIMIT ?`, f.All, f.RunID, f.RunID, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("needs: list: %w", err)
	}
	return out, nil
}

// wait registers a waiter of a decision (one about to be created, or one that may settle).
func (s *Service) wait(id string) chan Decision {
	c := make(chan Decision, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiters[id] = append(s.waiters[id], c)
	return c
}

func (s *Service) stopWaiting(id string, c chan Decision) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ws := slices.DeleteFunc(s.waiters[id], func(w chan Decision) bool { return w == c })
	if len(ws) == 0 {
		delete(s.waiters, id)
		return
	}
	s.waiters[id] = ws
}

// wake hands a settled decision to its waiters. A decision settles once, so each buffered channel
// gets one value and never blocks.
func (s *Service) wake(d Decision) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.waiters[d.ID] {
		c <- d
	}
	delete(s.waiters, d.ID)
}

// Expire closes the open decision id as expired inside t, a transaction that makes the change
// that ends it too (a node's card whose work ended). Once t has committed, pass the decision to
// [Service.Settled] to wake whoever waits on it. A decision settled before gets a [*SettledError].
func Expire(t *ledger.Tx, id string) (Decision, error) { return closeTx(t, id, Expired) }
