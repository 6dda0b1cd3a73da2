package node

import (
	"strings"
	"testing"
)

func TestPacket(t *testing.T) {
	m := Mission{Goal: "Add hello", Contract: PlanInput{
		Requirements: []PlanRequirement{{ID: "r1", Text: "prints hello", Acceptance: []PlanAcceptance{{ID: "a1", Text: "says hello"}}}},
		Constraints:  PlanConstraints{Folder: "/src/app", Publish: "commit"},
	}, Steps: []MissionStep{
		{ID: "build", Kind: KindBuild, Status: StepDone, Outcome: OutcomeDone, Attempts: []Attempt{{N: 1, Candidate: "abc1234"}}},
		{ID: "check", Kind: KindVerify, Verifies: "build", After: []string{"build"}, RequirementIDs: []string{"r1"}, Brief: "Run it.",
			Attempts: []Attempt{{N: 1, Tested: "abc1234"}}},
	}}
	p := packet(m, &m.Steps[1], "@qa, tester")
	for _, want := range []string{"## Goal\nAdd hello", "## Your part (step check, verify)\nRun it.", "Test the candidate abc1234.",
		"- a1: says hello", "## Constraints\n- folder: /src/app\n- publish: commit", "- step build (build): done at abc1234",
		"## Who you are\nYou work for @qa, tester", "## Report\n", "\"a1: …\""} {
		if !strings.Contains(p, want) {
			t.Errorf("the packet lacks %q:\n%s", want, p)
		}
	}
	if strings.Count(p, "/src/app") != 1 {
		t.Errorf("the folder is named %d times; every constraint once", strings.Count(p, "/src/app"))
	}
	m.Steps[1].Brief = strings.Repeat("x", 9000)
	if n := len([]rune(packet(m, &m.Steps[1], "@qa"))); n > maxPacketChars {
		t.Errorf("a packet of %d characters; at most %d", n, maxPacketChars)
	}
	if !dispatchable(m, &m.Steps[1]) || !dispatchable(m, &m.Steps[0]) {
		t.Error("a build and its check with a folder are not dispatched")
	}
	m.Contract.Constraints.Folder = ""
	if dispatchable(m, &m.Steps[0]) {
		t.Error("a build without the mission's folder is dispatched")
	}
}
