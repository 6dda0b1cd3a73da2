package jobs

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ensemblework/ensemble/engines"
)

// fitModel is what of a run's thinking level, context window and fast mode the model takes, by
// the catalog its agent reported (spec 003 §3.2): the dialog offers only what the model takes,
// but a profile, Run again or an API call may name a model that has changed since, or one the
// agent does not describe. A choice the model does not take is left out, the agent's own default
// in its place, and notes says why in a sentence each. A level for a model the catalog does not
// describe goes as asked (the agent says whether it takes it); a long window or fast mode does not,
// since only a described model is known to have them. An empty catalog (an agent that reports
// names only) describes no model.
func fitModel(s Settings, catalog []engines.ModelInfo) (sent Settings, notes []string) {
	sent = s
	if s.Effort == "" && s.ContextTier == "" && !s.Fast {
		return sent, nil
	}
	i := slices.IndexFunc(catalog, func(m engines.ModelInfo) bool {
		if s.Model == "" {
			return m.Default
		}
		return m.ID == s.Model
	})
	name := "The agent's default model"
	if s.Model != "" {
		name = "The model " + s.Model
	}
	if i < 0 {
		unknown := name + " is not among the models the agent reported, so it is not known to have "
		if len(catalog) == 0 {
			unknown = "The agent does not describe its models, so its model is not known to have "
		}
		if s.ContextTier != "" {
			sent.ContextTier = ""
			notes = append(notes, unknown+"a long context window; the standard one is used.")
		}
		if s.Fast {
			sent.Fast = false
			notes = append(notes, unknown+"a fast mode; the run goes without it.")
		}
		return sent, notes
	}
	m := catalog[i]
	if m.Name != "" {
		name = m.Name
	}
	if s.Effort != "" && !slices.Contains(m.Efforts, s.Effort) {
		sent.Effort = ""
		if len(m.Efforts) == 0 {
			notes = append(notes, fmt.Sprintf("%s takes no thinking level; %q is left out.", name, s.Effort))
		} else {
			notes = append(notes, fmt.Sprintf("%s does not take the thinking level %q (it takes %s); it thinks at its default.",
				name, s.Effort, strings.Join(m.Efforts, ", ")))
		}
	}
	if s.ContextTier == engines.ContextLong && m.LongContext == 0 {
		sent.ContextTier = ""
		notes = append(notes, name+" has one context window; the long one is left out.")
	}
	if s.Fast && !m.Fast {
		sent.Fast = false
		notes = append(notes, name+" has no fast mode; the run goes without it.")
	}
	return sent, notes
}
