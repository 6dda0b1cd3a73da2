//go:build !windows

package node_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ensemblework/ensemble/runtime/api"
	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/takeover"
)

// liveServer is the API server over a node with a live terminal card, and this computer's keys.
type liveServer struct {
	*node.LiveFixture
	srv *httptest.Server
	tok api.LaunchToken
	sec *secrets.Store
}

func newLiveServer(t *testing.T) *liveServer {
	t.Helper()
	return newLiveServerOf(t, node.NewLiveFixture(t))
}

func newLiveServerOf(t *testing.T, l *node.LiveFixture) *liveServer {
	t.Helper()
	sec, err := secrets.New(context.Background(), secrets.Options{DataDir: filepath.Dir(l.Store.Path()), Store: l.Store, Writer: l.Writer})
	if err != nil {
		t.Fatal(err)
	}
	tok := api.NewLaunchToken()
	a := api.New(api.Options{Version: "test", Token: tok, Keepalive: time.Minute, Nodes: l.Svc, Secrets: sec},
		slog.New(slog.NewTextHandler(io.Discard, nil)), l.Store, l.Bus, records.New(l.Store, l.Writer))
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return &liveServer{LiveFixture: l, srv: srv, tok: tok, sec: sec}
}

func (ls *liveServer) call(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, ls.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+ls.tok.Reveal())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (ls *liveServer) open(t *testing.T) node.Takeover {
	t.Helper()
	code, out := ls.call(t, "POST", "/api/node/takeovers", `{"liveCardId":"`+ls.CardID+`"}`)
	if code != http.StatusCreated {
		t.Fatalf("open: %d %v", code, out)
	}
	var tk struct{ Takeover node.Takeover }
	b, _ := json.Marshal(out)
	json.Unmarshal(b, &tk)
	return tk.Takeover
}

