// Package toolstest gives tests of the tools, and of what calls them, real runs of a stand-in
// coding agent, so hub_assign_to_agent can be tried without a real agent CLI. It does not import
// the tools, so the tools' own tests can use it: pass its services to tools.NewRuns.
package toolstest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/profiles"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/sessions"
	"github.com/ensemblework/ensemble/runtime/store"
)

// StandIn is a stand-in coding agent: each start is counted and ends at once with a summary, so
// no real CLI runs.
type StandIn struct{ starts atomic.Int32 }

// Starts is how many runs the agent was started for.
func (d *StandIn) Starts() int32 { return d.starts.Load() }

// Name implements engines.Driver.
func (*StandIn) Name() string { return "stand-in" }

// Start implements engines.Driver.
func (d *StandIn) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	d.starts.Add(1)
	h.Event(engines.Event{At: time.Now(), Kind: engines.EventStarted, Session: "s1", Model: "stand-in-1"})
	h.Event(engines.Event{At: time.Now(), Kind: engines.EventMessage, Text: "Fixed it."})
	return doneRun{}, nil
}

type doneRun struct{}

func (doneRun) Wait() (engines.Result, error) {
	return engines.Result{SessionID: "s1", Summary: "Fixed the login page."}, nil
}
func (doneRun) Stop(context.Context) error { return nil }

// Agents are real runs (jobs, sessions, run profiles) of a StandIn agent named "stand-in";
// "codex" is set up too but not signed in.
type Agents struct {
	Agent    *StandIn
	Jobs     *jobs.Service
	Sessions *sessions.Service
	Profiles *profiles.Service
}

// NewAgents starts the runs over st; they close when t ends.
func NewAgents(t testing.TB, st *store.Store, w *ledger.Writer, rec *records.Service) *Agents {
	t.Helper()
	agent := &StandIn{}
	ss := sessions.New(sessions.Options{Store: st, Writer: w})
	js := jobs.New(jobs.Options{Store: st, Writer: w, Records: rec, DataDir: t.TempDir(), Sessions: ss,
		Drivers: map[string]engines.Driver{"stand-in": agent, "codex": agent},
		Ready: func(_ context.Context, name string) error {
			if name == "codex" {
				return errors.New("Codex is not signed in; run `codex login` in a terminal")
			}
			return nil
		}})
	if err := js.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { js.Close() })
	prof := profiles.New(profiles.Options{Store: st, Writer: w, KnownAgent: js.KnownAgent})
	return &Agents{Agent: agent, Jobs: js, Sessions: ss, Profiles: prof}
}
