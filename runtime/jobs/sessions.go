package jobs

import (
	"context"
	"github.com/ensemblework/ensemble/runtime/events"

	"github.com/ensemblework/ensemble/runtime/ledger"
)

// KindSession is a run event saying which agent session the run works in and why: one it
// continues by automatic choice, or a new one because the session it continues was deleted.
const KindSession events.Kind = "run.session"

// Sessions is what Assign asks about agent sessions ([Options.Sessions]); runtime/sessions
// implements it. Without it, runs continue only what a request names and every session can be
// reopened.
type Sessions interface {
	// Deleted reports whether the session a run belongs to was deleted in Ensemble. A run that
	// continues it works in its folder, in a new session of its own.
	Deleted(ctx context.Context, runID string) (bool, error)
	// Choose picks the earlier run whose session a new run continues, or none for a new session.
	// Its error never fails an assignment: the run starts a new session.
	Choose(ctx context.Context, in ChoiceInput) (SessionChoice, error)
}

// ChoiceInput is a new run that names no session to continue.
type ChoiceInput struct {
	Agent  string
	Folder string // as requested; "" for none
	TaskID string // "" when the run creates its task
	Title  string // the new task's title, when it creates one
	Brief  string
	// NewSession asks for a new session; the choice only records that.
	NewSession bool
}

// SessionChoice is a decision of [Sessions.Choose].
type SessionChoice struct {
	Continue string // the run whose session to continue; "" for a new session
	Text     string // one sentence for the run's events: which session and why
	// Save records the decision with the run, in the transaction that creates it.
	Save func(t *ledger.Tx, runID, taskID string) error
}
