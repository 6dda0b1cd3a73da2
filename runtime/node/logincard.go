package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// Sign-ins and human checks handed to the owner (spec 002 §8.16.1): the tab is held (sensitive:
// nothing reads, captures or drives it) and one owner-only login card in the node's conversation
// asks the owner; the node hears only "signed in" or "not now", never a value. The card's data in
// SQLite is enough to hold the tab again after a restart.

// LoginAsk is a login card's data beside the card's own (data.type "login").
type LoginAsk struct {
	Purpose string `json:"purpose"` // sign_in, human_check
	Origin  string `json:"origin"`
	Site    string `json:"site"`
	Tab     string `json:"tab"`
	Work    string `json:"work"`
	// PageURL is where the tab opens again after a restart.
	PageURL  string                 `json:"pageUrl,omitempty"`
	LoginID  string                 `json:"loginId"`
	Display  bool                   `json:"display"`  // this computer has a screen for the clean browser
	Takeover bool                   `json:"takeover"` // the owner can take the tab over from the web (Open the browser)
	Source   string                 `json:"source,omitempty"`
	Command  string                 `json:"command,omitempty"`
	SignedIn *browser.SignedInCheck `json:"signedIn,omitempty"`
	Via      string                 `json:"via,omitempty"`
	Note     string                 `json:"note,omitempty"`
}

// The login card's type and statuses besides pending and expired.
const (
	CardLogin     = "login"
	LoginWorking  = "working"
	LoginSignedIn = "signed_in"
	LoginPassed   = "passed"
	LoginDeclined = "declined"
	LoginEnded    = "ended"

	PurposeSignIn     = "sign_in"
	PurposeHumanCheck = "human_check"
)

// The owner's answers to a login card.
const (
	LoginLocal   = "local"
	LoginDone    = "done"
	LoginCheck   = "check"
	LoginDecline = "decline"
)

type signedInIn struct {
	URLPattern string `json:"urlPattern,omitempty" jsonschema:"the address once signed in contains this" check:"maxLength=500"`
	Selector   string `json:"selector,omitempty" jsonschema:"a CSS selector there once signed in" check:"maxLength=500"`
}
type loginIn struct {
	Tab      string      `json:"tab" check:"minLength=1,maxLength=20"`
	Purpose  string      `json:"purpose,omitempty" jsonschema:"sign_in (the default) or human_check" check:"enum=sign_in|human_check"`
	SignedIn *signedInIn `json:"signedIn,omitempty" jsonschema:"how to tell the sign-in worked"`
	Reason   string      `json:"reason,omitempty" jsonschema:"why, in a line for your owner" check:"maxLength=300"`
}

func loginToolDefs(def func(name, desc string) tools.Tool) []tools.Tool {
	return []tools.Tool{
		tools.Define(def(ToolLoginNeeded, "Hand a tab to your owner to sign in (purpose sign_in) or to pass a human check (human_check). The tab waits for them on a card; you are woken when it is done. Never type a password or code yourself."),
			browserRun(ToolLoginNeeded, func(in loginIn) (string, string) { return in.Tab, "" }, func(ctx context.Context, c *turnCtx, in loginIn) (tools.Result, error) {
				return c.s.loginNeeded(ctx, c, in, "")
			})),
		tools.Define(def(ToolLoginCheck, "Check now whether your owner finished signing in on a tab that waits for them (when they say they did)."),
			browserRun(ToolLoginCheck, func(in tabIn) (string, string) { return in.Tab, "" }, func(ctx context.Context, c *turnCtx, in tabIn) (tools.Result, error) {
				return c.s.loginCheck(ctx, c.node, in.Tab)
			})),
	}
}

