package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	chromium "github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/engines/enginetest"
	"github.com/ensemblework/ensemble/runtime/node"
)

// signInSite is a site with a sign-in form at fixed places of a 1280×800 page: the account
// page answers only with the session the form sets.
func signInSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><title>Sign in</title><body style="margin:0">
<form method="post" action="/login">
<input name="user" autocomplete="username" style="position:absolute;left:100px;top:100px;width:300px;height:40px">
<input name="pass" type="password" autocomplete="current-password" style="position:absolute;left:100px;top:200px;width:300px;height:40px">
<button style="position:absolute;left:100px;top:300px">Sign in</button></form>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("user") != "ada" || r.FormValue("pass") != "s3cret-pass" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "ada-session", Path: "/", HttpOnly: true})
		http.Redirect(w, r, "/account", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /account", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("sid"); err != nil || c.Value != "ada-session" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		io.WriteString(w, `<!doctype html><title>Your account</title><h1>Welcome back, Ada</h1><p>Balance: 42.00</p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// signInNode is a runtime with the real broker whose node Ada has opened site's account page,
// met its sign-in form and handed it to its owner: the login card waits.
type signInNode struct {
	rt     *Runtime
	c      *client
	nodeID string
	room   string
	card   string // the login card's message id
}

func startSignInNode(t *testing.T, ctx context.Context, site *httptest.Server) signInNode {
	t.Helper()
	t.Setenv("DISPLAY", "") // headless: no window on the test machine
	t.Setenv("WAYLAND_DISPLAY", "")
	rt, c, model, n := startNodeRuntime(t, ctx, runtimeConfig{}, "Ada")
	yes := true
	model.Script(
		enginetest.ToolCall(node.ToolBrowserOpen, map[string]any{"url": site.URL + "/account"}).When(enginetest.Match{LastUserContains: "open my account"}),
		enginetest.ToolCall(node.ToolLoginNeeded, map[string]any{"tab": "t1", "reason": "To read the balance."}).When(enginetest.Match{ToolResult: &yes, LastUserContains: "Sign in"}),
		enginetest.Say("Waiting for you to sign in.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "waits for your owner"}),
		enginetest.ToolCall(node.ToolBrowserSnapshot, map[string]any{"tab": "t1"}).When(enginetest.Match{LastUserContains: "tab t1 is yours again"}),
		enginetest.Say("The balance is 42.00.").When(enginetest.Match{ToolResult: &yes, LastUserContains: "Welcome back, Ada"}),
	)
	if err := c.do(ctx, "POST", "/api/node/rooms/"+n.DMRoomID+"/messages", map[string]any{"body": "Please open my account page in the browser.", "clientId": "c1"}, nil); err != nil {
		t.Fatal(err)
	}
	// The site is on this computer: opening it asks once.
	ask := waitCard(t, ctx, rt, n.DMRoomID, "computer", "pending")
	if _, err := rt.nodes.Answer(ctx, ask, node.DecideOnce, "browser"); err != nil {
		t.Fatal(err)
	}
	return signInNode{rt: rt, c: c, nodeID: n.ID, room: n.DMRoomID, card: waitCard(t, ctx, rt, n.DMRoomID, "login", "pending")}
}

// signedIn checks what a sign-in leaves: the card signed in, the node woken on the account page
// in its own tab, and neither the password nor the session in the database.
func (sn signInNode) signedIn(t *testing.T, ctx context.Context) {
	t.Helper()
	waitCard(t, ctx, sn.rt, sn.room, "login", "signed_in")
	waitNodeSays(t, ctx, sn.rt, sn.room, "The balance is 42.00.")
	tabs := sn.rt.broker.Tabs(chromium.Work("node:" + sn.nodeID + ":own"))
	if len(tabs) != 1 || tabs[0].Held || !strings.HasSuffix(tabs[0].URL, "/account") {
		t.Fatalf("the node's tabs after the sign-in: %+v", tabs)
	}
	for _, table := range []string{"events", "node_messages"} {
		var leaked int
		sn.rt.store.Reader().QueryRow("SELECT count(*) FROM " + table + " WHERE data LIKE '%s3cret-pass%' OR data LIKE '%ada-session%'").Scan(&leaked)
		if leaked != 0 {
			t.Errorf("the password or the session is in %s", table)
		}
	}
}

// The sign-in form's fields, as fractions of the 1280×800 page.
var (
	userField = [2]float64{250.0 / 1280, 120.0 / 800}
	passField = [2]float64{250.0 / 1280, 220.0 / 800}
)

// TestNodeBrowserSignIn: the whole sign-in with the real broker and Chromium. A node opens a
// site, hands the sign-in to its owner; the owner signs in through the login card's view of the
// clean browser (taps and keys as the page sends them); the broker sees it done, the session
// moves into the node's tab, the card says signed in, the node is woken and reads the account
// page. The password is nowhere in the database.
func TestNodeBrowserSignIn(t *testing.T) {
	needBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sn := startSignInNode(t, ctx, signInSite(t))
	tk, err := sn.rt.nodes.OpenLoginTakeover(ctx, sn.card)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Browser != "clean" {
		t.Fatalf("the sign-in's view is of the %s browser (%s)", tk.Browser, tk.Note)
	}
	view, err := sn.rt.nodes.StartTakeover(tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []node.Input{
		{T: "tap", X: userField[0], Y: userField[1]}, {T: "text", Text: "ada"},
		{T: "tap", X: passField[0], Y: passField[1]}, {T: "text", Text: "s3cret-pass"}, {T: "key", Key: "Enter"},
	} {
		if err := view.Input(in); err != nil {
			t.Fatalf("input %s: %v", in.T, err)
		}
	}
	sn.signedIn(t, ctx)
	select {
	case <-view.Done():
	case <-ctx.Done():
		t.Fatal("the sign-in's view did not end with the sign-in")
	}
}

// TestNodeUIBrowserSignIn: the same sign-in from the page. Open the browser on the login card
// shows the clean browser live in the card, in control; taps on the picture and the page's
// text box sign in; the card then says signed in and the node goes on. Looked at in Chromium
// at 1280 and 390 px.
func TestNodeUIBrowserSignIn(t *testing.T) {
	needUI(t)
	site := signInSite(t)
	browser := newBrowser(t)
	ctx, cancel := context.WithTimeout(browser, browserTestTime)
	defer cancel()
	sn := startSignInNode(t, ctx, site)
	if err := chromedp.Do(ctx, chromedp.Navigate(sn.rt.SigninURL())); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board, live", `document.querySelector('#live')?.dataset.state === 'live'`)
	if err := chromedp.Do(ctx, chromedp.Navigate(sn.rt.URL+"/#/nodes/"+sn.room)); err != nil {
		t.Fatal(err)
	}
	card := `[data-message-id="` + sn.card + `"]`
	waitFor(t, ctx, "the login card", `!!document.querySelector('`+card+` .card-login-takeover')`)
	press(t, ctx, card+` .card-login-takeover`)
	signInThroughView(t, ctx, card, "node-browser-signin")
	sn.signedIn(t, ctx)
	waitFor(t, ctx, "the card, signed in", `!!document.querySelector('`+card+` .node-card[data-status="signed_in"]') && !document.querySelector('`+card+` .bv')`)
	screenshot(t, ctx, "node-browser-signed-in-390.png", 390)
}

// signInThroughView signs in to signInSite through the clean browser's view inside scope, as a
// person does: once its picture shows, in control, it takes screenshots named shots-1280/390, then
// taps the fields on the picture and types into the view's text box.
func signInThroughView(t *testing.T, ctx context.Context, scope, shots string) {
	t.Helper()
	pic := scope + ` .bv-picture`
	waitFor(t, ctx, "the clean browser's picture, in control", `(document.querySelector('`+pic+`')?.naturalWidth || 0) > 0 &&
		document.querySelector('`+scope+` .bv')?.dataset.mode === 'control' && document.querySelector('`+scope+` .bv')?.dataset.browser === 'clean'`)
	screenshot(t, ctx, shots+"-1280.png", 1280)
	screenshot(t, ctx, shots+"-390.png", 390)
	tap := func(at [2]float64) {
		t.Helper()
		xy, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => {
			const el = document.querySelector('%s');
			el.scrollIntoView({ block: 'center' });
			const r = el.getBoundingClientRect();
			return [r.left + r.width * %g, r.top + r.height * %g];
		})()`, pic, at[0], at[1])))
		if err != nil || len(xy) != 2 {
			t.Fatalf("where the picture is: %v %v", xy, err)
		}
		if err := chromedp.Do(ctx, chromedp.MouseClickXY(xy[0], xy[1])); err != nil {
			t.Fatal(err)
		}
	}
	typeIn := func(text string, enter bool) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.SendKeys(scope+` .bv-type input`, text)); err != nil {
			t.Fatal(err)
		}
		press(t, ctx, scope+map[bool]string{true: ` .bv-enter`, false: ` .bv-send`}[enter])
	}
	tap(userField)
	typeIn("ada", false)
	tap(passField)
	typeIn("s3cret-pass", true)
}

// waitCard waits for a card of the room of type typ to have status, and answers its id.
func waitCard(t *testing.T, ctx context.Context, rt *Runtime, room, typ, status string) string {
	t.Helper()
	for {
		ms, err := rt.nodes.Messages(ctx, room, node.Page{Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			var c struct{ Type, Status string }
			if json.Unmarshal(m.Data, &c) == nil && c.Type == typ && c.Status == status {
				return m.ID
			}
		}
		select {
		case <-ctx.Done():
			var seen []string
			for _, m := range ms {
				seen = append(seen, m.Kind+": "+m.Body+" "+string(m.Data))
			}
			t.Fatalf("no %s card %s in the room:\n%s", typ, status, strings.Join(seen, "\n"))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitNodeSays waits for the node to say text in the room.
func waitNodeSays(t *testing.T, ctx context.Context, rt *Runtime, room, text string) {
	t.Helper()
	for {
		ms, err := rt.nodes.Messages(ctx, room, node.Page{Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.Author == "node" && strings.Contains(m.Body, text) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the node did not say %q", text)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
