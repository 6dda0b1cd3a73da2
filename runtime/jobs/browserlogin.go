package jobs

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/judge"
)

// A run's sign-ins (spec 002 §8.16.1: a run no node follows asks on Needs me). A page that asks
// for the person's account or a human check, or the agent's browser_login_needed, holds the tab
// (nothing reads, captures or drives it) and asks the person on Needs me. With a screen, a clean
// sign-in window opens on it at the tab's page; the broker sees the sign-in done by itself, moves
// the session into the tab and the call that waited goes on, with nobody pressing anything. "I
// signed in" checks at once; "Not now" clears the tab. The agent never sees the page meanwhile,
// and in Run unattended, with no one to ask, the tab is cleared and the agent told so.

// The options of a sign-in question, by index.
const (
	signedInOption = iota
	notNowOption
)

var signInOptions = []string{"I signed in", "Not now"}

// signInTries is how often "I signed in" is checked before the sign-in is given up.
const signInTries = 3

// LoginNeededInput is browser_login_needed's input.
type LoginNeededInput struct {
	Tab     string `json:"tab"`
	Purpose string `json:"purpose,omitempty" jsonschema:"sign_in (the default) or human_check"`
	Reason  string `json:"reason,omitempty" jsonschema:"what the sign-in is for, for the person"`
	URL     string `json:"signedInUrl,omitempty" jsonschema:"how to tell it worked: the address contains this (* for any run of characters)"`
}

// signInDone is what the broker saw of a held tab: signed in (or the check passed), or given up.
type signInDone struct {
	ok  bool
	how string
}

func (r *run) addLoginTool(srv *mcp.Server, b Browser) {
	addWeb(srv, "browser_login_needed", "Hand a tab to the person to sign in (or to pass a human check, purpose human_check); the call waits until they did, then the tab is yours again, signed in. Never type a password yourself.",
		func(ctx context.Context, in LoginNeededInput) (*mcp.CallToolResult, any, error) {
			purpose := in.Purpose
			if purpose == "" {
				purpose = "sign_in"
			}
			if purpose != "sign_in" && purpose != "human_check" {
				return toolRefusal(fmt.Errorf("purpose is sign_in or human_check, not %q", in.Purpose)), nil, nil
			}
			return r.signIn(ctx, b, in.Tab, purpose, trim(in.Reason, 200), browser.SignedInCheck{URLPattern: in.URL})
		})
}

// pageAnswer is a browser tool's answer for the page an action left: a page that asks for the
// person's account or a human check is handed to them first.
func (r *run) pageAnswer(ctx context.Context, b Browser, p browser.Page, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		return toolRefusal(runBrowserError(err)), nil, nil
	}
	if p.SignIn != nil && !p.SignIn.HintOnly {
		return r.signIn(ctx, b, p.Tab, p.SignIn.Purpose, "the page asks for it ("+p.SignIn.Why+")", browser.SignedInCheck{})
	}
	return toolText(pageLine(p)), p, nil
}

// signIn holds the tab and waits for the person: seen done, answered, or given up.
func (r *run) signIn(ctx context.Context, b Browser, tab, purpose, why string, check browser.SignedInCheck) (*mcp.CallToolResult, any, error) {
	w := r.tabWork()
	site := r.tabSite(b, tab)
	what := "sign in to " + site
	if purpose == "human_check" {
		what = "pass a human check on " + site
	}
	if r.job.Settings.Mode == judge.ModeUnattended {
		b.Release(context.WithoutCancel(ctx), w, tab, true)
		return toolRefusal(fmt.Errorf("the page needs the person to %s, and a run unattended has no one to ask: carry on without it and say so in report_result", what)), nil, nil
	}
	if err := b.Hold(ctx, w, tab, purpose, check); err != nil {
		return toolRefusal(runBrowserError(err)), nil, nil
	}
	seen := r.watchSignIn(tab)
	defer r.unwatchSignIn(tab)
	where := "This computer has no screen for a sign-in window: Open the browser on this question shows that page from here or from your phone; sign in there, and the run goes on by itself."
	if b.Status(ctx).Display {
		if visible, err := b.OpenClean(ctx, w, tab); err == nil && visible {
			where = "A sign-in window is open on this computer's screen at that page; the run goes on by itself once you are signed in."
		}
	}
	r.rec.add(KindNote, Trace{Text: fmt.Sprintf("The run needs you to %s (%s). %s", what, why, where)}, nil)
	for try := 1; ; try++ {
		done, reply, err := r.askSignIn(ctx, seen, Question{Kind: AgentQuestion, Text: fmt.Sprintf("%s needs you to %s for this run. %s", r.job.Agent, what, where),
			Options: signInOptions, Recommended: signedInOption, Why: "The agent never sees the page or what you type.",
			SignIn: &TabSignIn{Tab: tab, Site: site, Purpose: purpose}})
		switch {
		case err != nil:
			b.Release(context.WithoutCancel(ctx), w, tab, true)
			return nil, nil, err
		case done != nil:
			return r.signInEnded(ctx, b, tab, what, *done)
		case reply.Option == notNowOption:
			b.Release(context.WithoutCancel(ctx), w, tab, true)
			r.rec.add(KindNote, Trace{Text: "You chose not to " + what + " now."}, nil)
			return toolRefusal(fmt.Errorf("the person chose not to %s now: the tab is cleared; carry on without it, or say so in report_result", what)), nil, nil
		}
		if ok, err := b.CheckSignIn(ctx, w, tab); err == nil && ok {
			return r.signInEnded(ctx, b, tab, what, signInDone{ok: true, how: "check"})
		}
		if try == signInTries {
			b.Release(context.WithoutCancel(ctx), w, tab, true)
			return toolRefusal(fmt.Errorf("the page still asks the person to %s after they said they did, %d times: the tab is cleared; say so in report_result", what, signInTries)), nil, nil
		}
		where = "Still not signed in: the page still asks for it. " + where
	}
}

