package node

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/problem"
)

// A sign-in's takeover (spec 002 §8.16.2): Open the browser on a sign-in card (data.type "login",
// the browser tools' card) shows the owner the clean browser at the held tab's page, always in
// control, end to end as a live view; I'm done checks the sign-in at once.

// loginCardRef is what a takeover needs of a sign-in card; the card itself is the browser tools'.
type loginCardRef struct {
	Type   string `json:"type"` // login
	Status string `json:"status,omitempty"`
	Tab    string `json:"tab"`
	Work   string `json:"work,omitempty"` // the node's own browsing when left out
}

// loginEnded are the statuses of a sign-in card that is no longer waiting.
var loginEnded = map[string]bool{"signed_in": true, "passed": true, "declined": true, "expired": true, "ended": true, "replaced": true}

// ErrSignInEnded is a takeover asked of a sign-in card that is no longer waiting (the API's 410).
var ErrSignInEnded = problem.New(problem.KindConflict, "This sign-in is no longer waiting.")

// Why a sign-in's takeover ended, beyond a live view's reasons.
const (
	ReasonSignedIn     = "signed_in"      // I'm done, and the check saw it signed in
	ReasonSignIn       = "sign_in"        // a watch made way for a sign-in's view of the tab
	ReasonClosedByNode = "closed_by_node" // the node closed the tab (browser_close)
)

func loginCardOf(m Message) (loginCardRef, bool) {
	var c loginCardRef
	if json.Unmarshal(m.Data, &c) != nil || c.Type != "login" || c.Tab == "" {
		return loginCardRef{}, false
	}
	return c, true
}

// OpenLoginTakeover opens the owner's view of a sign-in card's tab in the clean browser, in control:
// a watch of the tab makes way for it, a view in control keeps it (a conflict). When the clean
// browser cannot start, the view shows the tab itself and its Note says so.
func (s *Service) OpenLoginTakeover(ctx context.Context, loginCardID string) (Takeover, error) {
	if s.cfg.Browser == nil {
		return Takeover{}, errNoBrowser
	}
	m, err := s.Message(ctx, loginCardID)
	if err != nil {
		return Takeover{}, err
	}
	c, ok := loginCardOf(m)
	if !ok {
		return Takeover{}, problem.NotFound("Message %q is not a sign-in card.", loginCardID)
	}
	if loginEnded[c.Status] {
		return Takeover{}, ErrSignInEnded
	}
	w := browser.Work(c.Work)
	if w == "" {
		w = nodeWork(m.NodeID)
	}
	return s.openSignInView(ctx, w, c.Tab, m.NodeID, m.ID)
}

// OpenRunSignInTakeover opens the owner's view of a run's tab held for their sign-in or a human
// check, where no node follows the run (it asks on Needs me): the clean browser, in control, from
// the window or the phone. The run goes on once the broker sees it done, as with a sign-in window.
func (s *Service) OpenRunSignInTakeover(ctx context.Context, jobID, tab string) (Takeover, error) {
	if s.cfg.Browser == nil {
		return Takeover{}, errNoBrowser
	}
	w := browser.Work("run:" + jobID)
	i := slices.IndexFunc(s.cfg.Browser.Tabs(w), func(t browser.TabInfo) bool { return t.ID == tab && t.Held })
	if i < 0 {
		return Takeover{}, ErrSignInEnded
	}
	return s.openSignInView(ctx, w, tab, "", "")
}

