//go:build !windows

package api

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/coder/websocket"

	"github.com/ensemblework/ensemble/runtime/terminal"
)

func withTerminals(t *testing.T) *fixture {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	f := newFixture(t)
	m := terminal.New(terminal.Options{Max: 2, Shell: sh, Home: t.TempDir()})
	t.Cleanup(m.Close)
	f.api.opts.Terminals = m
	f.srv.Config.Handler = f.api.Handler()
	return f
}

func (f *fixture) dialTerminal(t *testing.T, ctx context.Context, id string, header http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	if header == nil {
		header = http.Header{"Authorization": {"Bearer " + f.token.Reveal()}}
	}
	u := "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/api/terminals/" + id + "/ws?cols=60&rows=12"
	return websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: header})
}

func TestTerminalOverWebSocket(t *testing.T) {
	f := withTerminals(t)
	code, body := f.call(t, "POST", "/api/terminals", `{"cols":60,"rows":12}`)
	if code != http.StatusCreated {
		t.Fatalf("start: %d %v", code, body)
	}
	id := body["id"].(string)
	if code, body := f.call(t, "GET", "/api/terminals", ""); code != 200 || len(body["terminals"].([]any)) != 1 {
		t.Fatalf("list: %d %v", code, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, _, err := f.dialTerminal(t, ctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	screen := vt.NewEmulator(60, 12)
	go func() { // the emulator answers queries on its pipe; nobody needs them here
		b := make([]byte, 256)
		for {
			if _, err := screen.Read(b); err != nil {
				return
			}
		}
	}()
	frames := make(chan []byte, 64)
	var readErr error // set before frames closes
	go func() {
		defer close(frames)
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				readErr = err
				return
			}
			frames <- b
		}
	}()
	send := func(v any) {
		b, _ := json.Marshal(v)
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	waitScreen := func(want string) {
		t.Helper()
		for {
			for _, l := range strings.Split(screen.String(), "\n") {
				if strings.TrimSpace(l) == want {
					return
				}
			}
			select {
			case b, ok := <-frames:
				if !ok {
					t.Fatalf("connection ended before %q; screen:\n%s", want, screen.String())
				}
				screen.Write(b)
			case <-ctx.Done():
				t.Fatalf("no %q on the screen:\n%s", want, screen.String())
			}
		}
	}
	// the first frame is the screen: wait for the prompt before typing
	for strings.TrimSpace(screen.String()) == "" {
		select {
		case b := <-frames:
			screen.Write(b)
		case <-ctx.Done():
			t.Fatal("no prompt")
		}
	}
	send(map[string]any{"type": "resize", "cols": 70, "rows": 20})
	send(map[string]any{"type": "input", "data": "echo hi; stty size\r"})
	waitScreen("hi")
	waitScreen("20 70")

	// A bad message closes the connection, saying why.
	c.Write(ctx, websocket.MessageText, []byte(`{"type":"shout"}`))
	for range frames {
	}
	if websocket.CloseStatus(readErr) != websocket.StatusUnsupportedData {
		t.Errorf("after a bad message: %v", readErr)
	}

	if code, body := f.call(t, "DELETE", "/api/terminals/"+id, ""); code != 200 {
		t.Fatalf("delete: %d %v", code, body)
	}
	if code, _ := f.call(t, "DELETE", "/api/terminals/"+id, ""); code != 404 {
		t.Fatalf("delete again: %d, want 404", code)
	}
}

func TestTerminalAccess(t *testing.T) {
	f := withTerminals(t)
	_, body := f.call(t, "POST", "/api/terminals", `{}`)
	id, _ := body["id"].(string)
	if id == "" {
		t.Fatalf("start: %v", body)
	}
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		headers []string
		want    int
	}{
		{"start without sign-in", "POST", "/api/terminals", `{}`, []string{"Authorization", ""}, 401},
		{"list without sign-in", "GET", "/api/terminals", "", []string{"Authorization", ""}, 401},
		{"delete without sign-in", "DELETE", "/api/terminals/" + id, "", []string{"Authorization", ""}, 401},
		{"start from another site", "POST", "/api/terminals", `{}`, []string{"Origin", "http://evil.example"}, 403},
		{"unknown field", "POST", "/api/terminals", `{"command":"rm -rf /"}`, nil, 400},
		{"an arbitrary login", "POST", "/api/terminals", `{"login":"rm -rf /"}`, nil, 400},
		{"relative folder", "POST", "/api/terminals", `{"folder":"tmp"}`, nil, 400},
		{"missing folder", "POST", "/api/terminals", `{"folder":"/no/such/folder"}`, nil, 400},
		{"huge size", "POST", "/api/terminals", `{"cols":100000,"rows":10}`, nil, 400},
		{"negative size", "POST", "/api/terminals", `{"cols":-1}`, nil, 400},
		{"not JSON", "POST", "/api/terminals", `cols=80`, nil, 400},
		{"unknown terminal", "DELETE", "/api/terminals/ts0000", "", nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, body := f.call(t, tt.method, tt.path, tt.body, tt.headers...); code != tt.want {
				t.Fatalf("got %d %v, want %d", code, body, tt.want)
			}
		})
	}
	if code, body := f.call(t, "GET", "/api/terminals", ""); code != 200 || len(body["terminals"].([]any)) != 1 {
		t.Fatalf("refused requests opened terminals: %v", body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	auth := "Bearer " + f.token.Reveal()
	host := strings.TrimPrefix(f.srv.URL, "http://")
	upgrades := []struct {
		name   string
		header http.Header
		want   int
	}{
		{"no sign-in", http.Header{}, 401},
		{"another site", http.Header{"Authorization": {auth}, "Origin": {"http://evil.example"}}, 403},
		{"another port", http.Header{"Authorization": {auth}, "Origin": {"http://127.0.0.1:1"}}, 403},
		{"another scheme", http.Header{"Authorization": {auth}, "Origin": {"https://" + host}}, 403},
	}
	for _, tt := range upgrades {
		t.Run("upgrade, "+tt.name, func(t *testing.T) {
			c, resp, err := f.dialTerminal(t, ctx, id, tt.header)
			if err == nil {
				c.CloseNow()
				t.Fatal("the upgrade was accepted")
			}
			if resp == nil || resp.StatusCode != tt.want {
				t.Fatalf("got %v, %v; want %d", resp, err, tt.want)
			}
		})
	}
	// the runtime's own origin is let in
	c, _, err := f.dialTerminal(t, ctx, id, http.Header{"Authorization": {auth}, "Origin": {f.srv.URL}})
	if err != nil {
		t.Fatalf("same origin: %v", err)
	}
	c.CloseNow()
	if _, resp, _ := f.dialTerminal(t, ctx, "ts0000", nil); resp == nil || resp.StatusCode != 404 {
		t.Fatalf("unknown terminal's upgrade: %v", resp)
	}
}
