package node

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxPacketChars is the most a packet holds (spec 002 §6.2).
const maxPacketChars = 6000

// packet is what a step dispatched straight to the person's coding agent is told: Goal, Your
// part, Constraints, Inputs, Who you are, Report; every constraint once, earlier results named
// by step rather than pasted. who is the step's node, as "@handle, role".
func packet(m Mission, st *MissionStep, who string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Goal\n%s\n\n## Your part (step %s, %s)\n%s\n", m.Goal, st.ID, st.Kind, st.Brief)
	a := st.Attempts[len(st.Attempts)-1]
	if a.Note != "" {
		fmt.Fprintf(&b, "\n%s\n", a.Note)
	}
	if st.Kind == KindVerify && a.Tested != "" {
		fmt.Fprintf(&b, "\nTest the candidate %s.\n", a.Tested)
	}
	for _, id := range st.RequirementIDs {
		for _, r := range m.Contract.Requirements {
			if r.ID != id {
				continue
			}
			fmt.Fprintf(&b, "\nRequirement %s: %s\n", r.ID, r.Text)
			for _, k := range r.Acceptance {
				fmt.Fprintf(&b, "- %s: %s\n", k.ID, k.Text)
			}
		}
	}
	if c := constraintLines(m.Contract.Constraints); c != "" {
		fmt.Fprintf(&b, "\n## Constraints\n%s", c)
	}
	var inputs []string
	for _, id := range st.After {
		if p := m.step(id); p != nil {
			if c := m.candidateOf(id); c != "" {
				inputs = append(inputs, fmt.Sprintf("- step %s (%s): %s at %s", p.ID, p.Kind, p.Outcome, c))
			} else {
				inputs = append(inputs, fmt.Sprintf("- step %s (%s): %s", p.ID, p.Kind, p.Outcome))
			}
		}
	}
	if len(inputs) > 0 {
		fmt.Fprintf(&b, "\n## Inputs\n%s\n", strings.Join(inputs, "\n"))
	}
	fmt.Fprintf(&b, "\n## Who you are\nYou work for %s in the plan of its crew.\n", who)
	b.WriteString("\n## Report\nWhen you are done, call report_result once: outcome (done, pass, fail or blocked), a summary, ")
	if st.Kind == KindVerify {
		b.WriteString("every check you ran with its verdict, each check's name starting with the acceptance criterion it covers (\"a1: …\"), ")
	}
	b.WriteString("and the commit (or content hash) you produced or tested.\n")
	out := b.String()
	if utf8.RuneCountInString(out) > maxPacketChars {
		r := []rune(out)
		out = string(r[:maxPacketChars-1]) + "…"
	}
	return out
}

// dispatchable says whether a step goes straight to the coding agent: work in files where the
// mission names the folder (build, write, and the check of a build or writing).
func dispatchable(m Mission, st *MissionStep) bool {
	if strings.TrimSpace(m.Contract.Constraints.Folder) == "" {
		return false
	}
	switch st.Kind {
	case KindBuild, KindWrite:
		return true
	case KindVerify:
		if b := m.step(st.Verifies); b != nil {
			return b.Kind == KindBuild || b.Kind == KindWrite
		}
	}
	return false
}