// loginNeeded holds the tab and raises its card; the turn parks until the owner is done.
func (s *Service) loginNeeded(ctx context.Context, c *turnCtx, in loginIn, origin string) (tools.Result, error) {
	w := nodeWork(c.node.ID)
	page := ""
	for _, t := range s.cfg.Browser.Tabs(w) {
		if t.ID == in.Tab {
			page = t.URL
		}
	}
	if page == "" && origin == "" {
		return tools.Result{}, browser.ErrNoTab
	}
	if origin == "" {
		origin = pageOrigin(page)
	}
	req := loginReq{tab: in.Tab, purpose: in.Purpose, origin: origin, pageURL: page, reason: in.Reason}
	if in.SignedIn != nil {
		req.check = &browser.SignedInCheck{URLPattern: in.SignedIn.URLPattern, Selector: in.SignedIn.Selector}
	}
	m, err := s.raiseLogin(ctx, c.rt.turn, c.node, req)
	if err != nil {
		return tools.Result{}, err
	}
	c.rt.parked.Store(true)
	var card Card
	json.Unmarshal(m.Data, &card)
	what := "sign in to " + card.Site
	if card.Purpose == PurposeHumanCheck {
		what = "pass a human check on " + card.Site
	}
	return tools.Result{Summary: fmt.Sprintf("Tab %s waits for your owner to %s, on a card in this chat; nothing reads or drives it meanwhile. "+
		"Stop here and say nothing more about it: you are woken when they are done, and tab %s is yours again then.", in.Tab, what, in.Tab)}, nil
}

type loginReq struct {
	tab, purpose, origin, pageURL, reason, source, command string
	check                                                  *browser.SignedInCheck
}

// raiseLogin holds the node's tab and posts its one login card, or finds the card already waiting.
func (s *Service) raiseLogin(ctx context.Context, t Turn, n Node, r loginReq) (Message, error) {
	work := string(nodeWork(n.ID))
	if m, ok := s.waitingLogin(ctx, n.ID, work, r.tab); ok {
		return m, nil
	}
	if r.purpose == "" {
		r.purpose = PurposeSignIn
	}
	check := browser.SignedInCheck{}
	if r.check != nil {
		check = *r.check
	}
	if err := s.cfg.Browser.Hold(ctx, browser.Work(work), r.tab, r.purpose, check); err != nil {
		return Message{}, fmt.Errorf("hold tab %s for the owner: %w", r.tab, err)
	}
	st := s.cfg.Browser.Status(ctx)
	site := siteOf(r.origin)
	body := fmt.Sprintf("@%s needs you to sign in to %s.", n.Slug, site)
	if r.purpose == PurposeHumanCheck {
		body = fmt.Sprintf("@%s needs you to pass a human check on %s.", n.Slug, site)
	}
	card := Card{Type: CardLogin, Reason: r.reason, LoginAsk: &LoginAsk{Purpose: r.purpose, Origin: r.origin, Site: site, Tab: r.tab, Work: work,
		PageURL: r.pageURL, LoginID: ledger.NewID("lgn_"), Display: st.Display, Takeover: true, Source: r.source, Command: r.command, SignedIn: r.check}}
	var m Message
	err := s.cfg.Writer.Exec(ctx, func(tx *ledger.Tx) error {
		var err error
		m, err = s.postCardTx(tx, t, n, body, card)
		return err
	})
	if err != nil {
		s.cfg.Browser.Release(context.WithoutCancel(ctx), browser.Work(work), r.tab, false)
		return Message{}, err
	}
	s.noteBrowser(ctx, n.ID, "login_card", r.tab, site, nil)
	return m, nil
}

// waitingLogin is the login card still waiting for a node's tab (tab "" for any), newest first.
func (s *Service) waitingLogin(ctx context.Context, nodeID, work, tab string) (Message, bool) {
	q := `WHERE kind = 'approval' AND json_extract(data, '$.type') = 'login' AND json_extract(data, '$.status') IN ('pending', 'working')
		AND author_node_id = ? AND json_extract(data, '$.work') = ?`
	args := []any{nodeID, work}
	if tab != "" {
		q += " AND json_extract(data, '$.tab') = ?"
		args = append(args, tab)
	}
	ms, err := s.queryMessages(ctx, s.cfg.Store.Reader(), q+" ORDER BY seq DESC LIMIT 1", args...)
	if err != nil || len(ms) == 0 {
		return Message{}, false
	}
	return ms[0], true
}

// loginCheck checks a waiting tab now: signed in settles its card; not yet says so.
func (s *Service) loginCheck(ctx context.Context, n Node, tab string) (tools.Result, error) {
	m, ok := s.waitingLogin(ctx, n.ID, string(nodeWork(n.ID)), tab)
	if !ok {
		return tools.Result{}, fmt.Errorf("Tab %s does not wait for your owner.", tab)
	}
	done, note, err := s.checkLogin(ctx, m, "check", true)
	if err != nil {
		return tools.Result{}, err
	}
	if done {
		return tools.Result{Summary: note}, nil
	}
	return tools.Result{Summary: note + " Stop here: you are woken when they are done."}, nil
}

