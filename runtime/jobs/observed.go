package jobs

import "github.com/ensemblework/ensemble/engines"

// Observed is what a run's agent itself reported it runs with (spec 003 §3.4), beside what was
// asked (Settings). A field left empty is one the agent did not report; it is never filled in
// from what was asked.
type Observed struct {
	Model         string `json:"model,omitempty"`
	Effort        string `json:"effort,omitempty"`
	ContextTokens int    `json:"contextTokens,omitempty"` // the context window, in tokens
}

// observe takes what ev reports into o and says whether o changed. An event that does not report
// a setting leaves what an earlier one (an earlier attempt, say) reported.
func (o *Observed) observe(ev engines.Event) bool {
	was := *o
	switch ev.Kind {
	case engines.EventStarted:
		if ev.Model != "" {
			o.Model = ev.Model
		}
		if ev.Effort != "" {
			o.Effort = ev.Effort
		}
	case engines.EventUsage:
		if ev.ContextTokens > 0 {
			o.ContextTokens = ev.ContextTokens
		}
	}
	return *o != was
}
