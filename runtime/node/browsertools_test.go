package node

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/profiles"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// withBrowser gives the fixture's nodes the computer and a fake browser; saved secrets are the
// one value "hunter2-kept-value".
func (f *fixture) withBrowser(b *fakeBrowser) func(*Config) {
	return func(c *Config) {
		f.withComputer(c)
		home := filepath.Join(f.dir, "home")
		c.Computer = computer.New(computer.Options{Home: home, DataDir: filepath.Join(f.dir, "data"), Workspace: filepath.Join(f.dir, "data", "workspace"),
			Temp: []string{filepath.Join(f.dir, "tmp")}, Store: c.Store, Writer: c.Writer,
			Hide: func(s string) string { return strings.ReplaceAll(s, "hunter2-kept-value", "[hidden]") }})
		c.Browser = b
		c.RefuseURL = func(u string) string {
			if strings.Contains(u, "127.0.0.1:7777") {
				return "127.0.0.1:7777 is Ensemble itself, not a website to open or sign in to. Use your Ensemble tools: the board, task and page tools."
			}
			return ""
		}
	}
}

func (f *fixture) cards(room, typ string) []Card {
	var out []Card
	for _, m := range f.messages(room) {
		var c Card
		if m.Kind == KindApproval && json.Unmarshal(m.Data, &c) == nil && c.Type == typ {
			out = append(out, c)
		}
	}
	return out
}

func (f *fixture) cardMessage(room, typ string) Message {
	f.t.Helper()
	var last Message
	for _, m := range f.messages(room) {
		var c Card
		if m.Kind == KindApproval && json.Unmarshal(m.Data, &c) == nil && c.Type == typ {
			last = m
		}
	}
	if last.ID == "" {
		f.t.Fatalf("no %s card", typ)
	}
	return last
}

func cardOf(m Message) Card {
	var c Card
	json.Unmarshal(m.Data, &c)
	return c
}

// The browser tools are offered only in turns the owner started, by need; the tab tools only
// while the node has tabs.
func TestBrowserToolsOffered(t *testing.T) {
	owner := Turn{ByOwner: true, Reason: ReasonMessage, Lane: "conv:r:s"}
	for _, tt := range []struct {
		name       string
		t          Turn
		n          Node
		text       string
		has, tabs  bool
		want, tabT bool
	}{
		{"about a page", owner, Node{}, "take a screenshot of https://example.com", true, false, true, false},
		{"a site by name", owner, Node{}, "what does news.ycombinator.com say", true, true, true, true},
		{"signing in", owner, Node{}, "I signed in, try now", true, false, true, false},
		{"small talk", owner, Node{}, "good morning!", true, true, false, false},
		{"no browser", owner, Node{}, "open example.com", false, false, false, false},
		{"someone else's turn", Turn{Reason: ReasonMessage}, Node{}, "open example.com", true, false, false, false},
		{"a helper", owner, Node{ParentID: "nd_p"}, "open example.com", true, false, false, false},
		{"carrying on", Turn{ByOwner: true, Reason: ReasonApproval}, Node{}, "", true, true, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := browserToolsFor(tt.t, tt.n, tt.text, tt.has, tt.tabs)
			if (len(got) > 0) != tt.want || strings.Contains(strings.Join(got, ","), ToolBrowserTabs) != tt.tabT {
				t.Fatalf("offered %v; want tools %v, tab tools %v", got, tt.want, tt.tabT)
			}
		})
	}
}

func TestSaysDone(t *testing.T) {
	for text, want := range map[string]bool{"done": true, "Done!": true, "I signed in": true, "logged in, try now": true, "passed it": true,
		"ok, done": true, "not yet": false, "done? not yet": false, "I couldn't sign in": false, "please open example.com": false} {
		if got := saysDone(text); got != want {
			t.Errorf("saysDone(%q) = %v; want %v", text, got, want)
		}
	}
}

