package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// TestNodeBrowserSignIn: the whole sign-in with the real broker and Chromium. A node opens a
// site, hands the sign-in to its owner; the owner signs in through the login card's view of the
// clean browser (taps and keys as the page sends them); the broker sees it done, the session
// moves into the node's tab, the card says signed in, the node is woken and reads the account
// page. The password is nowhere in the database.
func TestNodeBrowserSignIn(t *testing.T) {
	needBrowser(t)
	t.Setenv("DISPLAY", "") // headless: no window on the test machine
	t.Setenv("WAYLAND_DISPLAY", "")
	site := signInSite(t)
	model := enginetest.NewServer(t)
	t.Setenv("ANTHROPIC_API_KEY", "test-key")
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := &client{f: apiFile{URL: rt.URL, Token: readToken(t, rt)}, http: httpClient()}
	if err := c.do(ctx, "PUT", "/api/assistant/settings", map[string]any{"provider": "anthropic", "model": "claude-test"}, nil); err != nil {
		t.Fatal(err)
	}
	var n struct {
		ID       string `json:"id"`
		DMRoomID string `json:"dmRoomId"`
	}
	if err := c.do(ctx, "POST", "/api/node/nodes", map[string]any{"name": "Ada"}, &n); err != nil {
		t.Fatal(err)
	}
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
	card := waitCard(t, ctx, rt, n.DMRoomID, "login", "pending")
	tk, err := rt.nodes.OpenLoginTakeover(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Browser != "clean" {
		t.Fatalf("the sign-in's view is of the %s browser (%s)", tk.Browser, tk.Note)
	}
	view, err := rt.nodes.StartTakeover(tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []node.Input{
		{T: "tap", X: 250.0 / 1280, Y: 120.0 / 800}, {T: "text", Text: "ada"},
		{T: "tap", X: 250.0 / 1280, Y: 220.0 / 800}, {T: "text", Text: "s3cret-pass"}, {T: "key", Key: "Enter"},
	} {
		if err := view.Input(in); err != nil {
			t.Fatalf("input %s: %v", in.T, err)
		}
	}
	waitCard(t, ctx, rt, n.DMRoomID, "login", "signed_in")
	select {
	case <-view.Done():
	case <-ctx.Done():
		t.Fatal("the sign-in's view did not end with the sign-in")
	}
	waitNodeSays(t, ctx, rt, n.DMRoomID, "The balance is 42.00.")

	tabs := rt.broker.Tabs(chromium.Work("node:" + n.ID + ":own"))
	if len(tabs) != 1 || tabs[0].Held || !strings.HasSuffix(tabs[0].URL, "/account") {
		t.Fatalf("the node's tabs after the sign-in: %+v", tabs)
	}
	for _, table := range []string{"events", "node_messages"} {
		var leaked int
		rt.store.Reader().QueryRow("SELECT count(*) FROM " + table + " WHERE data LIKE '%s3cret-pass%' OR data LIKE '%ada-session%'").Scan(&leaked)
		if leaked != 0 {
			t.Errorf("the password or the session is in %s", table)
		}
	}
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