// checkLogin asks the broker whether the card's sign-in is done; done settles the card (waking
// the node unless quiet). It answers what the node is told.
func (s *Service) checkLogin(ctx context.Context, m Message, via string, quiet bool) (bool, string, error) {
	var c Card
	json.Unmarshal(m.Data, &c)
	ok, err := s.cfg.Browser.CheckSignIn(ctx, browser.Work(c.Work), c.Tab)
	if err != nil {
		return false, "", err
	}
	if !ok {
		note := fmt.Sprintf("Still not signed in to %s; the card is still waiting.", c.Site)
		if c.Purpose == PurposeHumanCheck {
			note = fmt.Sprintf("The human check on %s is still there; the card is still waiting.", c.Site)
		}
		s.noteLogin(ctx, m.ID, note)
		return false, note, nil
	}
	status := LoginSignedIn
	if c.Purpose == PurposeHumanCheck {
		status = LoginPassed
	}
	if _, err := s.endLogin(ctx, m.ID, status, via, quiet); err != nil {
		return false, "", err
	}
	return true, loginNote(c, status), nil
}

// loginNote is what the node hears when its sign-in ends.
func loginNote(c Card, status string) string {
	switch status {
	case LoginSignedIn:
		return fmt.Sprintf("Your owner signed in to %s; tab %s is yours again. Carry on there.", c.Site, c.Tab)
	case LoginPassed:
		return fmt.Sprintf("Your owner passed the human check on %s; tab %s is yours again. Carry on there.", c.Site, c.Tab)
	case LoginDeclined:
		return fmt.Sprintf("Your owner said not now to %s; tab %s is blank again. Do not try again unasked: say in a line what you could not do.", c.Site, c.Tab)
	}
	return fmt.Sprintf("Nobody signed in to %s in time, so its card %s and tab %s is blank again. Do not ask again unasked.", c.Site, status, c.Tab)
}

// AnswerLogin is the owner's answer on a login card: local opens the clean browser on this
// computer, done and check check now, decline gives the tab back blank.
func (s *Service) AnswerLogin(ctx context.Context, messageID, action, by string) (Message, error) {
	m, c, err := s.loginCard(ctx, messageID)
	if err != nil {
		return Message{}, err
	}
	if c.Status != CardPending && c.Status != LoginWorking {
		return Message{}, problem.New(problem.KindConflict, fmt.Sprintf("This sign-in is %s already.", strings.ReplaceAll(c.Status, "_", " ")))
	}
	w := browser.Work(c.Work)
	if s.cfg.Browser == nil && action != LoginDecline {
		return Message{}, problem.New(problem.KindConflict, "The browser is not running on this computer, so it cannot check the sign-in; answer Not now, or try again once it runs.")
	}
	switch action {
	case LoginLocal:
		visible, err := s.cfg.Browser.OpenClean(ctx, w, c.Tab)
		if err != nil {
			return Message{}, fmt.Errorf("open the browser for %s: %w", c.Site, err)
		}
		if !visible {
			return s.noteLogin(ctx, m.ID, "This computer has no screen for the browser: use Open the browser instead.")
		}
		return s.noteLogin(ctx, m.ID, fmt.Sprintf("The browser is open on this computer at %s: sign in there, and the card sees it done by itself.", c.Site))
	case LoginDone, LoginCheck:
		if _, err := s.checkAnswered(ctx, m, by); err != nil {
			return Message{}, err
		}
		m, _, err = s.loginCard(ctx, messageID)
		return m, err
	case LoginDecline:
		if s.cfg.Browser != nil {
			if err := s.cfg.Browser.Release(ctx, w, c.Tab, true); err != nil && !errors.Is(err, browser.ErrNoTab) {
				return Message{}, fmt.Errorf("give tab %s back: %w", c.Tab, err)
			}
		}
		return s.endLogin(ctx, m.ID, LoginDeclined, by, false)
	}
	return Message{}, problem.Invalid("action is local, done, check or decline, not %q.", action)
}