// A page that asks for a sign-in is handed to the owner: the tab is held, one login card waits
// in the chat, nothing is typed. I'm done checks; not signed in yet, the card keeps waiting with
// why. Seen done by the broker, the tab is given back, the card says signed in, and the node is
// woken in the same conversation. Not now gives the tab back blank.
func TestBrowserSignInCard(t *testing.T) {
	f := newFixture(t)
	f.close()
	fb := newFakeBrowser()
	f.open(f.withBrowser(fb))
	n := f.node("Ada")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolBrowserOpen, map[string]any{"url": "https://portal.example.com/login?next=/billing"}).When(enginetest.Match{LastUserContains: "open the portal"}),
		enginetest.Say("Waiting.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "waits for your owner"}),
		enginetest.Say("Signed in; carrying on.").When(enginetest.Match{LastUserContains: "signed in to portal.example.com"}),
		enginetest.ToolCall(ToolBrowserOpen, map[string]any{"url": "https://bank.example.com/login"}).When(enginetest.Match{LastUserContains: "open my bank"}),
		enginetest.Say("Waiting for the bank.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "waits for your owner"}),
		enginetest.Say("Understood.").When(enginetest.Match{LastUserContains: "said not now"}),
	)
	f.post(n.DMRoomID, "Please open the portal billing page.")
	f.waitFor("the login card", func() bool { return len(f.cards(n.DMRoomID, CardLogin)) == 1 })
	f.settle()
	m := f.cardMessage(n.DMRoomID, CardLogin)
	c := cardOf(m)
	if m.Body != "@ada needs you to sign in to portal.example.com." || c.Status != CardPending || c.Site != "portal.example.com" || c.Tab != "t1" ||
		!c.Takeover || c.ExpiresAt == nil || c.LoginID == "" || c.DecisionID == "" {
		t.Fatalf("the card: %q %+v %+v", m.Body, c, c.LoginAsk)
	}
	if !fb.isHeld("t1") || len(fb.typed) != 0 {
		t.Fatalf("held %v, typed %q", fb.isHeld("t1"), fb.typed)
	}
	if got := f.nodeTexts(n.DMRoomID); len(got) != 0 {
		t.Fatalf("a parked turn posted %q", got)
	}
	ctx := context.Background()
	if v, err := f.svc.Login(ctx, m.ID); err != nil || strings.Join(v.Offers, ",") != "takeover,done,decline" {
		t.Fatalf("the card offers %v, %v", v.Offers, err)
	}
	if _, err := f.svc.AnswerLogin(ctx, m.ID, LoginDone, "browser"); err != nil {
		t.Fatal(err)
	}
	if c := cardOf(f.cardMessage(n.DMRoomID, CardLogin)); c.Status != CardPending || !strings.Contains(c.Note, "Still not signed in") {
		t.Fatalf("after I'm done, not signed in yet: %s %q", c.Status, c.Note)
	}
	f.svc.OnSignIn(nodeWork(n.ID), "t1", true, "clean")
	if c := cardOf(f.cardMessage(n.DMRoomID, CardLogin)); c.Status != LoginSignedIn || c.Via != "clean" {
		t.Fatalf("after the sign-in was seen done: %s via %q", c.Status, c.Via)
	}
	if fb.isHeld("t1") || fb.released["t1"] {
		t.Fatal("the tab was not given back as it is")
	}
	f.waitFor("the node woken", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	if _, err := f.svc.AnswerLogin(ctx, m.ID, LoginDone, "browser"); err == nil {
		t.Fatal("an ended sign-in was answered again")
	}

	f.post(n.DMRoomID, "Now open my bank statements.")
	f.waitFor("the second login card", func() bool { return len(f.cards(n.DMRoomID, CardLogin)) == 2 })
	f.settle()
	bank := f.cardMessage(n.DMRoomID, CardLogin)
	if got, _ := f.svc.AnswerLogin(ctx, bank.ID, LoginLocal, "browser"); !strings.Contains(cardOf(got).Note, "no screen") {
		t.Fatalf("local without a screen: %q", cardOf(got).Note)
	}
	if _, err := f.svc.Answer(ctx, bank.ID, Discard, "browser"); err != nil { // Not now, as Needs me answers it
		t.Fatal(err)
	}
	if c := cardOf(f.cardMessage(n.DMRoomID, CardLogin)); c.Status != LoginDeclined || !fb.released["t2"] {
		t.Fatalf("after Not now: %s, cleared %v", c.Status, fb.released["t2"])
	}
	f.waitFor("the node told not now", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 2 })
	var leaked int
	f.st.Reader().QueryRow("SELECT count(*) FROM events WHERE kind = ? AND (data LIKE '%billing%' OR data LIKE '%next=%')", string(KindBrowserTool)).Scan(&leaked)
	if leaked != 0 {
		t.Error("a page's path is in the ledger")
	}
}

