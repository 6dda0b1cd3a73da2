package assistant

import (
	"context"
	"errors"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/sessions"
)

// Runs is what the agent tools need of the runs: whether an agent can run now, assigning a task to
// one, and the agent sessions there are. The runtime passes NewRuns; tests may pass their own.
type Runs interface {
	// CheckAgent says, as a sentence, why agent cannot run now (unknown, not installed, not signed
	// in, with the command to sign in); nil when it can.
	CheckAgent(ctx context.Context, agent string) error
	// Assign makes the run, as POST /api/agent/assign does; req.Within runs in its transaction.
	Assign(ctx context.Context, req jobs.AssignRequest) (jobs.Job, error)
	// Run is one run by id.
	Run(ctx context.Context, id string) (jobs.Job, error)
	// Sessions lists agent sessions, newest first.
	Sessions(ctx context.Context, f sessions.Filter) ([]sessions.Session, error)
	// Session is one session by its id or any of its runs' ids.
	Session(ctx context.Context, id string) (sessions.Session, error)
}

// NewRuns returns Runs over the runtime's runs and agent sessions; ss may be nil (no sessions are
// listed then).
func NewRuns(js *jobs.Service, ss *sessions.Service) Runs { return jobRuns{js: js, ss: ss} }

type jobRuns struct {
	js *jobs.Service
	ss *sessions.Service
}

var _ Runs = jobRuns{}

func (r jobRuns) CheckAgent(ctx context.Context, agent string) error {
	return r.js.CheckAgent(ctx, agent)
}

func (r jobRuns) Assign(ctx context.Context, req jobs.AssignRequest) (jobs.Job, error) {
	return r.js.Assign(ctx, req)
}

func (r jobRuns) Run(ctx context.Context, id string) (jobs.Job, error) { return r.js.Get(ctx, id) }

func (r jobRuns) Sessions(ctx context.Context, f sessions.Filter) ([]sessions.Session, error) {
	if r.ss == nil {
		return []sessions.Session{}, nil
	}
	return r.ss.List(ctx, f)
}

func (r jobRuns) Session(ctx context.Context, id string) (sessions.Session, error) {
	if r.ss == nil {
		return sessions.Session{}, errors.New("There are no agent sessions in this Ensemble.")
	}
	d, err := r.ss.Get(ctx, id)
	return d.Session, err
}