// askSignIn asks the person, and stops asking when the broker sees the sign-in done first.
func (r *run) askSignIn(ctx context.Context, seen <-chan signInDone, q Question) (*signInDone, Reply, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		reply Reply
		err   error
	}
	got := make(chan answer, 1)
	go func() {
		reply, err := r.ask(ctx, q)
		got <- answer{reply, err}
	}()
	select {
	case d := <-seen:
		return &d, Reply{}, nil
	case a := <-got:
		if a.err == nil && a.reply.Option != notNowOption && a.reply.Option != signedInOption {
			a.reply.Option = signedInOption // typed words ("done") mean they did it
		}
		return nil, a.reply, a.err
	}
}

// signInEnded gives the tab back after the broker saw the sign-in done, or cleared when it gave up.
func (r *run) signInEnded(ctx context.Context, b Browser, tab, what string, d signInDone) (*mcp.CallToolResult, any, error) {
	w := r.tabWork()
	if !d.ok {
		b.Release(context.WithoutCancel(ctx), w, tab, true)
		return toolRefusal(fmt.Errorf("the person did not %s in time (%s): carry on without it, or say so in report_result", what, d.how)), nil, nil
	}
	if err := b.Release(ctx, w, tab, false); err != nil {
		return toolRefusal(runBrowserError(err)), nil, nil
	}
	r.rec.add(KindNote, Trace{Text: "Signed in: the run's tab " + tab + " goes on."}, nil)
	p, err := b.Wait(ctx, w, tab, browser.WaitOptions{Load: true})
	if err != nil {
		return toolText(fmt.Sprintf("The person did it (%s): tab %s is yours again; take a browser_snapshot.", strings.TrimPrefix(what, "sign in to "), tab)), nil, nil
	}
	return toolText("The person did it: " + pageLine(p) + " The tab is yours again."), p, nil
}

// watchSignIn is where the broker's word on the tab's sign-in arrives (OnSignIn).
func (r *run) watchSignIn(tab string) <-chan signInDone {
	ch := make(chan signInDone, 1)
	r.mu.Lock()
	if r.signIns == nil {
		r.signIns = map[string]chan signInDone{}
	}
	r.signIns[tab] = ch
	r.mu.Unlock()
	return ch
}

func (r *run) unwatchSignIn(tab string) {
	r.mu.Lock()
	delete(r.signIns, tab)
	r.mu.Unlock()
}

// tabSite is a tab's site, for the person.
func (r *run) tabSite(b Browser, tab string) string {
	for _, t := range b.Tabs(r.tabWork()) {
		if t.ID == tab {
			if s := siteName(t.URL); s != "" {
				return s
			}
		}
	}
	return "the site"
}

// OnSignIn hears from the broker that a run's held tab was seen signed in (or given up); the
// runtime routes the "run:" works here and the others to the nodes.
func (s *Service) OnSignIn(work browser.Work, tab string, ok bool, how string) {
	id, found := strings.CutPrefix(string(work), "run:")
	if !found {
		return
	}
	s.mu.Lock()
	r := s.runs[id]
	s.mu.Unlock()
	if r == nil {
		return
	}
	r.mu.Lock()
	ch := r.signIns[tab]
	r.mu.Unlock()
	if ch != nil {
		select {
		case ch <- signInDone{ok: ok, how: how}:
		default:
		}
	}
}
