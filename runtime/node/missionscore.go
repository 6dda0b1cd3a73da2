package node

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The pure rules of a mission (spec 002 §6.2): a step's outcome from its report's checks, which
// steps can start and which are held, what a failed check does to its build, and how the mission
// ends. The store (missions.go) loads the steps, applies these and writes what they decide.

// A step's status is its execution.
const (
	StepWaiting = "waiting"
	StepWorking = "working"
	StepDone    = "done"
	StepBlocked = "blocked"
	StepSkipped = "skipped"
	StepStopped = "stopped"
)

// A step's outcome is its result.
const (
	OutcomeUnknown    = "unknown"
	OutcomeDone       = "done"
	OutcomePass       = "pass"
	OutcomeFail       = "fail"
	OutcomeBlocked    = "blocked"
	OutcomeUnverified = "unverified"
)

// A mission's state.
const (
	MissionRunning   = "running"
	MissionReporting = "reporting"
	MissionSucceeded = "succeeded"
	MissionPartial   = "partially_completed"
	MissionFailed    = "failed"
	MissionStopped   = "stopped"
)

// maxFailedRuns is how many agent runs of one attempt may fail before the attempt stops.
const maxFailedRuns = 4

// StepReport is what a step reports: from node_step_report, or a coding agent's report_result.
type StepReport struct {
	Outcome     string        `json:"outcome" jsonschema:"done, pass, fail or blocked"`
	Summary     string        `json:"summary" jsonschema:"what was done, in a few sentences"`
	Checks      []ReportCheck `json:"checks,omitempty" jsonschema:"the checks that were run, each with its verdict"`
	Commit      string        `json:"commit,omitempty" jsonschema:"the commit the work produced or tested"`
	ContentHash string        `json:"contentHash,omitempty" jsonschema:"with no commit, the hash of the content"`
	BlockedBy   string        `json:"blockedBy,omitempty" jsonschema:"with outcome blocked: what stands in the way"`
}

// ReportCheck is one check and its verdict. Criteria are the acceptance criteria it covers, as
// "<requirement>/<criterion>" or the criterion's id; a check whose name starts with a criterion's
// id ("a1: prints hello") covers it too.
type ReportCheck struct {
	Name     string   `json:"name"`
	Verdict  string   `json:"verdict" jsonschema:"pass, fail or skip"`
	Criteria []string `json:"criteria,omitempty" jsonschema:"the acceptance criteria this check covers"`
	Note     string   `json:"note,omitempty"`
}

// Criterion names one acceptance criterion of a requirement.
type Criterion struct {
	Requirement string
	ID          string
	Mandatory   bool
}

// candidate is what a report produced or tested: its commit, else its content hash.
func (r StepReport) candidate() string {
	if r.Commit != "" {
		return r.Commit
	}
	return r.ContentHash
}

// covers says whether a check names the criterion.
func (c ReportCheck) covers(k Criterion) bool {
	full := k.Requirement + "/" + k.ID
	for _, n := range c.Criteria {
		if n == k.ID || n == full {
			return true
		}
	}
	name := strings.TrimSpace(c.Name)
	for _, p := range []string{full, k.ID} {
		if name == p || strings.HasPrefix(name, p+":") || strings.HasPrefix(name, p+" ") {
			return true
		}
	}
	return false
}

// verdictOf is a step's outcome from its report, never from prose: a verify passes only with at
// least one check, every check passing and every mandatory criterion covered by a passing check;
// a report that contradicts its own checks is refused with the sentence its author is told.
func verdictOf(kind string, r StepReport, criteria []Criterion) (string, error) {
	var failed, passed, skipped []string
	for _, c := range r.Checks {
		switch c.Verdict {
		case "pass":
			passed = append(passed, c.Name)
		case "fail":
			failed = append(failed, c.Name)
		case "skip":
			skipped = append(skipped, c.Name)
		default:
			return "", fmt.Errorf("Check %q has verdict %q; a verdict is pass, fail or skip.", c.Name, c.Verdict)
		}
	}
	switch r.Outcome {
	case "blocked":
		if strings.TrimSpace(r.BlockedBy) == "" {
			return "", fmt.Errorf("A blocked report says what stands in the way (blockedBy).")
		}
		return OutcomeBlocked, nil
	case "done", "pass":
		if len(failed) > 0 {
			return "", fmt.Errorf("The report says %s, but check %q failed; report fail, or fix it and run the check again.", r.Outcome, failed[0])
		}
	case "fail":
		if len(r.Checks) > 0 && len(failed) == 0 {
			return "", fmt.Errorf("The report says fail, but none of its checks failed; mark the failing check fail.")
		}
		return OutcomeFail, nil
	default:
		return "", fmt.Errorf("The outcome is done, pass, fail or blocked, not %q.", r.Outcome)
	}
	if kind != KindVerify {
		return OutcomeDone, nil
	}
	if len(passed) == 0 || len(skipped) > 0 {
		return OutcomeUnverified, nil
	}
	for _, k := range criteria {
		if !k.Mandatory {
			continue
		}
		ok := false
		for _, c := range r.Checks {
			if c.Verdict == "pass" && c.covers(k) {
				ok = true
				break
			}
		}
		if !ok {
			return OutcomeUnverified, nil
		}
	}
	return OutcomePass, nil
}