// A login card's tab is held again after a restart, under its id at its page.
func TestSignInHeldAfterRestart(t *testing.T) {
	f := newFixture(t)
	f.close()
	fb := newFakeBrowser()
	f.open(f.withBrowser(fb))
	n := f.node("Ada")
	ctx := context.Background()
	if _, err := f.svc.OpenCLISignIn(ctx, n.ID, "cmd_1", "https://login.microsoftonline.com/device"); err != nil {
		t.Fatal(err)
	}
	m := f.cardMessage(n.DMRoomID, CardLogin)
	if c := cardOf(m); c.Source != "cli" || c.Command != "cmd_1" || c.Tab != "t1" {
		t.Fatalf("the command's card: %+v", c.LoginAsk)
	}
	if _, err := f.svc.OpenCLISignIn(ctx, n.ID, "cmd_2", "http://example.com/"); err == nil {
		t.Fatal("a plain http page opened for a command")
	}
	f.close()
	again := newFakeBrowser()
	f.open(f.withBrowser(again))
	f.svc.ResumeLogins(ctx)
	if len(again.opens) != 1 || again.opens[0].Tab != "t1" || again.opens[0].URL != "https://login.microsoftonline.com/device" || !again.isHeld("t1") {
		t.Fatalf("after the restart: opens %+v, held %v", again.opens, again.isHeld("t1"))
	}
}

// shotsShowing is a fixture whose browser's screenshots show text.
func shotsShowing(t *testing.T, text string) (*fixture, *fakeBrowser) {
	t.Helper()
	f := newFixture(t)
	f.close()
	fb := newFakeBrowser()
	fb.shotText = text
	f.open(f.withBrowser(fb))
	return f, fb
}