func (s *Service) checkAnswered(ctx context.Context, m Message, by string) (bool, error) {
	done, _, err := s.checkLogin(ctx, m, by, false)
	return done, err
}

// loginCard is a login card by its message.
func (s *Service) loginCard(ctx context.Context, messageID string) (Message, Card, error) {
	m, err := s.messageIn(ctx, s.cfg.Store.Reader(), messageID)
	if err != nil {
		return Message{}, Card{}, err
	}
	var c Card
	if m.Kind != KindApproval || json.Unmarshal(m.Data, &c) != nil || c.Type != CardLogin || c.LoginAsk == nil {
		return Message{}, Card{}, problem.Invalid("That message is not a sign-in card.")
	}
	return m, c, nil
}

// LoginView is a login card as GET /api/node/logins/{messageId} gives it: its state and what it
// offers.
type LoginView struct {
	Message Message  `json:"message"`
	Card    Card     `json:"card"`
	Offers  []string `json:"offers"`
}

// Login is a login card's state and answers.
func (s *Service) Login(ctx context.Context, messageID string) (LoginView, error) {
	m, c, err := s.loginCard(ctx, messageID)
	if err != nil {
		return LoginView{}, err
	}
	v := LoginView{Message: m, Card: c, Offers: []string{}}
	if c.Status == CardPending || c.Status == LoginWorking {
		if c.Display {
			v.Offers = append(v.Offers, LoginLocal)
		}
		if c.Takeover {
			v.Offers = append(v.Offers, "takeover")
		}
		v.Offers = append(v.Offers, LoginDone, LoginDecline)
	}
	return v, nil
}

// noteLogin keeps a line on a waiting card (what the computer did, why it is still waiting).
func (s *Service) noteLogin(ctx context.Context, id, note string) (Message, error) {
	var m Message
	err := s.cfg.Writer.Exec(context.WithoutCancel(ctx), func(tx *ledger.Tx) error {
		var err error
		if m, err = s.messageIn(tx.Context(), tx, id); err != nil {
			return err
		}
		var c Card
		json.Unmarshal(m.Data, &c)
		if c.LoginAsk == nil {
			return problem.Invalid("That message is not a sign-in card.")
		}
		c.Note = note
		m.Data, _ = json.Marshal(c)
		return s.updateMessageTx(tx, m)
	})
	return m, err
}

// endLogin settles a waiting login card once with status (signed_in, passed, declined,
// expired, ended), with its Needs me mirror, and wakes the node with what came of it unless quiet.
func (s *Service) endLogin(ctx context.Context, id, status, via string, quiet bool) (Message, error) {
	var m Message
	var closed *needs.Decision
	err := s.cfg.Writer.Exec(context.WithoutCancel(ctx), func(tx *ledger.Tx) error {
		var err error
		if m, err = s.messageIn(tx.Context(), tx, id); err != nil {
			return err
		}
		var c Card
		json.Unmarshal(m.Data, &c)
		if c.LoginAsk == nil || c.Status != CardPending && c.Status != LoginWorking {
			return problem.New(problem.KindConflict, "This sign-in has ended already.")
		}
		now := s.now()
		c.Status, c.Via, c.Note, c.AnsweredAt, c.AnsweredBy = status, via, "", &now, via
		if c.DecisionID != "" {
			var d needs.Decision
			if status == CardExpired || status == LoginEnded {
				d, err = needs.Expire(tx, c.DecisionID)
			} else {
				opt := 0
				if status == LoginDeclined {
					opt = 1
				}
				d, err = needs.Settle(tx, c.DecisionID, needs.Choose(opt), needs.ByChat)
			}
			if err != nil && !errors.Is(err, needs.ErrSettled) {
				return err
			}
			if err == nil {
				closed = &d
			}
		}
		m.Data, _ = json.Marshal(c)
		if err := s.updateMessageTx(tx, m); err != nil {
			return err
		}
		s.noteLoginTx(tx, c, status)
		if quiet {
			return nil
		}
		return s.enqueueTx(tx, Turn{NodeID: c.NodeID, RoomID: roomOfLane(c.Lane, m.RoomID), Lane: c.Lane, Private: c.Private,
			Reason: ReasonApproval, ByOwner: c.ByOwner, Depth: c.Depth, OperationID: "login:" + m.ID, Note: loginNote(c, status), OriginID: c.TurnID})
	})
	if err != nil {
		return Message{}, err
	}
	if closed != nil && s.cfg.Needs != nil {
		s.cfg.Needs.Settled(*closed)
	}
	s.wake()
	return m, nil
}

