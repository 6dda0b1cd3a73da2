package node

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The mission contract (spec 002 §6.3): node_plan takes the whole plan at once, and validatePlan
// refuses a plan that cannot run as written before anything is stored.

const (
	maxPlanSteps  = 30
	maxBriefChars = 1500
)

// Step kinds.
const (
	KindBuild    = "build"
	KindVerify   = "verify"
	KindWrite    = "write"
	KindResearch = "research"
	KindOther    = "other"
)

// PlanInput is node_plan's argument.
type PlanInput struct {
	Goal         string            `json:"goal" jsonschema:"the plan's goal in one line" check:"minLength=1,maxLength=300"`
	Requirements []PlanRequirement `json:"requirements,omitempty" jsonschema:"one per deliverable the owner asked for"`
	Constraints  PlanConstraints   `json:"constraints,omitempty" jsonschema:"written once for every step"`
	Steps        []PlanStep        `json:"steps" jsonschema:"the steps, at most 30"`
	Deferred     []PlanDeferral    `json:"deferred,omitempty" jsonschema:"requirements that will not be done now, with why"`
}

// PlanRequirement is one deliverable, with what accepts it.
type PlanRequirement struct {
	ID         string           `json:"id"`
	Text       string           `json:"text"`
	Acceptance []PlanAcceptance `json:"acceptance,omitempty"`
	Evidence   string           `json:"evidence,omitempty"`
}

// PlanAcceptance is one acceptance criterion; it is mandatory unless Mandatory is false.
type PlanAcceptance struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Mandatory *bool  `json:"mandatory,omitempty"`
}

// IsMandatory says whether a passing check must cover the criterion.
func (a PlanAcceptance) IsMandatory() bool { return a.Mandatory == nil || *a.Mandatory }

// PlanConstraints are written once for every step.
type PlanConstraints struct {
	Computer     string   `json:"computer,omitempty"`
	Folder       string   `json:"folder,omitempty"`
	Repos        []string `json:"repos,omitempty"`
	Branch       string   `json:"branch,omitempty"`
	Publish      string   `json:"publish,omitempty" jsonschema:"none, commit, push or pr"`
	Environment  string   `json:"environment,omitempty"`
	Agent        string   `json:"agent,omitempty"`
	Model        string   `json:"model,omitempty"`
	Effort       string   `json:"effort,omitempty"`
	Context      string   `json:"context,omitempty"`
	Substitution string   `json:"substitution,omitempty" jsonschema:"forbid, ask or allow"`
	Order        string   `json:"order,omitempty" jsonschema:"serial or parallel_ok"`
	Parallel     string   `json:"parallel,omitempty" jsonschema:"serial, worktrees or snapshots"`
	Integrate    string   `json:"integrate,omitempty" jsonschema:"merge, rebase or patch"`
	Notes        string   `json:"notes,omitempty"`
}

// PlanStep is one step of the plan.
type PlanStep struct {
	ID             string   `json:"id"`
	To             string   `json:"to" jsonschema:"the crew member's handle"`
	Kind           string   `json:"kind,omitempty" jsonschema:"build, verify, write, research or other"`
	RequirementIDs []string `json:"requirementIds,omitempty"`
	Brief          string   `json:"brief" jsonschema:"the step's own objective, at most 1,500 characters"`
	After          []string `json:"after,omitempty" jsonschema:"ids of the steps this one waits for"`
	Verifies       string   `json:"verifies,omitempty" jsonschema:"for a verify step, the build it checks"`
	Integrates     []string `json:"integrates,omitempty" jsonschema:"for an integration build, the builds it brings in"`
	Run            *StepRun `json:"run,omitempty"`
}

// StepRun is the agent, model, thinking level and context the owner named for a step.
type StepRun struct {
	Agent   string `json:"agent,omitempty"`
	Model   string `json:"model,omitempty"`
	Effort  string `json:"effort,omitempty"`
	Context string `json:"context,omitempty"`
}

// PlanDeferral is a requirement that will not be done now.
type PlanDeferral struct {
	RequirementID string `json:"requirementId"`
	Reason        string `json:"reason"`
}

// kindForRole is a step's kind when the plan does not give one.
func kindForRole(role string) string {
	switch r := strings.ToLower(role); {
	case strings.Contains(r, "develop"), strings.Contains(r, "devops"), strings.Contains(r, "engineer"):
		return KindBuild
	case strings.Contains(r, "test"), strings.Contains(r, "review"):
		return KindVerify
	case strings.Contains(r, "writer"):
		return KindWrite
	case strings.Contains(r, "research"), strings.Contains(r, "analyst"):
		return KindResearch
	}
	return KindOther
}

