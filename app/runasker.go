package app

import (
	"context"
	"log/slog"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/acp"
	"github.com/ensemblework/ensemble/engines/claude"
	"github.com/ensemblework/ensemble/engines/codex"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/needs"
)

// needsAsker puts a run's questions on Needs me: a tool call the judge asks about becomes a
// permission card, an agent's question a question card. The option indexes of both packages agree
// (allow once, allow for this run, refuse).
type needsAsker struct{ n *needs.Service }

var (
	_ jobs.Asker      = needsAsker{}
	_ jobs.Withdrawer = needsAsker{}
)

func (a needsAsker) Ask(ctx context.Context, q jobs.Question) (jobs.Reply, error) {
	src := needs.Source{RunID: q.RunID, Title: q.Title}
	var d needs.Decision
	if q.Kind == jobs.Approval {
		var touches judge.Touches
		if q.Verdict != nil {
			touches = q.Verdict.Touches
		}
		call := q.Input
		if call == "" {
			call = q.Tool
		}
		d = needs.NewPermission(src, call, touches, q.Text)
		if q.Recommended >= 0 && q.Recommended < len(needs.PermissionOptions) {
			d = d.Recommend(q.Recommended, q.Why)
		}
	} else {
		d = needs.NewQuestion(src, q.Text, q.Options, q.Recommended, q.FreeText)
		d.Why = q.Why
		if q.SignIn != nil {
			d.SignIn = &needs.SignIn{Tab: q.SignIn.Tab, Site: q.SignIn.Site, Purpose: q.SignIn.Purpose}
		}
		if d.Why == "" && q.Recommended >= 0 {
			d.Why = "The agent recommends it."
		}
	}
	var opts []needs.AskOption
	if q.Unattended {
		opts = append(opts, needs.Unattended())
	}
	ans, err := a.n.Ask(ctx, d, opts...)
	if q.Kind == jobs.Approval && ans.Option != needs.FreeText {
		// A chosen option's label ("Refuse") is not words the person wrote for the agent.
		ans.Text = ""
	}
	return jobs.Reply{Option: ans.Option, Text: ans.Text}, err
}

func (a needsAsker) WithdrawRun(ctx context.Context, runID string) (int, error) {
	return a.n.WithdrawRun(ctx, runID)
}

// agentDrivers are the agents this build can run, by name.
func agentDrivers(log *slog.Logger) map[string]engines.Driver {
	drivers := map[string]engines.Driver{}
	for _, d := range []engines.Driver{claude.New(claude.WithLogger(log)), codex.New(codex.WithLogger(log))} {
		drivers[d.Name()] = d
	}
	for _, d := range acp.Drivers(acp.WithLogger(log)) {
		drivers[d.Name()] = d
	}
	return drivers
}