// coreStep is what the rules read of a step.
type coreStep struct {
	ID       string
	Kind     string
	After    []string
	Verifies string
	Status   string
	Outcome  string
}

func (s coreStep) ended() bool {
	return s.Status == StepDone || s.Status == StepBlocked || s.Status == StepSkipped || s.Status == StepStopped
}

// holding says whether an after step's outcome holds the steps after it for good.
func holding(s coreStep) bool {
	switch {
	case s.Outcome == OutcomeFail, s.Outcome == OutcomeBlocked, s.Outcome == OutcomeUnverified:
		return true
	case s.Status == StepSkipped, s.Status == StepStopped, s.Status == StepBlocked:
		return true
	}
	return false
}

// gate says of a waiting step whether it can start, and which of its after steps hold it.
func gate(s coreStep, byID map[string]coreStep) (ready bool, heldBy []string) {
	ready = true
	for _, a := range s.After {
		p := byID[a]
		switch {
		case p.Status == StepDone && (p.Outcome == OutcomeDone || p.Outcome == OutcomePass):
		case p.Status != StepWorking && holding(p):
			heldBy = append(heldBy, a)
			ready = false
		default:
			ready = false
		}
	}
	return ready, heldBy
}

// startable are the waiting steps whose after steps are all done or passed, in plan order.
func startable(steps []coreStep) []string {
	byID := indexSteps(steps)
	var out []string
	for _, s := range steps {
		if s.Status != StepWaiting {
			continue
		}
		if ok, _ := gate(s, byID); ok {
			out = append(out, s.ID)
		}
	}
	return out
}

// held maps each waiting step that can never start on its own to the steps holding it.
func held(steps []coreStep) map[string][]string {
	byID := indexSteps(steps)
	out := map[string][]string{}
	for _, s := range steps {
		if s.Status != StepWaiting {
			continue
		}
		if _, by := gate(s, byID); len(by) > 0 {
			out[s.ID] = by
		}
	}
	return out
}

// quiet says nothing can move: no step is working and none can start. Waiting steps behind a
// step that is held are held too, through the chain.
func quiet(steps []coreStep) bool {
	for _, s := range steps {
		if s.Status == StepWorking {
			return false
		}
	}
	return len(startable(steps)) == 0
}

// skipHeld is what ending the plan does to its waiting steps: each becomes skipped, with the
// steps in its way (those that did not end done or passed).
func skipHeld(steps []coreStep) map[string][]string {
	out := map[string][]string{}
	byID := indexSteps(steps)
	for i, s := range steps {
		if s.Status != StepWaiting {
			continue
		}
		by := []string{}
		for _, a := range s.After {
			if p := byID[a]; p.Status != StepDone || (p.Outcome != OutcomeDone && p.Outcome != OutcomePass) {
				by = append(by, a)
			}
		}
		steps[i].Status = StepSkipped
		out[s.ID] = by
	}
	return out
}

func indexSteps(steps []coreStep) map[string]coreStep {
	m := make(map[string]coreStep, len(steps))
	for _, s := range steps {
		m[s.ID] = s
	}
	return m
}

// Repair decisions after a verify fails.
const (
	RepairAgain   = "repair"    // reopen the build in the builder's session
	RepairJudge   = "judge"     // the lead gets one judgement turn
	RepairAsk     = "ask_owner" // a card for the owner
	RepairNoBuild = "no_build"  // the check names no build to reopen
)

// checkFailure is one earlier failure of the same check: its signature and the candidate tested.
type checkFailure struct {
	Signature string
	Candidate string
}

// repairDecision says what a failed check does. earlier are the check's earlier failures, oldest
// first; now is this one. A repair that changed nothing (the same candidate tested again) or the
// same failure twice stops repairing for the lead's judgement; a third identical failure asks the
// owner. There is no fixed number of rounds.
func repairDecision(verifies string, earlier []checkFailure, now checkFailure) string {
	if verifies == "" {
		return RepairNoBuild
	}
	same := 0
	for _, f := range earlier {
		if f.Signature == now.Signature {
			same++
		}
	}
	switch {
	case same >= 2:
		return RepairAsk
	case same == 1:
		return RepairJudge
	}
	if n := len(earlier); n > 0 && now.Candidate != "" && earlier[n-1].Candidate == now.Candidate {
		return RepairJudge
	}
	return RepairAgain
}

