package node

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/enginetest"
)

func TestWatch(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	lim := WatchLimits{Stall: 15 * time.Minute, Repeats: 5, Streak: 4, Tokens: 2_000_000}
	same := func(n int, msg string) []string { return slices.Repeat([]string{msg}, n) }
	cases := []struct {
		name string
		f    RunFacts
		want []string
	}{
		{"busy", RunFacts{Working: true, LastActivity: now.Add(-time.Minute)}, nil},
		{"stalled 15 minutes", RunFacts{Working: true, LastActivity: now.Add(-15 * time.Minute)}, []string{RuleStalled}},
		{"quiet but ended", RunFacts{Working: false, LastActivity: now.Add(-time.Hour), Ended: now.Add(-time.Hour)}, nil},
		{"same error 5 times, 4 in a row", RunFacts{Working: true, LastActivity: now,
			Failures: append(append([]string{"npm test: exit 1"}, "other")[:2:2], same(4, "npm test: exit 1")...)}, []string{RuleRepeats}},
		{"same error 5 times, 3 in a row", RunFacts{Working: true, LastActivity: now,
			Failures: append(append(same(2, "npm test: exit 1"), "other"), same(3, "npm test: exit 1")...)}, nil},
		{"4 times in a row only", RunFacts{Working: true, LastActivity: now, Failures: same(4, "boom")}, nil},
		{"exploration misses are not failures", RunFacts{Working: true, LastActivity: now,
			Failures: append(same(5, "boom"), same(3, "view: Path does not exist")...)}, []string{RuleRepeats}},
		{"only exploration misses", RunFacts{Working: true, LastActivity: now,
			Failures: append(same(6, "grep foo: exit status 1"), same(6, "view_range out of bounds")...)}, nil},
		{"JSON errors compare by message", RunFacts{Working: true, LastActivity: now,
			Failures: []string{`{"message":"EACCES"}`, `{"message":"EACCES"}`, `{"message":"EACCES"}`, `{"message":"EACCES"}`, "EACCES\nstack"}}, []string{RuleRepeats}},
		{"tokens without changes", RunFacts{Working: true, LastActivity: now, Tokens: 2_000_000}, []string{RuleTokens}},
		{"tokens with changes", RunFacts{Working: true, LastActivity: now, Tokens: 3_000_000, FileChanges: 2}, nil},
		{"tokens under the limit", RunFacts{Working: true, LastActivity: now, Tokens: 1_999_999}, nil},
		{"files outside the folder", RunFacts{Working: true, LastActivity: now, Folder: "/w/p", Changed: []string{"a.go", "/w/p/b.go", "/etc/hosts", "../q/c.go"}}, []string{RuleOutside}},
		{"files inside the folder", RunFacts{Working: true, LastActivity: now, Folder: "/w/p", Changed: []string{"a.go", "/w/p/sub/b.go"}}, nil},
		{"outside, ended 20 minutes ago", RunFacts{Ended: now.Add(-20 * time.Minute), LastActivity: now.Add(-20 * time.Minute), Folder: "/w/p", Changed: []string{"/tmp/x"}}, []string{RuleOutside}},
		{"outside, ended an hour ago", RunFacts{Ended: now.Add(-time.Hour), LastActivity: now.Add(-time.Hour), Folder: "/w/p", Changed: []string{"/tmp/x"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range Watch(c.f, lim, now) {
				got = append(got, f.Rule)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("findings %v, want %v", got, c.want)
			}
		})
	}
}

// A finding gives the run's node one attention turn, however often the check runs.
func TestWatchdogRaisesOnce(t *testing.T) {
	t.Setenv("ENSEMBLE_NODE_WATCHDOG_STALL_MS", "1")
	sf := newSessFix(t)
	sf.model.Script(enginetest.Say("I will leave it.").Forever())
	n := sf.node("Dev")
	j := sf.start(n, "Slow work")
	sf.waitJob(j.ID, running, "the run")
	time.Sleep(5 * time.Millisecond) // past the 1 ms stall limit
	ctx := context.Background()
	sf.svc.checkWatchdog(ctx)
	sf.svc.checkWatchdog(ctx)
	sf.settle()
	if got := sf.count("SELECT count(*) FROM node_turns WHERE reason = 'attention'"); got != 1 {
		t.Fatalf("%d attention turns, want 1", got)
	}
	var note string
	sf.st.Reader().QueryRow("SELECT note FROM node_turns WHERE reason = 'attention'").Scan(&note)
	if !strings.Contains(note, "no progress") || !strings.Contains(note, j.ID) {
		t.Fatalf("the attention note is %q", note)
	}
	if got := sf.count("SELECT count(*) FROM node_session_events WHERE kind = 'attention' AND who = 'watchdog'"); got != 1 {
		t.Fatalf("%d attention events, want 1", got)
	}
}