func TestLiveTakeoverRoutes(t *testing.T) {
	ls := newLiveServer(t)
	tk := ls.open(t)
	if tk.Mode != "watch" || tk.Kind != "terminal" || tk.Session != ls.Session || tk.LiveCardID != ls.CardID {
		t.Fatalf("takeover = %+v", tk)
	}
	path := "/api/node/takeovers/" + tk.ID
	for _, c := range []struct {
		name, method, path, body string
		want                     int
		check                    func(map[string]any) bool
	}{
		{"no card", "POST", "/api/node/takeovers", `{}`, 400, nil},
		{"unknown card", "POST", "/api/node/takeovers", `{"liveCardId":"msg_nope"}`, 404, nil},
		{"read", "GET", path, ``, 200, func(o map[string]any) bool { return o["takeover"].(map[string]any)["mode"] == "watch" }},
		{"control without on", "POST", path + "/control", `{}`, 400, nil},
		{"control", "POST", path + "/control", `{"on":true}`, 200, func(o map[string]any) bool { return o["takeover"].(map[string]any)["mode"] == "control" }},
		{"watch again", "POST", path + "/control", `{"on":false}`, 200, func(o map[string]any) bool { return o["takeover"].(map[string]any)["mode"] == "watch" }},
		{"extend", "POST", path + "/extend", ``, 200, func(o map[string]any) bool {
			ends, _ := time.Parse(time.RFC3339, o["takeover"].(map[string]any)["endsAt"].(string))
			return ends.After(tk.EndsAt.Add(node.TakeoverWindow - time.Second))
		}},
		{"unknown takeover", "POST", "/api/node/takeovers/tk_nope/control", `{"on":true}`, 404, nil},
		{"stop", "DELETE", path, ``, 200, func(o map[string]any) bool { return o["takeover"].(map[string]any)["endReason"] == "stopped" }},
		{"stopped is gone", "GET", path, ``, 404, nil},
	} {
		code, out := ls.call(t, c.method, c.path, c.body)
		if code != c.want || c.check != nil && !c.check(out) {
			t.Errorf("%s: %d %v, want %d", c.name, code, out, c.want)
		}
		if code >= 400 {
			if msg, _ := out["error"].(string); !strings.HasSuffix(msg, ".") {
				t.Errorf("%s: the error %q is not a sentence", c.name, msg)
			}
		}
	}
	// The node ends its view: the card answers 410.
	if err := ls.StopLive(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, out := ls.call(t, "POST", "/api/node/takeovers", `{"liveCardId":"`+ls.CardID+`"}`); code != http.StatusGone {
		t.Fatalf("an ended card: %d %v, want 410", code, out)
	}
}

// page is the owner's page on a view's WebSocket: it seals the secret, opens frames and sends input.
type page struct {
	t  *testing.T
	c  *websocket.Conn
	ch *takeover.Channel
}

func (ls *liveServer) dial(t *testing.T, ctx context.Context, tk node.Takeover) *page {
	t.Helper()
	return ls.dialSealed(t, ctx, tk.ID, tk)
}

// dialSealed opens takeover id's WebSocket with a start sealed for tk.
func (ls *liveServer) dialSealed(t *testing.T, ctx context.Context, id string, tk node.Takeover) *page {
	t.Helper()
	u := "ws" + strings.TrimPrefix(ls.srv.URL, "http") + "/api/node/takeovers/" + id + "/ws"
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{
		"Authorization": {"Bearer " + ls.tok.Reveal()}, "Origin": {ls.srv.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	secret := make([]byte, takeover.SecretSize)
	rand.Read(secret)
	nonce := make([]byte, 18)
	rand.Read(nonce)
	key := ls.sec.SealKey()
	box, err := secrets.Seal(key.SPKI, secrets.AAD{Purpose: "takeover", DeviceID: key.Kid, DecisionID: tk.ID, Name: cmp.Or(tk.Session, tk.Tab),
		Origin: ls.srv.URL, ExpiresAt: time.Now().Add(2 * time.Minute).UTC().Format("2006-01-02T15:04:05.000Z"),
		Nonce: base64.RawURLEncoding.EncodeToString(nonce)}, secrets.Sealed{Value: base64.RawURLEncoding.EncodeToString(secret)})
	if err != nil {
		t.Fatal(err)
	}
	start, _ := json.Marshal(map[string]any{"sealed": box})
	if err := c.Write(ctx, websocket.MessageText, start); err != nil {
		t.Fatal(err)
	}
	ch, _ := takeover.PageChannel(secret, tk.ID)
	return &page{t: t, c: c, ch: ch}
}

func (p *page) send(ctx context.Context, events ...map[string]any) []byte {
	p.t.Helper()
	b, _ := json.Marshal(map[string]any{"events": events})
	msg := p.ch.Seal(b)
	if err := p.c.Write(ctx, websocket.MessageBinary, msg); err != nil {
		p.t.Fatal(err)
	}
	return msg
}

type frame struct {
	T       string `json:"t"`
	Seq     int    `json:"seq"`
	Mode    string `json:"mode"`
	Reason  string `json:"reason"`
	Payload struct {
		Rows [][]struct {
			T string `json:"t"`
		} `json:"rows"`
	} `json:"payload"`
}

func (f frame) text() string {
	var b strings.Builder
	for _, r := range f.Payload.Rows {
		for _, run := range r {
			b.WriteString(run.T)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// until reads frames, saying each is drawn, until one's screen shows want.
func (p *page) until(ctx context.Context, want string) frame {
	p.t.Helper()
	for {
		typ, data, err := p.c.Read(ctx)
		if err != nil {
			p.t.Fatalf("waiting for %q: %v", want, err)
		}
		if typ != websocket.MessageBinary {
			p.t.Fatalf("a %v message from the runtime; all are binary", typ)
		}
		if len(want) > 4 && strings.Contains(string(data), want) {
			p.t.Fatalf("%q passed in the clear", want)
		}
		plain, err := p.ch.Open(data)
		if err != nil {
			p.t.Fatal(err)
		}
		var f frame
		json.Unmarshal(plain, &f)
		if f.T == "frame" {
			p.send(ctx, map[string]any{"t": "seen", "seq": f.Seq})
		}
		if strings.Contains(f.text(), want) || f.T == "end" && want == "end" {
			return f
		}
	}
}

func TestLiveTakeoverWebSocket(t *testing.T) {
	ls := newLiveServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := ls.Send(ctx, "echo hello-$((2*3)) s3cr3t-canary-value\n"); err != nil {
		t.Fatal(err)
	}
	tk := ls.open(t)
	p := ls.dial(t, ctx, tk)

	// The first frame shows the shell's screen, the kept secret hidden.
	f := p.until(ctx, "hello-6")
	if f.Mode != "watch" || strings.Contains(f.text(), "s3cr3t-canary-value") || !strings.Contains(f.text(), "[secret CANARY]") {
		t.Fatalf("frame %+v:\n%s", f, f.text())
	}

	// Watching, the owner types in the shell.
	p.send(ctx, map[string]any{"t": "tty", "text": "echo typed-$((6*7))"}, map[string]any{"t": "tty-key", "key": "Enter"})
	p.until(ctx, "typed-42")

	// In control, the node's terminal_send waits until the owner hands back.
	if code, out := ls.call(t, "POST", "/api/node/takeovers/"+tk.ID+"/control", `{"on":true}`); code != 200 {
		t.Fatalf("control: %d %v", code, out)
	}
	sent := make(chan node.TerminalAnswer, 1)
	go func() {
		a, err := ls.Send(ctx, "echo node-$((5+5))\n")
		if err != nil {
			t.Error(err)
		}
		sent <- a
	}()
	for ls.SendsWaiting() != 1 {
		select {
		case a := <-sent:
			t.Fatalf("terminal_send went on in the owner's control: %+v", a)
		case <-ctx.Done():
			t.Fatal("the node's send never waited")
		case <-time.After(5 * time.Millisecond):
		}
	}
	p.send(ctx, map[string]any{"t": "tty", "text": "echo mine\r"})
	p.until(ctx, "mine")
	if code, out := ls.call(t, "POST", "/api/node/takeovers/"+tk.ID+"/control", `{"on":false}`); code != 200 {
		t.Fatalf("hand back: %d %v", code, out)
	}
	select {
	case a := <-sent:
		if !strings.Contains(a.Screen, "node-10") {
			t.Fatalf("after hand back:\n%s", a.Screen)
		}
	case <-ctx.Done():
		t.Fatal("terminal_send did not go on after the hand back")
	}
	p.until(ctx, "node-10")

	// Stopping ends the view: the page hears why, encrypted.
	if code, out := ls.call(t, "DELETE", "/api/node/takeovers/"+tk.ID, ``); code != 200 {
		t.Fatalf("stop: %d %v", code, out)
	}
	if f := p.until(ctx, "end"); f.Reason != "stopped" {
		t.Fatalf("end = %+v", f)
	}
}

// A replayed message closes the view; a start sealed for another takeover is refused.
func TestLiveTakeoverRefusals(t *testing.T) {
	ls := newLiveServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tk := ls.open(t)
	p := ls.dial(t, ctx, tk)
	p.until(ctx, "scout") // the prompt shows the node's folder
	msg := p.send(ctx, map[string]any{"t": "ping"})
	if err := p.c.Write(ctx, websocket.MessageBinary, msg); err != nil {
		t.Fatal(err)
	}
	for {
		if _, _, err := p.c.Read(ctx); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
				t.Fatalf("after a replay: %v, want a policy violation", err)
			}
			break
		}
	}

	// A start sealed for another takeover does not open here, and a started one does not start twice.
	other := ls.open(t)
	for _, c := range []struct {
		name   string
		id     string
		sealed node.Takeover
	}{
		{"sealed for another takeover", other.ID, tk},
		{"started already", tk.ID, tk},
	} {
		bad := ls.dialSealed(t, ctx, c.id, c.sealed)
		if _, _, err := bad.c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Errorf("%s: %v, want a policy violation", c.name, err)
		}
	}
}