// noteLoginTx ledgers a sign-in's end by site, purpose and outcome, never a value.
func (s *Service) noteLoginTx(tx *ledger.Tx, c Card, status string) {
	if err := tx.Emit(KindBrowserTool, c.NodeID, BrowserTool{NodeID: c.NodeID, Tool: "login_" + status, Tab: c.Tab, Site: c.Site}); err != nil {
		s.log.Warn("node: ledger a sign-in's end", "err", err)
	}
}

// OnSignIn is the broker's Config.OnSignIn: a held tab's sign-in seen done (ok; how: "tab" or
// "clean") gives the tab back and settles its card, waking the node; given up, the card expires.
func (s *Service) OnSignIn(work browser.Work, tab string, ok bool, how string) {
	ctx := s.life
	if strings.HasPrefix(string(work), "run:") {
		// A run's own sign-in (no card): its view, opened from Needs me, ends with it.
		reason := ReasonSignedIn
		if !ok {
			reason = ReasonTime
		}
		s.endSignInViews(work, tab, reason)
	}
	ms, err := s.queryMessages(ctx, s.cfg.Store.Reader(), `WHERE kind = 'approval' AND json_extract(data, '$.type') = 'login'
		AND json_extract(data, '$.status') IN ('pending', 'working') AND json_extract(data, '$.work') = ? AND json_extract(data, '$.tab') = ?`, string(work), tab)
	if err != nil || len(ms) == 0 {
		return
	}
	var c Card
	json.Unmarshal(ms[0].Data, &c)
	status := CardExpired
	if ok {
		status = LoginSignedIn
		if c.Purpose == PurposeHumanCheck {
			status = LoginPassed
		}
	}
	if s.cfg.Browser != nil {
		if err := s.cfg.Browser.Release(ctx, work, tab, !ok); err != nil && !errors.Is(err, browser.ErrNoTab) {
			s.log.Info("node: give a signed-in tab back", "tab", tab, "err", err)
		}
	}
	// The owner's view of the sign-in ends before the node is woken, so the tab is the node's.
	reason := ReasonSignedIn
	if !ok {
		reason = ReasonTime
	}
	s.endTakeoversOf(ms[0].ID, reason)
	if _, err := s.endLogin(ctx, ms[0].ID, status, how, false); err != nil && problem.KindOf(err) != problem.KindConflict {
		s.log.Warn("node: settle a sign-in card", "card", ms[0].ID, "err", err)
	}
}

// expireLogin ends a login card whose time ran out: its tab is given back blank, the node woken once.
func (s *Service) expireLogin(ctx context.Context, id string) error {
	_, c, err := s.loginCard(ctx, id)
	if err != nil {
		return err
	}
	if s.cfg.Browser != nil {
		s.cfg.Browser.Release(ctx, browser.Work(c.Work), c.Tab, true)
	}
	_, err = s.endLogin(ctx, id, CardExpired, "expired", false)
	return err
}

// ResumeLogins holds the tabs of waiting login cards again after a restart: each opens again
// under its id at its page and waits for the owner as before.
func (s *Service) ResumeLogins(ctx context.Context) {
	if s.cfg.Browser == nil {
		return
	}
	ms, err := s.queryMessages(ctx, s.cfg.Store.Reader(), `WHERE kind = 'approval' AND json_extract(data, '$.type') = 'login'
		AND json_extract(data, '$.status') IN ('pending', 'working')`)
	if err != nil {
		s.log.Warn("node: read waiting sign-ins", "err", err)
		return
	}
	for _, m := range ms {
		var c Card
		json.Unmarshal(m.Data, &c)
		w := browser.Work(c.Work)
		page := cmpOr(c.PageURL, c.Origin)
		if _, err := s.cfg.Browser.Open(ctx, browser.OpenOptions{Work: w, Owner: browserOwner, URL: page, Network: s.network(ctx), Tab: c.Tab}); err != nil {
			s.log.Warn("node: open a waiting sign-in's tab again", "tab", c.Tab, "err", err)
			continue
		}
		check := browser.SignedInCheck{}
		if c.SignedIn != nil {
			check = *c.SignedIn
		}
		if err := s.cfg.Browser.Hold(ctx, w, c.Tab, c.Purpose, check); err != nil {
			s.log.Warn("node: hold a waiting sign-in's tab again", "tab", c.Tab, "err", err)
		}
	}
}

