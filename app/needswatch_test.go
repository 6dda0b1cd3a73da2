package app

import (
	"context"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/needs"
)

func TestNeedsWording(t *testing.T) {
	for _, tc := range []struct {
		n            int
		title, label string
	}{
		{0, "Ensemble", "Nothing needs you"},
		{1, "Ensemble — 1 needs you", "1 decision needs you"},
		{12, "Ensemble — 12 need you", "12 decisions need you"},
	} {
		if got := needsTitle(tc.n); got != tc.title {
			t.Errorf("needsTitle(%d) = %q, want %q", tc.n, got, tc.title)
		}
		if got := needsMenuLabel(tc.n); got != tc.label {
			t.Errorf("needsMenuLabel(%d) = %q, want %q", tc.n, got, tc.label)
		}
	}
	d := needs.Decision{Kind: needs.Permission, Call: "npm install", Source: needs.Source{Title: "Fix the build"}}
	if got := needsLine(d); got != "Fix the build: Allow npm install?" {
		t.Errorf("needsLine = %q", got)
	}
}

// TestWatchNeedsFollowsChanges: the window's count follows decisions as they open and settle.
func TestWatchNeedsFollowsChanges(t *testing.T) {
	rt := startTestRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	counts := make(chan int, 10)
	go rt.watchNeeds(ctx, func(open []needs.Decision) { counts <- len(open) })
	if n := <-counts; n != 0 {
		t.Fatalf("first count %d, want 0", n)
	}
	go rt.needs.Ask(ctx, needs.NewQuestion(needs.Source{RunID: "job_x", Title: "Ship"}, "Ship it?", []string{"Yes", "No"}, 0, false))
	if n := <-counts; n != 1 {
		t.Fatalf("after a question, count %d, want 1", n)
	}
	open, _ := rt.needs.List(ctx, needs.Filter{})
	if _, err := rt.needs.Answer(ctx, open[0].ID, needs.Choose(0), needs.ByBrowser); err != nil {
		t.Fatal(err)
	}
	if n := <-counts; n != 0 {
		t.Fatalf("after the answer, count %d, want 0", n)
	}
}