// openSignInView opens a sign-in's view of w's held tab in the clean browser, in control: a watch
// of the tab makes way for it, a view in control keeps it (a conflict). When the clean browser
// cannot start, the view shows the tab itself and its Note says so. login is the sign-in card it
// was opened from ("" for a run's, which has none).
func (s *Service) openSignInView(ctx context.Context, w browser.Work, tab, nodeID, login string) (Takeover, error) {
	lt := s.liveTabOf(w, tab, nodeID, true)
	now := s.now()
	to := &liveTakeover{s: s, tab: lt, login: login, signIn: true, created: now, done: make(chan struct{}), lastSeen: now, switched: make(chan struct{}),
		info: Takeover{ID: newTakeoverID(), Kind: "browser", Mode: ModeControl, Browser: "clean", LoginCardID: login, SignIn: true, Tab: tab,
			EndsAt: now.Add(TakeoverWindow), MaxEndsAt: now.Add(TakeoverMax)}}
	if run, ok := strings.CutPrefix(string(w), "run:"); ok {
		to.info.RunID = run
	}
	if err := lt.takeControl(to.info.ID); err != nil {
		return Takeover{}, err
	}
	s.endWatchesOf(lt, to)
	if _, err := s.cfg.Browser.OpenClean(ctx, w, tab); err != nil {
		s.log.Warn("node sign-in: the clean browser did not open; showing the tab", "takeover", to.info.ID, "err", err)
		to.info.Browser, to.info.Note = "tab", "The clean browser could not start on this computer; this is the tab itself."
	} else {
		to.clean = true
	}
	s.addTakeover(to)
	s.noteLive(KindTakeoverStep, LiveStep{Step: "created", TakeoverID: to.info.ID, Tab: tab, Kind: "browser", Reason: "sign_in"})
	return to.snapshot(), nil
}

// endSignInViews ends the sign-in views of w's tab once the broker saw it done (or gave it up).
func (s *Service) endSignInViews(w browser.Work, tab, reason string) {
	s.takeovers.mu.Lock()
	var of []*liveTakeover
	for _, to := range s.takeovers.byID {
		if to.signIn && to.tab != nil && to.tab.work == w && to.tab.tab == tab {
			of = append(of, to)
		}
	}
	s.takeovers.mu.Unlock()
	for _, to := range of {
		to.end(reason)
	}
}

// endWatchesOf ends the views of a tab other than keep: they make way for a sign-in's.
func (s *Service) endWatchesOf(lt *liveTab, keep *liveTakeover) {
	s.takeovers.mu.Lock()
	var of []*liveTakeover
	for _, to := range s.takeovers.byID {
		if to.tab == lt && to != keep {
			of = append(of, to)
		}
	}
	s.takeovers.mu.Unlock()
	for _, to := range of {
		to.end(ReasonSignIn)
	}
}

// FinishTakeover is the owner's I'm done (done) or Stop. I'm done on a sign-in's view checks the
// sign-in at once: seen signed in, the view ends (signed_in); else it stays open and the answer's
// Note says why. Any other view just ends, as Stop does.
func (s *Service) FinishTakeover(ctx context.Context, id string, done bool) (Takeover, error) {
	to, err := s.takeover(id)
	if err != nil {
		return Takeover{}, err
	}
	if !done || !to.signIn {
		to.end(ReasonStopped)
		return to.snapshot(), nil
	}
	ok, err := s.cfg.Browser.CheckSignIn(ctx, to.tab.work, to.tab.tab)
	if err != nil {
		return Takeover{}, problem.Conflict("The sign-in could not be checked: %v.", err)
	}
	if !ok {
		to.mu.Lock()
		to.info.Note = "Not signed in yet: the page still asks to sign in. Finish there, then press I'm done again."
		to.lastSeen = s.now()
		to.mu.Unlock()
		return to.snapshot(), nil
	}
	to.end(ReasonSignedIn)
	if to.login != "" {
		s.takeoverSignedIn(ctx, to.login)
	}
	return to.snapshot(), nil
}

// takeoverSignedIn hears a sign-in seen done through its takeover (I'm done): the sign-in card's
// code (the browser tools') marks the card signed in (via: "takeover") and wakes the node. Until
// it lands, the broker's own OnSignIn says the same.
func (s *Service) takeoverSignedIn(ctx context.Context, loginCardID string) {
	s.log.Info("node sign-in seen done through its takeover", "card", loginCardID)
}

// closeClean closes the clean browser a sign-in's view opened; the tab stays held for its card.
func (to *liveTakeover) closeClean() {
	if !to.clean {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(to.s.life), 10*time.Second)
	defer cancel()
	if err := to.s.cfg.Browser.CloseClean(ctx, to.tab.work, to.tab.tab); err != nil {
		to.s.log.Warn("node sign-in: close the clean browser", "takeover", to.info.ID, "err", err)
	}
}