// A screenshot that shows a saved secret or a key is held: no file in the chat, nothing of it
// for the model, one media_preview card. Released, it shows and the node is woken; discarded,
// it is deleted.
func TestHeldCapture(t *testing.T) {
	f, fb := shotsShowing(t, "Your password is hunter2-kept-value")
	n := f.node("Ada")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolBrowserOpen, map[string]any{"url": "https://example.com/"}).When(enginetest.Match{LastUserContains: "screenshot of example"}),
		enginetest.ToolCall(ToolBrowserScreenshot, map[string]any{"tab": "t1"}).When(enginetest.Match{ToolResult: &yes, LastUserContains: "Tab t1: example.com"}),
		enginetest.Say("It is held for you.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "held for your owner's preview"}),
		enginetest.Say("Here it is.").When(enginetest.Match{LastUserContains: "released and shown"}),
		enginetest.ToolCall(ToolCaptureScreenshot, map[string]any{"url": "https://example.com/keys", "device": "phone"}).When(enginetest.Match{LastUserContains: "capture the keys page"}),
		enginetest.Say("Held again.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "held for your owner's preview"}),
		enginetest.Say("Fine.").When(enginetest.Match{LastUserContains: "discarded"}),
	)
	f.post(n.DMRoomID, "Take a screenshot of example.com please.")
	f.waitFor("the reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	m := f.cardMessage(n.DMRoomID, CardMediaPreview)
	c := cardOf(m)
	if c.Status != CardPending || len(c.Evidence) != 1 || len(c.Reasons) != 1 || !strings.Contains(c.Reasons[0], "saved secrets") || c.DecisionID == "" {
		t.Fatalf("the preview card: %+v", c.PreviewAsk)
	}
	for _, r := range f.model.Requests() {
		raw, _ := json.Marshal(r.Messages)
		if strings.Contains(string(raw), "hunter2") {
			t.Fatal("the model read what the held screenshot showed")
		}
	}
	if files := fileMessages(f, n.DMRoomID); files != 0 {
		t.Fatalf("%d file messages before the owner released it", files)
	}
	ctx := context.Background()
	if r, _, err := f.svc.SharedFile(ctx, m.ID, c.Evidence[0].ID); err != nil {
		t.Fatalf("the owner cannot open the held file: %v", err)
	} else {
		r.Close()
	}
	if _, err := f.svc.Answer(ctx, m.ID, Approve, "browser"); err != nil {
		t.Fatal(err)
	}
	if c := cardOf(f.cardMessage(n.DMRoomID, CardMediaPreview)); c.Status != CardReleased || c.Answers[c.Evidence[0].ID] != CardReleased {
		t.Fatalf("after release: %s %v", c.Status, c.Answers)
	}
	f.waitFor("the file shown and the node woken", func() bool { return fileMessages(f, n.DMRoomID) == 1 && len(f.nodeTexts(n.DMRoomID)) >= 3 })

	fb.shotText = "aws_secret_key = " + strings.Repeat("Ab9", 14)
	f.post(n.DMRoomID, "Now capture the keys page on a phone.")
	f.waitFor("a second preview card", func() bool { return len(f.cards(n.DMRoomID, CardMediaPreview)) == 2 })
	f.settle()
	m = f.cardMessage(n.DMRoomID, CardMediaPreview)
	c = cardOf(m)
	if c.Status != CardPending || !strings.Contains(strings.Join(c.Reasons, ";"), "shaped like a key") {
		t.Fatalf("the second card: %+v", c.PreviewAsk)
	}
	if o := fb.opens[len(fb.opens)-1]; !o.Private || o.Width != 390 {
		t.Fatalf("capture_screenshot opened %+v", o)
	}
	if len(fb.Tabs(nodeWork(n.ID))) != 1 {
		t.Fatal("capture_screenshot left its private tab open")
	}
	if _, err := f.svc.Answer(ctx, m.ID, Discard, "browser"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.svc.SharedFile(ctx, m.ID, c.Evidence[0].ID); err == nil {
		t.Fatal("a discarded capture still opens")
	}
	if _, err := os.Stat(filepath.Join(f.dir, "data", "node-files", c.Evidence[0].ID)); !os.IsNotExist(err) {
		t.Fatalf("a discarded capture is still kept: %v", err)
	}
}

func fileMessages(f *fixture, room string) int {
	n := 0
	for _, m := range f.messages(room) {
		var d FileData
		if m.Kind == KindText && json.Unmarshal(m.Data, &d) == nil && d.Type == "file" {
			n++
		}
	}
	return n
}

// browser_type refuses a saved secret's value; Ensemble's own address is refused with the
// sentence; a screenshot shown comes with the reply and passes capture_check.
func TestBrowserTypeAndChecks(t *testing.T) {
	f := newFixture(t)
	f.close()
	fb := newFakeBrowser()
	fb.shotText = "Welcome to the dashboard"
	f.open(f.withBrowser(fb))
	n := f.node("Ada")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolBrowserOpen, map[string]any{"url": "http://127.0.0.1:7777/"}).When(enginetest.Match{LastUserContains: "open Ensemble"}),
		enginetest.Say("I use my tools instead.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "is Ensemble itself"}),
		enginetest.ToolCall(ToolBrowserOpen, map[string]any{"url": "https://example.com/"}).When(enginetest.Match{LastUserContains: "type my password"}),
		enginetest.ToolCall(ToolBrowserType, map[string]any{"tab": "t1", "ref": "e1", "text": "hunter2-kept-value"}).When(enginetest.Match{ToolResult: &yes, LastUserContains: "Tab t1"}),
		enginetest.Say("I never type secrets.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "never types"}),
		enginetest.ToolCall(ToolBrowserScreenshot, map[string]any{"tab": "t1"}).When(enginetest.Match{LastUserContains: "screenshot the dashboard"}),
		enginetest.Say("Shown.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "will appear with your reply"}),
	)
	f.post(n.DMRoomID, "Please open Ensemble's page at http://127.0.0.1:7777/")
	f.waitFor("the first reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	f.post(n.DMRoomID, "Open example.com and type my password there.")
	f.waitFor("the second reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 2 })
	if len(fb.typed) != 0 {
		t.Fatalf("typed %q", fb.typed)
	}
	if len(fb.opens) != 1 {
		t.Fatalf("Ensemble's own page opened: %+v", fb.opens)
	}
	f.post(n.DMRoomID, "Now screenshot the dashboard page.")
	f.waitFor("the picture and the reply", func() bool { return fileMessages(f, n.DMRoomID) == 1 && len(f.nodeTexts(n.DMRoomID)) == 4 })
	var id string
	for _, m := range f.messages(n.DMRoomID) {
		var d FileData
		if json.Unmarshal(m.Data, &d) == nil && d.Type == "file" {
			id = d.Files[0].ID
		}
	}
	checks, err := f.svc.captureCheck(n, captureCheckIn{Evidence: id, ExpectText: "dashboard"})
	if err != nil || len(checks) != 2 || !checks[0].Passed || !checks[1].Passed {
		t.Fatalf("capture_check: %+v %v", checks, err)
	}
	if checks, _ := f.svc.captureCheck(n, captureCheckIn{Evidence: id, ExpectText: "invoice"}); checks[1].Passed {
		t.Fatal("text the page did not show passed")
	}
}

// "done" in the chat checks the node's waiting sign-in before its turn: signed in, the card
// settles (via chat) and the turn is told, with no second turn woken for it.
func TestDoneInChat(t *testing.T) {
	f := newFixture(t)
	f.close()
	fb := newFakeBrowser()
	f.open(f.withBrowser(fb))
	n := f.node("Ada")
	ctx := context.Background()
	if _, err := f.svc.OpenCLISignIn(ctx, n.ID, "cmd_1", "https://login.example.com/device"); err != nil {
		t.Fatal(err)
	}
	f.model.Script(
		enginetest.Say("Not yet then.").When(enginetest.Match{LastUserContains: "Still not signed in to login.example.com"}),
		enginetest.Say("Thanks, carrying on.").When(enginetest.Match{LastUserContains: "signed in to login.example.com; tab t1 is yours again"}),
	)
	f.post(n.DMRoomID, "done")
	f.waitFor("the reply, not signed in yet", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	if c := cardOf(f.cardMessage(n.DMRoomID, CardLogin)); c.Status != CardPending {
		t.Fatalf("not signed in yet, the card is %s", c.Status)
	}
	fb.signedIn = true
	f.post(n.DMRoomID, "I signed in, try now")
	f.waitFor("the reply, signed in", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 2 })
	f.settle()
	if c := cardOf(f.cardMessage(n.DMRoomID, CardLogin)); c.Status != LoginSignedIn || c.Via != "chat" {
		t.Fatalf("after done in the chat: %s via %q", c.Status, c.Via)
	}
	if got := len(f.nodeTexts(n.DMRoomID)); got != 2 {
		t.Fatalf("%d replies; the sign-in woke a second turn", got)
	}
}

// pickRuns is the owner's run profile, for the internet setting.
type pickRuns struct {
	tools.Runs
	internet bool
}

func (p pickRuns) PickProfile(context.Context, string) (profiles.Profile, bool, error) {
	return profiles.Profile{Settings: jobs.SettingsInput{Internet: &p.internet}}, true, nil
}

// With the internet off in the owner's run profile, a node's tabs open LocalOnly and a public
// page is refused.
func TestBrowserInternetOff(t *testing.T) {
	f := newFixture(t)
	f.close()
	fb := newFakeBrowser()
	f.open(f.withBrowser(fb), func(c *Config) { c.Runs = pickRuns{} })
	n := f.node("Ada")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolBrowserOpen, map[string]any{"url": "https://example.com/"}).When(enginetest.Match{LastUserContains: "open example"}),
		enginetest.Say("The internet is off.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "internet off"}),
		enginetest.ToolCall(ToolBrowserOpen, map[string]any{"url": "http://127.0.0.1:5173/"}).When(enginetest.Match{LastUserContains: "my app"}),
		enginetest.Say("Asked.").When(enginetest.Match{ToolResult: &yes}),
	)
	f.post(n.DMRoomID, "Please open example.com.")
	f.waitFor("the refusal", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	if len(fb.opens) != 0 {
		t.Fatalf("a public page opened with the internet off: %+v", fb.opens)
	}
	f.post(n.DMRoomID, "Then open my app on localhost.")
	var card Message
	f.waitFor("the computer card for this computer's address", func() bool {
		for _, m := range f.messages(n.DMRoomID) {
			if c := cardOf(m); m.Kind == KindApproval && c.Type == "computer" {
				card = m
				return true
			}
		}
		return false
	})
	if !strings.Contains(card.Body, "open http://127.0.0.1:5173/ in its browser") {
		t.Fatalf("the card: %q", card.Body)
	}
	if _, err := f.svc.Answer(context.Background(), card.ID, DecideAlways, "browser"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the tab", func() bool { fb.mu.Lock(); defer fb.mu.Unlock(); return len(fb.opens) == 1 })
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if fb.opens[0].Network != browser.LocalOnly {
		t.Fatalf("opened with %v, not LocalOnly", fb.opens[0].Network)
	}
}

// A click whose element orders, pays, sends or deletes is asked on a computer card (Once or
// This mission, never Always) unless the owner's words asked for it; other clicks go ahead.
func TestBrowserConsequentialClick(t *testing.T) {
	f := newFixture(t)
	f.close()
	fb := newFakeBrowser()
	fb.shotText = "- link \"Details\" [ref=e1]\n- button \"Place order\" [ref=e2]"
	f.open(f.withBrowser(fb))
	n := f.node("Ada")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolBrowserOpen, map[string]any{"url": "https://shop.example.com/cart"}).When(enginetest.Match{LastUserContains: "look at my cart"}),
		enginetest.ToolCall(ToolBrowserSnapshot, map[string]any{"tab": "t1"}).When(enginetest.Match{ToolResult: &yes, LastUserContains: "Tab t1"}),
		enginetest.ToolCall(ToolBrowserClick, map[string]any{"tab": "t1", "ref": "e1"}).When(enginetest.Match{ToolResult: &yes, LastUserContains: "Place order"}),
		enginetest.ToolCall(ToolBrowserClick, map[string]any{"tab": "t1", "ref": "e2"}).When(enginetest.Match{ToolResult: &yes, LastUserContains: "Tab t1"}),
		enginetest.Say("Ordered.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "Tab t1"}),
		enginetest.ToolCall(ToolBrowserClick, map[string]any{"tab": "t1", "ref": "e2"}).When(enginetest.Match{LastUserContains: "order the kettle"}),
		enginetest.Say("Ordered again.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "Tab t1"}),
	)
	f.post(n.DMRoomID, "Please look at my cart in the browser.")
	f.waitFor("the computer card", func() bool { return len(f.cards(n.DMRoomID, "computer")) == 1 })
	m := f.cardMessage(n.DMRoomID, "computer")
	c := cardOf(m)
	if fb.clicks() != "e1" || c.Computer == nil || c.Computer.Always || len(c.Computer.Ask) != 1 || c.Computer.Ask[0].Value != "shop.example.com order" ||
		!strings.Contains(m.Body, "click “Place order” on shop.example.com") {
		t.Fatalf("clicked %q before the card; the card %q %+v", fb.clicks(), m.Body, c.Computer)
	}
	ctx := context.Background()
	if _, err := f.svc.Answer(ctx, m.ID, DecideAlways, "browser"); err == nil {
		t.Fatal("an order was allowed always")
	}
	if _, err := f.svc.Answer(ctx, m.ID, DecideOnce, "browser"); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	if fb.clicks() != "e1,e2" {
		t.Fatalf("clicks after Once: %q", fb.clicks())
	}
	f.post(n.DMRoomID, "Thanks, now order the kettle again in the browser.")
	f.waitFor("the second reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 2 })
	if fb.clicks() != "e1,e2,e2" || len(f.cards(n.DMRoomID, "computer")) != 1 {
		t.Fatalf("the owner's own words: clicks %q, %d cards", fb.clicks(), len(f.cards(n.DMRoomID, "computer")))
	}
}

// Held files are answered one at a time too: the first released shows at once and the card
// waits for the other; the last answer settles the card with both, waking the node.
func TestHeldCaptureOneAtATime(t *testing.T) {
	f, _ := shotsShowing(t, "Your password is hunter2-kept-value")
	n := f.node("Ada")
	yes := true
	f.model.Script(
		enginetest.ToolCall(ToolBrowserOpen, map[string]any{"url": "https://example.com/"}).When(enginetest.Match{LastUserContains: "two screenshots"}),
		enginetest.ToolCall(ToolBrowserScreenshot, map[string]any{"tab": "t1"}).When(enginetest.Match{ToolResult: &yes, LastUserContains: "Tab t1: example.com"}),
		enginetest.ToolCall(ToolBrowserScreenshot, map[string]any{"tab": "t1", "fullPage": true}).When(enginetest.Match{ToolResult: &yes, LastUserContains: "held for your owner's preview"}),
		enginetest.Say("Both are held for you.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "held for your owner's preview"}),
		enginetest.Say("The first one shows the account page.").When(enginetest.Match{LastUserContains: "released 1 of the held screenshots (and discarded 1)"}),
	)
	f.post(n.DMRoomID, "Take two screenshots of example.com please.")
	f.waitFor("the reply", func() bool { return len(f.nodeTexts(n.DMRoomID)) == 1 })
	c := cardOf(f.cardMessage(n.DMRoomID, CardMediaPreview))
	if len(c.Evidence) != 2 || c.Status != CardPending {
		t.Fatalf("one card with both files: %+v", c.PreviewAsk)
	}
	first, second := c.Evidence[0].ID, c.Evidence[1].ID
	ctx := context.Background()
	if _, err := f.svc.AnswerHeldFile(ctx, first, Approve, "browser"); err != nil {
		t.Fatal(err)
	}
	if c := cardOf(f.cardMessage(n.DMRoomID, CardMediaPreview)); c.Status != CardPending || c.Answers[first] != CardReleased || c.Answers[second] != "" {
		t.Fatalf("after the first: %s %v", c.Status, c.Answers)
	}
	if files := fileMessages(f, n.DMRoomID); files != 1 {
		t.Fatalf("%d file messages after one release, want 1", files)
	}
	if _, err := f.svc.AnswerHeldFile(ctx, first, Discard, "browser"); problem.KindOf(err) != problem.KindConflict {
		t.Fatalf("a second answer to the same file: %v", err)
	}
	if _, err := f.svc.AnswerHeldFile(ctx, "nf_nothing", Approve, "browser"); problem.KindOf(err) != problem.KindNotFound {
		t.Fatalf("a file no card holds: %v", err)
	}
	if _, err := f.svc.AnswerHeldFile(ctx, second, "always", "browser"); problem.KindOf(err) != problem.KindInvalid {
		t.Fatalf("a decision a file does not take: %v", err)
	}
	if _, err := f.svc.AnswerHeldFile(ctx, second, Discard, "browser"); err != nil {
		t.Fatal(err)
	}
	c = cardOf(f.cardMessage(n.DMRoomID, CardMediaPreview))
	if c.Status != CardReleased || c.Answers[first] != CardReleased || c.Answers[second] != CardDiscarded {
		t.Fatalf("the settled card: %s %v", c.Status, c.Answers)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "data", "node-files", second)); !os.IsNotExist(err) {
		t.Fatalf("the discarded file is still kept: %v", err)
	}
	f.waitFor("the node woken once, for the released one", func() bool { return slices.Contains(f.nodeTexts(n.DMRoomID), "The first one shows the account page.") })
	if files := fileMessages(f, n.DMRoomID); files != 1 {
		t.Fatalf("%d file messages at the end, want 1", files)
	}
}