func oneOf(v string, allowed ...string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// validatePlan checks a plan against the contract. crew maps each member's handle to its role;
// a step without a kind takes its member's, and a verify step naming no build checks the nearest
// build it comes after. It returns the plan so completed, or one sentence saying what is wrong.
func validatePlan(p PlanInput, crew map[string]string) (PlanInput, error) {
	p.Goal = strings.TrimSpace(p.Goal)
	switch {
	case p.Goal == "":
		return p, fmt.Errorf("The plan needs a goal.")
	case strings.ContainsAny(p.Goal, "\r\n"):
		return p, fmt.Errorf("The goal is one line.")
	case len(p.Steps) == 0:
		return p, fmt.Errorf("The plan needs at least one step.")
	case len(p.Steps) > maxPlanSteps:
		return p, fmt.Errorf("The plan has %d steps; at most %d are allowed.", len(p.Steps), maxPlanSteps)
	}
	c := p.Constraints
	switch {
	case !oneOf(c.Publish, "", "none", "commit", "push", "pr"):
		return p, fmt.Errorf("publish is none, commit, push or pr, not %q.", c.Publish)
	case !oneOf(c.Substitution, "", "forbid", "ask", "allow"):
		return p, fmt.Errorf("substitution is forbid, ask or allow, not %q.", c.Substitution)
	case !oneOf(c.Order, "", "serial", "parallel_ok"):
		return p, fmt.Errorf("order is serial or parallel_ok, not %q.", c.Order)
	case !oneOf(c.Parallel, "", "serial", "worktrees", "snapshots"):
		return p, fmt.Errorf("parallel is serial, worktrees or snapshots, not %q.", c.Parallel)
	case !oneOf(c.Integrate, "", "merge", "rebase", "patch"):
		return p, fmt.Errorf("integrate is merge, rebase or patch, not %q.", c.Integrate)
	}

	reqs := map[string]PlanRequirement{}
	for _, r := range p.Requirements {
		if r.ID == "" {
			return p, fmt.Errorf("Every requirement needs an id.")
		}
		if _, dup := reqs[r.ID]; dup {
			return p, fmt.Errorf("Requirement id %q is used twice.", r.ID)
		}
		crit := map[string]bool{}
		for _, a := range r.Acceptance {
			if a.ID == "" {
				return p, fmt.Errorf("Every acceptance criterion of requirement %q needs an id.", r.ID)
			}
			if crit[a.ID] {
				return p, fmt.Errorf("Acceptance criterion id %q is used twice in requirement %q.", a.ID, r.ID)
			}
			crit[a.ID] = true
		}
		reqs[r.ID] = r
	}

	steps := map[string]int{}
	for i := range p.Steps {
		s := &p.Steps[i]
		if s.ID == "" {
			return p, fmt.Errorf("Step %d needs an id.", i+1)
		}
		if _, dup := steps[s.ID]; dup {
			return p, fmt.Errorf("Step id %q is used twice.", s.ID)
		}
		steps[s.ID] = i
		s.To = strings.TrimPrefix(strings.TrimSpace(s.To), "@")
		role, ok := crew[s.To]
		if !ok {
			return p, fmt.Errorf("Step %q is for @%s, who is not in this crew.", s.ID, s.To)
		}
		if s.Kind == "" {
			s.Kind = kindForRole(role)
		}
		if !oneOf(s.Kind, KindBuild, KindVerify, KindWrite, KindResearch, KindOther) {
			return p, fmt.Errorf("Step %q has kind %q; a kind is build, verify, write, research or other.", s.ID, s.Kind)
		}
		if strings.TrimSpace(s.Brief) == "" {
			return p, fmt.Errorf("Step %q needs a brief.", s.ID)
		}
		if n := utf8.RuneCountInString(s.Brief); n > maxBriefChars {
			return p, fmt.Errorf("Step %q's brief has %d characters; at most %d are allowed.", s.ID, n, maxBriefChars)
		}
		for _, id := range s.RequirementIDs {
			if _, ok := reqs[id]; !ok {
				return p, fmt.Errorf("Step %q covers requirement %q, which the plan does not list.", s.ID, id)
			}
		}
	}
	for _, s := range p.Steps {
		for _, a := range s.After {
			if _, ok := steps[a]; !ok {
				return p, fmt.Errorf("Step %q comes after %q, which is not a step of this plan.", s.ID, a)
			}
			if a == s.ID {
				return p, fmt.Errorf("Step %q cannot come after itself.", s.ID)
			}
		}
		for _, b := range s.Integrates {
			if _, ok := steps[b]; !ok {
				return p, fmt.Errorf("Step %q integrates %q, which is not a step of this plan.", s.ID, b)
			}
		}
		if s.Verifies != "" {
			if _, ok := steps[s.Verifies]; !ok {
				return p, fmt.Errorf("Step %q verifies %q, which is not a step of this plan.", s.ID, s.Verifies)
			}
		}
	}
	if cyc := planCycle(p.Steps, steps); cyc != "" {
		return p, fmt.Errorf("The steps wait for each other in a circle (%s).", cyc)
	}
	anc := ancestors(p.Steps, steps)

	for i := range p.Steps {
		s := &p.Steps[i]
		if s.Verifies != "" && s.Kind != KindVerify {
			return p, fmt.Errorf("Step %q names a build it verifies but is not a verify step.", s.ID)
		}
		if s.Kind != KindVerify {
			continue
		}
		if s.Verifies == "" {
			s.Verifies = nearestBuild(p.Steps, steps, s.ID)
		}
		if s.Verifies == "" {
			return p, fmt.Errorf("Verify step %q has no build before it to check.", s.ID)
		}
		if p.Steps[steps[s.Verifies]].Kind != KindBuild {
			return p, fmt.Errorf("Step %q verifies %q, which is not a build step.", s.ID, s.Verifies)
		}
		if !anc[s.ID][s.Verifies] {
			return p, fmt.Errorf("Verify step %q must come after the build %q it checks.", s.ID, s.Verifies)
		}
	}

	covered, verified := map[string]bool{}, map[string]bool{}
	for _, s := range p.Steps {
		for _, id := range s.RequirementIDs {
			covered[id] = true
			if s.Kind == KindVerify {
				verified[id] = true
			}
		}
	}
	deferred := map[string]bool{}
	for _, d := range p.Deferred {
		if _, ok := reqs[d.RequirementID]; !ok {
			return p, fmt.Errorf("The plan defers requirement %q, which it does not list.", d.RequirementID)
		}
		if strings.TrimSpace(d.Reason) == "" {
			return p, fmt.Errorf("Deferring requirement %q needs a reason.", d.RequirementID)
		}
		deferred[d.RequirementID] = true
	}
	for _, r := range p.Requirements {
		if deferred[r.ID] {
			continue
		}
		if !covered[r.ID] {
			return p, fmt.Errorf("No step covers requirement %q; cover it or defer it with a reason.", r.ID)
		}
		if len(r.Acceptance) > 0 && !verified[r.ID] {
			return p, fmt.Errorf("Requirement %q has acceptance criteria but no verify step covers it.", r.ID)
		}
	}

	if c.Order == "serial" {
		if err := checkSerialOrder(p.Steps, anc); err != nil {
			return p, err
		}
	}
	if err := checkParallel(p, steps, anc); err != nil {
		return p, err
	}
	return p, nil
}

// planCycle names a circle of steps waiting for each other, or "" when there is none.
func planCycle(ss []PlanStep, idx map[string]int) string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(ss))
	var path []string
	var visit func(i int) string
	visit = func(i int) string {
		color[i] = grey
		path = append(path, ss[i].ID)
		for _, a := range ss[i].After {
			j := idx[a]
			switch color[j] {
			case grey:
				start := 0
				for k, id := range path {
					if id == a {
						start = k
					}
				}
				return strings.Join(append(append([]string{}, path[start:]...), a), " → ")
			case white:
				if c := visit(j); c != "" {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		color[i] = black
		return ""
	}
	for i := range ss {
		if color[i] == white {
			if c := visit(i); c != "" {
				return c
			}
		}
	}
	return ""
}

// ancestors maps each step to every step it comes after, directly or not. The plan has no cycle.
func ancestors(ss []PlanStep, idx map[string]int) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	var walk func(id string) map[string]bool
	walk = func(id string) map[string]bool {
		if m, ok := out[id]; ok {
			return m
		}
		m := map[string]bool{}
		out[id] = m
		for _, a := range ss[idx[id]].After {
			m[a] = true
			for b := range walk(a) {
				m[b] = true
			}
		}
		return m
	}
	for _, s := range ss {
		walk(s.ID)
	}
	return out
}

// nearestBuild is the first build found walking back from a step, breadth first.
func nearestBuild(ss []PlanStep, idx map[string]int, id string) string {
	queue := append([]string{}, ss[idx[id]].After...)
	seen := map[string]bool{}
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		if seen[a] {
			continue
		}
		seen[a] = true
		s := ss[idx[a]]
		if s.Kind == KindBuild {
			return a
		}
		queue = append(queue, s.After...)
	}
	return ""
}