// doneRe is a short owner message saying they finished a sign-in or check.
var doneRe = regexp.MustCompile(`(?i)^\W*(ok(ay)?\W+)?(done|i'?m done|finished|all set|(i('ve| have)?\s+)?(signed|logged)\s+in|(i\s+)?passed( it)?)\b`)

// notYetRe is a message that says the opposite.
var notYetRe = regexp.MustCompile(`(?i)\b(not yet|not done|can'?t|cannot|couldn'?t|didn'?t|isn'?t|won'?t|failed)\b`)

// saysDone reports whether an owner's short message says they finished signing in.
func saysDone(text string) bool {
	text = strings.TrimSpace(text)
	return len(text) <= 80 && doneRe.MatchString(text) && !notYetRe.MatchString(text)
}

// doneNote checks the node's newest waiting sign-in when its owner's message says they did it,
// and says for the turn what came of it ("" when there is none to check).
func (s *Service) doneNote(ctx context.Context, t Turn, n Node, msgs []Message) string {
	if s.cfg.Browser == nil || !t.ByOwner || t.Reason != ReasonMessage || len(msgs) == 0 {
		return ""
	}
	last := msgs[len(msgs)-1]
	if last.Author != AuthorPerson || !saysDone(last.Body) {
		return ""
	}
	m, ok := s.waitingLogin(ctx, n.ID, string(nodeWork(n.ID)), "")
	if !ok {
		return ""
	}
	_, note, err := s.checkLogin(ctx, m, "chat", true)
	if err != nil {
		return "Checking the sign-in your owner says they finished failed: " + err.Error()
	}
	return note
}

// OpenCLISignIn opens the page a command handed to the BROWSER helper in the node's own tab and
// raises the sign-in card for it in the node's chat with its owner (spec 002 §8.16.4: source
// "cli", the command's id).
func (s *Service) OpenCLISignIn(ctx context.Context, nodeID, commandID, page string) (Message, error) {
	n, err := s.Node(ctx, nodeID)
	if err != nil {
		return Message{}, err
	}
	return s.openCLISignIn(ctx, CLISignIn{NodeID: n.ID, RoomID: n.DMRoomID, Lane: convLane(n.DMRoomID, false), CommandID: commandID, URL: page})
}

// openCLISignIn is OpenCLISignIn in the command's own conversation: only pages on the public web
// over https, or this computer's own addresses.
func (s *Service) openCLISignIn(ctx context.Context, in CLISignIn) (Message, error) {
	if s.cfg.Browser == nil {
		return Message{}, errNoBrowser
	}
	n, err := s.Node(ctx, in.NodeID)
	if err != nil {
		return Message{}, err
	}
	page := in.URL
	u, err := url.Parse(page)
	if err != nil || u.Host == "" || u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname())) {
		return Message{}, problem.Invalid("A command's sign-in page opens only over https, or at this computer's own address.")
	}
	if why := s.refuseEnsemble(page); why != "" {
		return Message{}, problem.Invalid("%s", why)
	}
	p, err := s.cfg.Browser.Open(ctx, browser.OpenOptions{Work: nodeWork(n.ID), Owner: browserOwner, URL: page, Network: s.network(ctx)})
	if err != nil {
		return Message{}, fmt.Errorf("open %s for a command's sign-in: %w", u.Hostname(), err)
	}
	t := Turn{ID: in.TurnID, NodeID: n.ID, RoomID: in.RoomID, Lane: in.Lane, Private: in.Private, ByOwner: true}
	return s.raiseLogin(ctx, t, n, loginReq{tab: p.Tab, purpose: PurposeSignIn, origin: pageOrigin(page), pageURL: page, source: "cli", command: in.CommandID})
}

func isLoopbackHost(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// pageOrigin is an address's scheme and host.
func pageOrigin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return u.Scheme + "://" + u.Host
}