// unchanged says a repair produced no new candidate: the same commit or content hash it was
// given to repair.
func unchanged(tested string, r StepReport) bool {
	return tested != "" && r.candidate() == tested
}

var (
	sigHexRe   = regexp.MustCompile(`\b[0-9a-fA-F]{7,64}\b`)
	sigPathRe  = regexp.MustCompile(`(?:[A-Za-z]:)?[\w.\-~]*(?:[/\\][\w.\-~]+)+[/\\]?`)
	sigNumRe   = regexp.MustCompile(`\d+(?:\.\d+)*`)
	sigSpaceRe = regexp.MustCompile(`\s+`)
)

// failureSignature names a failure by its failing checks, ignoring commits, paths and numbers,
// so that the same failure on another commit or line is recognised.
func failureSignature(checks []ReportCheck) string {
	var parts []string
	for _, c := range checks {
		if c.Verdict != "fail" {
			continue
		}
		s := strings.ToLower(c.Name + " | " + c.Note)
		s = sigHexRe.ReplaceAllString(s, "#")
		s = sigPathRe.ReplaceAllString(s, "<path>")
		s = sigNumRe.ReplaceAllString(s, "0")
		s = strings.TrimSpace(sigSpaceRe.ReplaceAllString(s, " "))
		parts = append(parts, s)
	}
	sort.Strings(parts)
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	return hex.EncodeToString(sum[:8])
}

// coreRequirement is what the ending reads of a requirement.
type coreRequirement struct {
	ID       string
	Deferred bool
	HasCrit  bool
}

// Requirement ledger states.
const (
	ReqOpen       = "open"
	ReqInProgress = "in_progress"
	ReqAccepted   = "accepted"
	ReqFailed     = "failed"
	ReqDeferred   = "deferred"
	ReqCancelled  = "cancelled"
)

// ledgerOf is each requirement's state from the steps that cover it (covers maps a requirement to
// its steps). One covered by checks is accepted when they all passed; one without checks when its
// steps are all done.
func ledgerOf(reqs []coreRequirement, covers map[string][]string, steps []coreStep) map[string]string {
	byID := indexSteps(steps)
	out := map[string]string{}
	for _, r := range reqs {
		if r.Deferred {
			out[r.ID] = ReqDeferred
			continue
		}
		var checks, work, failed, passed, done, started, cancelled int
		for _, id := range covers[r.ID] {
			s := byID[id]
			if s.Status != StepWaiting {
				started++
			}
			if s.Status == StepSkipped || s.Status == StepStopped {
				cancelled++
			}
			if s.Kind == KindVerify {
				checks++
				switch s.Outcome {
				case OutcomePass:
					passed++
				case OutcomeFail:
					failed++
				}
				continue
			}
			work++
			if s.Status == StepDone && s.Outcome == OutcomeDone {
				done++
			}
		}
		switch {
		case failed > 0 && !anyWorking(covers[r.ID], byID):
			out[r.ID] = ReqFailed
		case checks > 0 && passed == checks:
			out[r.ID] = ReqAccepted
		case checks == 0 && !r.HasCrit && work > 0 && done == work:
			out[r.ID] = ReqAccepted
		case cancelled > 0 && cancelled == len(covers[r.ID]):
			out[r.ID] = ReqCancelled
		case started > 0:
			out[r.ID] = ReqInProgress
		default:
			out[r.ID] = ReqOpen
		}
	}
	return out
}

func anyWorking(ids []string, byID map[string]coreStep) bool {
	for _, id := range ids {
		if byID[id].Status == StepWorking {
			return true
		}
	}
	return false
}

// missionEnd is how a mission with nothing left to move ends: succeeded when every step is done
// or passed and every requirement that is not deferred is accepted; failed when a check failed;
// partially completed otherwise.
func missionEnd(steps []coreStep, ledger map[string]string) string {
	all := true
	for _, s := range steps {
		if s.Status == StepStopped {
			return MissionStopped
		}
		if s.Outcome == OutcomeFail && s.Kind == KindVerify {
			return MissionFailed
		}
		if !(s.Status == StepDone && (s.Outcome == OutcomeDone || s.Outcome == OutcomePass)) {
			all = false
		}
	}
	for _, st := range ledger {
		if st != ReqAccepted && st != ReqDeferred {
			all = false
		}
	}
	if all {
		return MissionSucceeded
	}
	return MissionPartial
}