// checkSerialOrder applies order: serial. Each feature build covers one requirement and waits for
// the previous feature's checks (or, with none, for the previous feature's build).
func checkSerialOrder(ss []PlanStep, anc map[string]map[string]bool) error {
	var prev *PlanStep
	for i := range ss {
		s := &ss[i]
		if s.Kind != KindBuild || len(s.Integrates) > 0 {
			continue
		}
		if len(s.RequirementIDs) > 1 {
			return fmt.Errorf("Under order: serial, build %q covers %d features; give each feature its own build.", s.ID, len(s.RequirementIDs))
		}
		if prev != nil {
			checks := 0
			for _, v := range ss {
				if v.Kind == KindVerify && v.Verifies == prev.ID {
					checks++
					if !anc[s.ID][v.ID] {
						return fmt.Errorf("Under order: serial, build %q must come after %q, the check of the feature before it.", s.ID, v.ID)
					}
				}
			}
			if checks == 0 && !anc[s.ID][prev.ID] {
				return fmt.Errorf("Under order: serial, build %q must come after %q, the feature before it.", s.ID, prev.ID)
			}
		}
		prev = s
	}
	return nil
}

// checkParallel applies constraints.parallel (spec 002 §8.15).
func checkParallel(p PlanInput, idx map[string]int, anc map[string]map[string]bool) error {
	c := p.Constraints
	isolated := c.Parallel == "worktrees" || c.Parallel == "snapshots"
	if !isolated {
		for _, s := range p.Steps {
			if len(s.Integrates) > 0 {
				return fmt.Errorf("Step %q integrates builds, which only worktrees or snapshots work needs.", s.ID)
			}
		}
		return nil
	}
	if strings.TrimSpace(c.Folder) == "" {
		return fmt.Errorf("parallel: %s needs the mission's folder.", c.Parallel)
	}
	if c.Parallel == "snapshots" && (c.Integrate == "merge" || c.Integrate == "rebase") {
		return fmt.Errorf("Snapshots have no branches to %s; use integrate: patch.", c.Integrate)
	}
	checksOf := map[string][]string{}
	for _, s := range p.Steps {
		if s.Kind == KindVerify {
			checksOf[s.Verifies] = append(checksOf[s.Verifies], s.ID)
		}
	}
	broughtBy := map[string]string{}
	for _, s := range p.Steps {
		if len(s.Integrates) == 0 {
			continue
		}
		if s.Kind != KindBuild {
			return fmt.Errorf("Integration step %q must be a build step.", s.ID)
		}
		hadChecks := false
		for _, b := range s.Integrates {
			if p.Steps[idx[b]].Kind != KindBuild {
				return fmt.Errorf("Integration step %q integrates %q, which is not a build.", s.ID, b)
			}
			if by, ok := broughtBy[b]; ok {
				return fmt.Errorf("Build %q is brought in twice, by %q and %q.", b, by, s.ID)
			}
			broughtBy[b] = s.ID
			if !anc[s.ID][b] {
				return fmt.Errorf("Integration step %q must come after the build %q it integrates.", s.ID, b)
			}
			for _, v := range checksOf[b] {
				hadChecks = true
				if !anc[s.ID][v] {
					return fmt.Errorf("Integration step %q must come after %q, the check of %q.", s.ID, v, b)
				}
			}
		}
		if hadChecks && len(checksOf[s.ID]) == 0 {
			return fmt.Errorf("Integration step %q needs a verify step after it, since the builds it brings in had checks.", s.ID)
		}
	}
	var builds []string
	for _, s := range p.Steps {
		if s.Kind == KindBuild && len(s.Integrates) == 0 {
			builds = append(builds, s.ID)
		}
	}
	if len(builds) >= 2 {
		for _, b := range builds {
			if _, ok := broughtBy[b]; !ok {
				return fmt.Errorf("With parallel: %s, build %q must be brought in by an integration step (a build with integrates).", c.Parallel, b)
			}
		}
	}
	return nil
}
