package tools

import (
	"context"
	"errors"

	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/profiles"
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

// NewRuns returns Runs over the runtime's runs, agent sessions and run profiles; ss may be nil (no
// sessions are listed then), and so may pr (no profiles).
func NewRuns(js *jobs.Service, ss *sessions.Service, pr *profiles.Service) Runs {
	return jobRuns{js: js, ss: ss, pr: pr}
}

// ProfilePicker is what hub_assign_to_agent needs of the saved run profiles: the one ref names
// (its id or name), else the default (pickRunProfile: starred, else first saved), false when ref
// is empty and none is saved (Quick settings). Runs that also implement it assign under profiles;
// NewRuns' do when given the profiles.
type ProfilePicker interface {
	PickProfile(ctx context.Context, ref string) (profiles.Profile, bool, error)
}

type jobRuns struct {
	js *jobs.Service
	ss *sessions.Service
	pr *profiles.Service // nil: no profiles
}

var (
	_ Runs          = jobRuns{}
	_ ProfilePicker = jobRuns{}
)

func (r jobRuns) PickProfile(ctx context.Context, ref string) (profiles.Profile, bool, error) {
	if r.pr == nil {
		if ref != "" {
			return profiles.Profile{}, false, errors.New("This Ensemble keeps no run profiles; assign without one.")
		}
		return profiles.Profile{}, false, nil
	}
	return r.pr.PickProfile(ctx, ref)
}

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
