package judge

import (
	"encoding/json"
	"fmt"
)

// Decision is what the judge says about a call: [Allow], [Refuse] or [Ask].
//
// It is closed: no other value can be made outside this package. The zero Decision is [Refuse],
// so a verdict nobody filled in fails closed.
type Decision struct{ d decision }

type decision uint8

const (
	refuse decision = iota
	allow
	ask
)

// The three decisions.
var (
	Refuse = Decision{refuse} // the call does not run; the reason goes back to the agent
	Allow  = Decision{allow}  // the call runs
	Ask    = Decision{ask}    // the call waits for the person's answer on Needs me
)

// String is the decision as a lowercase word: "allow", "refuse" or "ask".
func (d Decision) String() string {
	switch d.d {
	case allow:
		return "allow"
	case ask:
		return "ask"
	default:
		return "refuse"
	}
}

// MarshalJSON writes the decision as its lowercase word.
func (d Decision) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads "allow", "refuse" or "ask".
func (d *Decision) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("judge: decision: %w", err)
	}
	switch s {
	case "allow":
		*d = Allow
	case "ask":
		*d = Ask
	case "refuse":
		*d = Refuse
	default:
		return fmt.Errorf("judge: decision: unknown %q", s)
	}
	return nil
}

// Verdict is the judge's answer for one call.
type Verdict struct {
	Decision Decision `json:"decision"`
	// Reason is one sentence a person can act on, for refusals and asks ("`sudo` runs commands as
	// the administrator, which a run may never do."). [Verdict.Message] adds the decision.
	Reason string `json:"reason,omitempty"`
	// Rule names the rule that decided, for logs and tests ("floor.rm", "never", "quiet").
	Rule string `json:"rule"`
	// Touches is what the call would touch, for the Needs me card.
	Touches Touches `json:"touches"`
	// Clone, when set, asks the caller to clone the repository itself (the sandbox keeps the
	// clone's .git/config and hooks read-only) and to tell the agent where it is. The decision
	// is then Refuse, so a caller that ignores Clone runs nothing.
	Clone *Clone `json:"clone,omitempty"`
}

// Touches is what a call would read, change, run and reach.
type Touches struct {
	Programs []string `json:"programs,omitempty"`
	Reads    []string `json:"reads,omitempty"`
	Writes   []string `json:"writes,omitempty"`
	Hosts    []string `json:"hosts,omitempty"`
	// Folders are the outside folders an answer "allow for this run" would open for changes.
	Folders []string `json:"folders,omitempty"`
	// Kinds are the command kinds an answer "allow for this run" would keep.
	Kinds []string `json:"kinds,omitempty"`
}

// Clone is a git clone the judge wants Ensemble to do for the agent.
type Clone struct {
	URL          string `json:"url"`
	Dir          string `json:"dir"` // absolute, a new folder inside the run folder
	Depth        string `json:"depth,omitempty"`
	Branch       string `json:"branch,omitempty"`
	SingleBranch bool   `json:"singleBranch,omitempty"`
	Filter       string `json:"filter,omitempty"`
	NoTags       bool   `json:"noTags,omitempty"`
	Quiet        bool   `json:"quiet,omitempty"`
	// Rest is true when other commands followed the clone; the agent must run them again.
	Rest bool `json:"rest,omitempty"`
}

// Message is the reason with the decision in front, as it goes back to the agent or onto the
// card: "Refused: `sudo` runs commands as the administrator, which a run may never do."
func (v Verdict) Message() string {
	switch v.Decision {
	case Allow:
		if v.Reason == "" {
			return "Allowed."
		}
		return "Allowed: " + v.Reason
	case Ask:
		return "Needs your answer: " + v.Reason
	default:
		return "Refused: " + v.Reason
	}
}

// String is the decision and its reason on one line: "refuse: `sudo` runs commands …".
func (v Verdict) String() string {
	if v.Reason == "" {
		return v.Decision.String()
	}
	return v.Decision.String() + ": " + v.Reason
}

// MarshalJSON adds the message to the verdict's fields.
func (v Verdict) MarshalJSON() ([]byte, error) {
	type plain Verdict
	return json.Marshal(struct {
		plain
		Message string `json:"message"`
	}{plain(v), v.Message()})
}
