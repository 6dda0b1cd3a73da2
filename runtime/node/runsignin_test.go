package node

import (
	"context"
	"errors"
	"testing"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/node/livetest"
)

// A run no node follows asks its sign-in on Needs me; the person opens the held tab's clean
// browser from there: a sign-in's view in control, ended by I'm done once signed in, or by the
// broker seeing the sign-in done.
func TestRunSignInTakeover(t *testing.T) {
	fb := &livetest.Browser{}
	f := newFixture(t, func(c *Config) { c.Browser = fb })
	s, ctx := f.svc, context.Background()
	run := browser.Work("run:job_1")
	fb.Add(run, browser.TabInfo{ID: "t4", URL: "https://portal.example/login", Held: true, Sensitive: "sign_in"})
	fb.Add(run, browser.TabInfo{ID: "t5", URL: "https://portal.example/"})

	for _, c := range []struct{ job, tab string }{{"job_1", "t5"}, {"job_1", "t9"}, {"job_2", "t4"}} {
		if _, err := s.OpenRunSignInTakeover(ctx, c.job, c.tab); !errors.Is(err, ErrSignInEnded) {
			t.Errorf("%s %s: %v, want the sign-in ended", c.job, c.tab, err)
		}
	}
	to, err := s.OpenRunSignInTakeover(ctx, "job_1", "t4")
	if err != nil {
		t.Fatal(err)
	}
	if !to.SignIn || to.RunID != "job_1" || to.Mode != ModeControl || to.Browser != "clean" || to.LoginCardID != "" || to.Tab != "t4" {
		t.Fatalf("the view: %+v", to)
	}
	if open, _ := fb.Clean("t4"); !open {
		t.Fatal("the clean browser did not open")
	}
	if _, err := s.OpenRunSignInTakeover(ctx, "job_1", "t4"); err == nil {
		t.Fatal("a second view in control of the same tab")
	}
	// I'm done before the sign-in: the view stays, and says why.
	got, err := s.FinishTakeover(ctx, to.ID, true)
	if err != nil || got.Ended || got.Note == "" {
		t.Fatalf("I'm done, not signed in: %+v %v", got, err)
	}
	fb.SignedIn = true
	if got, err = s.FinishTakeover(ctx, to.ID, true); err != nil || !got.Ended || got.EndReason != ReasonSignedIn {
		t.Fatalf("I'm done, signed in: %+v %v", got, err)
	}
	if open, _ := fb.Clean("t4"); open {
		t.Fatal("the clean browser stayed open")
	}

	// Seen done by the broker: the view ends by itself.
	to, err = s.OpenRunSignInTakeover(ctx, "job_1", "t4")
	if err != nil {
		t.Fatal(err)
	}
	s.OnSignIn(run, "t4", true, "cookie")
	if got, err := s.TakeoverInfo(to.ID); err == nil && !got.Ended {
		t.Fatalf("the view outlived the sign-in: %+v", got)
	}
}
