//go:build linux

package app

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/ensemblework/ensemble/runtime/api"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

// sseHold is how long TestRelayUnderAttackE2E holds an event stream open through the relay:
// ENSEMBLE_RELAY_SSE_HOLD (a Go duration; the 10m for the long form), else long enough to
// cross every timeout and keepalive on the way: the relay's idle timeout and the phone server's idle
// timeout (2 min each), yamux's and the stream's keepalives (15 s), and the phone path's limits on
// strangers (5 to 10 s).
func sseHold(t *testing.T) time.Duration {
	v := os.Getenv("ENSEMBLE_RELAY_SSE_HOLD")
	if v == "" {
		return 2*time.Minute + 30*time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("ENSEMBLE_RELAY_SSE_HOLD=%q is not a duration such as 10m", v)
	}
	return d
}

// TestRelayUnderAttackE2E is issue 20's acceptance, through the real relay in the namespaces of
// TestRelayOfflineE2E, with an attacker's namespace joined to the relay's (and, for the proxy, to
// the runtime's own network):
//
//   - every kind of traffic: a terminal on the phone (Chromium) runs a command and shows its
//     output over a WebSocket; 100 HTTP/1.1 requests go on one kept-alive connection; an event
//     stream stays open for sseHold and still delivers;
//   - 100 wrong pairing codes from the attacker's address do not stop the owner's link from the
//     phone's, and 1,000 slow connections from it do not keep a paired phone out, nor are any of
//     them held for long;
//   - signing a phone out ends its open stream and socket before the answer comes back;
//   - a proxy on the runtime's network holding a certificate the runtime trusts for the relay's
//     name cannot log in as the runtime;
//   - a second runtime with a copy of the device key is noticed by the first at once (an event, a
//     notification, `ensemble status`), which keeps taking its name back; after `ensemble pair
//     rotate` the old cookie opens nothing and the copy has only the old name.
func TestRelayUnderAttackE2E(t *testing.T) {
	needUI(t)
	chromium := needBrowser(t)
	hold := sseHold(t)
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	// The phone's shell starts in a home of the test's own: a shell's start-up files on the machine
	// running the tests are not what this test is about (and may not let a prompt show).
	t.Setenv("HOME", t.TempDir())
	w := newRelayWorld(t, chromium)
	lab, step := w.lab, w.step
	lab.checkIsolated(t)

	notified := make(chan string, 16)
	owner := w.startRuntime(t, lab.runtime, relayForRuntime, "owner", func(c *runtimeConfig) {
		c.Notify = func(_ context.Context, title, body string) { notified <- title + ": " + body }
	})
	host := owner.phones.Host()
	origin := "https://" + host
	w.waitCert(t, host)
	local := w.local(t, owner)
	step("owner's runtime up at %s", host)

	newLink := func() string {
		t.Helper()
		var l api.PairLink
		if err := local.do(context.Background(), "POST", "/api/pair/links", nil, &l); err != nil {
			t.Fatal(err)
		}
		return l.URL[strings.Index(l.URL, "#s=")+3:]
	}
	pairWith := func(c *http.Client, h, secret string) (cookie string, code int) {
		t.Helper()
		req, _ := http.NewRequest("POST", "https://"+h+"/api/pair", strings.NewReader(`{"secret":"`+secret+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "https://"+h)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("pair: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		for _, ck := range resp.Cookies() {
			if ck.Name == "__Host-ensemble_device" {
				cookie = ck.Value
			}
		}
		return cookie, resp.StatusCode
	}
	get := func(c *http.Client, h, path, cookie string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", "https://"+h+path, nil)
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: "__Host-ensemble_device", Value: cookie})
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	newTask := func(title string) {
		t.Helper()
		if err := local.do(context.Background(), "POST", "/api/tasks", map[string]any{"title": title}, nil); err != nil {
			t.Fatal(err)
		}
	}

	// The long stream: a phone that speaks only HTTP/1.1 holds the event stream from now until the
	// end of the checks below, which all happen while it is open.
	streamPhone := w.phoneClient(lab.phone, relayForPhone, false)
	streamPhone.Timeout = 0
	streamCookie, code := pairWith(streamPhone, host, newLink())
	if code != http.StatusCreated {
		t.Fatalf("pairing the stream's phone: %d", code)
	}
	stream := openEventStream(t, streamPhone, host, streamCookie)
	heldFrom := time.Now()
	step("a phone holds the event stream over HTTP/1.1 (for %v)", hold)

	// A terminal on the phone: Chromium pairs, opens the terminal, runs a command and sees its output.
	bctx := w.chromium(t)
	ctx, cancel := context.WithTimeout(bctx, 5*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(origin+"/pair#s="+newLink())); err != nil {
		t.Fatal(err)
	}
	waitAcrossNavigation(t, ctx, "the board after pairing", `location.pathname === '/' && !!document.querySelector('#live[data-state="live"]')`)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#terminal-button`)),
		chromedp.WaitVisible(chromedp.CSS(`#terminal .xterm-rows`)),
	); err != nil {
		t.Fatalf("open the terminal on the phone: %v", err)
	}
	waitFor(t, ctx, "the shell's prompt", `document.querySelector('.term-panel')?.dataset.state === 'live' && document.querySelector('.xterm-rows').textContent.trim() !== ''`)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#terminal .xterm-screen`)),
		chromedp.Focus(chromedp.CSS(`#terminal textarea.xterm-helper-textarea`)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, input.InsertText, input.InsertTextParams{Text: "echo relay-$((6*7))"})
			return err
		}),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			for _, ev := range []input.DispatchKeyEventParams{
				{Type: input.DispatchKeyEventTypeKeyDown, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, Text: "\r"},
				{Type: input.DispatchKeyEventTypeKeyUp, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13},
			} {
				if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, ev); err != nil {
					return err
				}
			}
			return nil
		}),
	); err != nil {
		t.Fatalf("type on the phone: %v", err)
	}
	// "relay-42" alone on a row is the command's output, not the line that typed it.
	waitFor(t, ctx, "the command's output on the phone",
		`[...document.querySelectorAll('#terminal .xterm-rows > div')].some(r => r.textContent.trim() === 'relay-42')`)
	screenshot(t, ctx, "relay-phone-terminal-390.png", 390)
	step("a terminal on the phone ran a command and showed its output")

	// 100 HTTP/1.1 requests on one kept-alive connection.
	h1 := w.phoneClient(lab.phone, relayForPhone, false)
	var first string
	for i := range 100 {
		var local string
		var reused bool
		req, _ := http.NewRequest("GET", origin+"/api/tasks", nil)
		req.AddCookie(&http.Cookie{Name: "__Host-ensemble_device", Value: streamCookie})
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(c httptrace.GotConnInfo) { local, reused = c.Conn.LocalAddr().String(), c.Reused }}))
		resp, err := h1.Do(req)
		if err != nil {
			t.Fatalf("kept-alive request %d: %v", i+1, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ProtoMajor != 1 {
			t.Fatalf("kept-alive request %d: %s %s", i+1, resp.Proto, resp.Status)
		}
		if i == 0 {
			first = local
		} else if !reused || local != first {
			t.Fatalf("request %d went on %s (reused %v), not the first one's connection %s", i+1, local, reused, first)
		}
	}
	step("100 HTTP/1.1 requests on one connection (%s)", first)

	// 100 wrong pairing codes from the attacker's address, then the owner's link from the phone's.
	guesser := w.phoneClient(lab.attacker, relayForAttacker, true)
	answers := map[int]int{}
	for i := range 100 {
		_, code := pairWith(guesser, host, fmt.Sprintf("wrong%03dAAAAAAAAAAAAAAAA", i))
		answers[code]++
	}
	if answers[http.StatusUnauthorized]+answers[http.StatusTooManyRequests] != 100 || answers[http.StatusTooManyRequests] < 80 {
		t.Fatalf("100 wrong codes from one address: %v, want a few refused as wrong and the rest as too many", answers)
	}
	ownerPhone := w.phoneClient(lab.phone, relayForPhone, true)
	revokable, code := pairWith(ownerPhone, host, newLink())
	if code != http.StatusCreated {
		t.Fatalf("the owner's link while someone guesses from elsewhere: %d", code)
	}
	step("100 wrong codes from %s (%v); the owner's link from %s paired", attackerAddr, answers, phoneAddr)

	// 1,000 slow connections from the attacker's address.
	slow := startSlowConnections(t, lab, host, 1000)
	held := slow.open()
	if held == 0 {
		t.Fatal("none of the slow connections is open: the attack did not happen")
	}
	for i := range 20 {
		if code, _ := get(ownerPhone, host, "/api/tasks", revokable); code != 200 {
			t.Fatalf("a paired phone's request %d while 1,000 slow connections come from elsewhere: %d", i+1, code)
		}
	}
	step("%d of 1,000 slow connections open; a paired phone is served meanwhile", held)
	if left := slow.waitClosed(90 * time.Second); left > 0 {
		t.Fatalf("%d slow connections still held open by the relay or the runtime", left)
	}
	step("every slow connection was closed by the relay or the runtime")

	// Signing a phone out ends its open stream and its terminal before the answer comes back.
	revStream := openEventStream(t, ownerPhone, host, revokable)
	revokeID := deviceID(t, owner, revokable)
	if err := local.do(context.Background(), "DELETE", "/api/pair/devices/"+revokeID, nil, nil); err != nil {
		t.Fatal(err)
	}
	afterRevoke := "after-revoke-" + randomHex(4)
	newTask(afterRevoke)
	if rest, ended := revStream.rest(15 * time.Second); !ended || strings.Contains(rest, afterRevoke) {
		t.Fatalf("the signed-out phone's stream: ended %v, carried an event from after the sign-out %v", ended, strings.Contains(rest, afterRevoke))
	}
	if code, _ := get(ownerPhone, host, "/api/tasks", revokable); code != http.StatusUnauthorized {
		t.Fatalf("the signed-out phone's next request: %d", code)
	}
	// Chromium's phone too: its terminal's socket is closed saying why, and the page says to scan a code.
	chromeID := newestOtherDevice(t, owner, streamCookie)
	if err := local.do(context.Background(), "DELETE", "/api/pair/devices/"+chromeID, nil, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the phone's terminal ended", `document.querySelector('.term-panel')?.dataset.state !== 'live'`)
	newTask("after-chrome-revoke-" + randomHex(4))
	waitFor(t, ctx, "the phone told to scan a pairing code", `document.getElementById('signed-out-sentence')?.textContent.includes('scan the code')`)
	screenshot(t, ctx, "relay-phone-signed-out-390.png", 390)
	step("signing phones out ended their stream and terminal first; the page says to scan a code")

	// A proxy on the runtime's own network, with a certificate the runtime trusts for the relay's
	// name, passes a second runtime's login through to the relay: refused.
	const proxyAddr, proxyPeer = "10.201.4.2", "10.201.4.1"
	lab.linkDirect(lab.attacker, lab.runtime, proxyAddr, proxyPeer)
	passed := startTLSProxy(t, w, proxyAddr)
	refusedBefore := w.relay.Status().LoginsRefused
	proxied := w.startRuntime(t, lab.runtime, proxyAddr, "proxied", func(c *runtimeConfig) {
		c.Relay.ACMEDirectory = w.acme
	})
	for deadline := time.Now().Add(60 * time.Second); w.relay.Status().LoginsRefused == refusedBefore || passed.Load() < 100; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no login came through the proxy (%d bytes carried)", passed.Load())
		}
	}
	if st := proxied.phones.client.Status(); st.Up || !strings.Contains(st.Err, "refused") {
		t.Fatalf("the proxied runtime's tunnel: %+v, want refused", st)
	}
	if c, err := lab.dialer(lab.phone)(context.Background(), "tcp", relayForPhone+":443"); err == nil {
		tc := tls.Client(c, &tls.Config{ServerName: proxied.phones.Host(), InsecureSkipVerify: true})
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		if tc.Handshake() == nil {
			t.Fatal("the proxied runtime's name answers through the relay")
		}
		c.Close()
	}
	step("a login through a TLS-ending proxy was refused (%d bytes passed through it)", passed.Load())

	// The stream held all along still delivers.
	if d := hold - time.Since(heldFrom); d > 0 {
		step("waiting %v more for the stream's hold", d.Round(time.Second))
		time.Sleep(d)
	}
	lastWord := "after-the-hold-" + randomHex(4)
	newTask(lastWord)
	if err := stream.waitFor(lastWord, 30*time.Second); err != nil {
		t.Fatalf("the stream held for %v: %v", time.Since(heldFrom).Round(time.Second), err)
	}
	step("the event stream, open for %v over HTTP/1.1 (%d keepalives), still delivers",
		time.Since(heldFrom).Round(time.Second), stream.keepalives.Load())

	// A second runtime with a copy of the device key (and the local key that opens it).
	thiefDir := filepath.Join(w.dir, "thief")
	os.MkdirAll(filepath.Join(thiefDir, "relay"), 0o700)
	for _, f := range []string{secrets.KeyFile, filepath.Join("relay", "device.key")} {
		b, err := os.ReadFile(filepath.Join(w.dir, "owner", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(thiefDir, f), b, 0o600)
	}
	sub := owner.bus.Subscribe(1024)
	defer sub.Close()
	thief := w.startRuntime(t, lab.attacker, relayForAttacker, "thief", nil)
	if thief.phones.Host() != host {
		t.Fatalf("the copy has the name %s, not %s", thief.phones.Host(), host)
	}
	var taken events.Event
	for taken.Kind != phoneTakenEvent {
		select {
		case taken = <-sub.C:
		case <-time.After(60 * time.Second):
			t.Fatal("the owner's runtime never said its name was taken")
		}
	}
	var data phoneTaken
	json.Unmarshal(taken.Data, &data)
	if !strings.Contains(data.Sentence, "rotate") || data.Status.TakenFrom != attackerAddr {
		t.Fatalf("phone.taken: %s", taken.Data)
	}
	select {
	case n := <-notified:
		if !strings.Contains(n, "phone address") {
			t.Fatalf("notification: %q", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}
	out := runIn(t, lab.runtime, bin, "status", "--data", filepath.Join(w.dir, "owner"))
	if !strings.Contains(out, "WARNING: Another copy of Ensemble") || !strings.Contains(out, attackerAddr) {
		t.Fatalf("ensemble status does not say the name was taken:\n%s", out)
	}
	step("the copy took the name from %s; the owner said so: event, notification, ensemble status:\n%s", attackerAddr, out)
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if st := owner.phones.client.Status(); st.Up && st.Taken >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the owner never took its name back: %+v", owner.phones.client.Status())
		}
	}
	step("the owner took its name back (taken %d times so far)", owner.phones.client.Status().Taken)

	// One step: a new key and name, every phone signed out.
	out = runIn(t, lab.runtime, bin, "pair", "rotate", "--data", filepath.Join(w.dir, "owner"))
	m := regexp.MustCompile(`Phones now open https://(\S+)/`).FindStringSubmatch(out)
	if m == nil || m[1] == host {
		t.Fatalf("ensemble pair rotate:\n%s", out)
	}
	newHost := m[1]
	step("ensemble pair rotate: %s", strings.TrimSpace(out))
	if rest, ended := stream.rest(15 * time.Second); !ended {
		t.Fatalf("the held stream is still open after rotation signed its phone out (%d bytes)", len(rest))
	}
	w.waitCert(t, newHost)
	if code, _ := get(w.phoneClient(lab.attacker, relayForAttacker, true), newHost, "/api/tasks", streamCookie); code != http.StatusUnauthorized {
		t.Fatalf("an old cookie at the new name: %d, want 401", code)
	}
	if n := owner.count(t, "paired_devices"); n != 0 {
		t.Fatalf("%d phones still paired after rotation", n)
	}
	// The copy settles on the old name, which is all it has; the new one stays the owner's.
	for deadline := time.Now().Add(90 * time.Second); !thief.phones.client.Status().Up; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the copy never took the old name back")
		}
	}
	replaced := w.relay.Status().TunnelsReplaced
	for range 20 {
		if code, _ := get(ownerPhone, newHost, "/api/health", ""); code != 200 {
			t.Fatalf("the new name: %d", code)
		}
	}
	if st := owner.phones.client.Status(); !st.Up || st.Taken != 0 || st.Host != newHost {
		t.Fatalf("the owner after rotation, with the copy up on the old name: %+v", st)
	}
	if n := w.relay.Status().TunnelsReplaced; n != replaced {
		t.Fatalf("tunnels still replaced after rotation (%d, then %d)", replaced, n)
	}
	step("after rotation the old cookie is refused at %s, and the copy has only the old name", newHost)
}

// runIn runs the ensemble binary inside ns, as a person on that computer would, and returns its
// output.
func runIn(t *testing.T, ns, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns, bin}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ensemble %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// count counts a table's rows in the runtime's database.
func (r *Runtime) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := r.store.Reader().QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// deviceID is the id of the paired device whose cookie is token.
func deviceID(t *testing.T, r *Runtime, token string) string {
	t.Helper()
	var id string
	if err := r.store.Reader().QueryRow("SELECT id FROM paired_devices WHERE hash = ?", sha256Hex(token)).Scan(&id); err != nil {
		t.Fatalf("no paired device for the cookie: %v", err)
	}
	return id
}

// newestOtherDevice is the newest paired device that is not the one whose cookie is token.
func newestOtherDevice(t *testing.T, r *Runtime, token string) string {
	t.Helper()
	var id string
	if err := r.store.Reader().QueryRow("SELECT id FROM paired_devices WHERE hash != ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
		sha256Hex(token)).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// sha256Hex is what the runtime keeps of a token.
func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// eventStream is an open event stream: its lines as they come, and its keepalives counted.
type eventStream struct {
	lines      chan string
	ended      chan struct{}
	keepalives atomic.Int64
}

// openEventStream opens /api/events as the phone's EventSource does.
func openEventStream(t *testing.T, c *http.Client, host, cookie string) *eventStream {
	t.Helper()
	req, _ := http.NewRequest("GET", "https://"+host+"/api/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(&http.Cookie{Name: "__Host-ensemble_device", Value: cookie})
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("event stream: %v %v", err, resp)
	}
	t.Cleanup(func() { resp.Body.Close() })
	s := &eventStream{lines: make(chan string, 4096), ended: make(chan struct{})}
	go func() {
		defer close(s.ended)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if sc.Text() == ": keepalive" {
				s.keepalives.Add(1)
			}
			select {
			case s.lines <- sc.Text():
			default: // a reader that does not look keeps only what fits
			}
		}
	}()
	return s
}

// waitFor reads until a line holds want.
func (s *eventStream) waitFor(want string, limit time.Duration) error {
	timeout := time.After(limit)
	for {
		select {
		case l := <-s.lines:
			if strings.Contains(l, want) {
				return nil
			}
		case <-s.ended:
			return fmt.Errorf("the stream ended before %q", want)
		case <-timeout:
			return fmt.Errorf("no line with %q", want)
		}
	}
}

// rest is what the stream carries until it ends, and whether it ended within limit.
func (s *eventStream) rest(limit time.Duration) (string, bool) {
	var b strings.Builder
	timeout := time.After(limit)
	for {
		select {
		case l := <-s.lines:
			b.WriteString(l + "\n")
		case <-s.ended:
			for {
				select {
				case l := <-s.lines:
					b.WriteString(l + "\n")
				default:
					return b.String(), true
				}
			}
		case <-timeout:
			return b.String(), false
		}
	}
}

// slowConnections are a stranger's connections that each try to hold the phone path open.
type slowConnections struct {
	wg     sync.WaitGroup
	closed atomic.Int64
	n      int
}

// startSlowConnections opens n connections from the attacker's namespace to host through the
// relay, a quarter of each kind: silent; a ClientHello and then nothing; TLS and then headers a
// byte at a time; TLS, a POST's headers and then its body a byte at a time. Each is read until the
// far end closes it.
func startSlowConnections(t *testing.T, lab *netLab, host string, n int) *slowConnections {
	t.Helper()
	hello := recordClientHello(t, host)
	var conns []net.Conn
	// One thread in the attacker's namespace dials them all: the sockets stay there.
	if err := lab.do(lab.attacker, func() error {
		for range n {
			c, err := net.DialTimeout("tcp", relayForAttacker+":443", 5*time.Second)
			if err != nil {
				return err
			}
			conns = append(conns, c)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s := &slowConnections{n: n}
	trickle := func(c net.Conn, b []byte) {
		for _, x := range b {
			if _, err := c.Write([]byte{x}); err != nil {
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	for i, c := range conns {
		t.Cleanup(func() { c.Close() })
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.closed.Add(1)
			var r io.Reader = c
			switch i % 4 {
			case 1:
				c.Write(hello)
			case 2, 3:
				tc := tls.Client(c, &tls.Config{ServerName: host, InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
				tc.SetDeadline(time.Now().Add(30 * time.Second))
				if tc.Handshake() != nil {
					return
				}
				tc.SetDeadline(time.Time{})
				r = tc
				req := "GET /pair.js HTTP/1.1\r\nHost: " + host + "\r\nX-Slow: " + strings.Repeat("a", 200)
				if i%4 == 3 {
					io.WriteString(tc, "POST /api/pair HTTP/1.1\r\nHost: "+host+"\r\nOrigin: https://"+host+
						"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
					req = `{"secret":"` + strings.Repeat("A", 1000)
				}
				go trickle(tc, []byte(req))
			}
			io.Copy(io.Discard, r)
		}()
	}
	return s
}

// open is how many are still open, a moment after they were all started.
func (s *slowConnections) open() int {
	time.Sleep(time.Second) // let refusals land; what is open after it is held
	return s.n - int(s.closed.Load())
}

// waitClosed waits until every one was closed by the far end, or limit passes; it returns how many
// are still open.
func (s *slowConnections) waitClosed(limit time.Duration) int {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
	}
	return s.n - int(s.closed.Load())
}

// recordClientHello is the first flight of a TLS client for host.
func recordClientHello(t *testing.T, host string) []byte {
	t.Helper()
	a, b := net.Pipe()
	go tls.Client(a, &tls.Config{ServerName: host}).Handshake()
	var out bytes.Buffer
	buf := make([]byte, 64<<10)
	for {
		b.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := b.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
	}
	a.Close()
	b.Close()
	return out.Bytes()
}

// startTLSProxy listens on addr:443 in the attacker's namespace with a certificate for the relay's
// name from the CA runtimes trust, and passes what it decrypts to the real relay over TLS of its
// own: the strongest thing a proxy holding such a certificate can do with a runtime's login. It
// returns a count of the bytes it carried from runtimes to the relay.
func startTLSProxy(t *testing.T, w *relayWorld, addr string) *atomic.Int64 {
	t.Helper()
	var passed atomic.Int64
	var ln net.Listener
	if err := w.lab.do(w.lab.attacker, func() (err error) { ln, err = net.Listen("tcp", addr+":443"); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	cert := testCert(t, w.ca, w.caKey, "relay.test")
	cert.NextProtos = []string{"http/1.1"}
	toRelay := w.lab.dialer(w.lab.attacker)
	go func() {
		for {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				c := tls.Server(raw, cert)
				defer c.Close()
				uc, err := toRelay(context.Background(), "tcp", relayForAttacker+":443")
				if err != nil {
					return
				}
				u := tls.Client(uc, &tls.Config{ServerName: "relay.test", RootCAs: w.pool, NextProtos: []string{"http/1.1"}})
				defer u.Close()
				go func() { io.Copy(counting{u, &passed}, c); u.Close() }()
				io.Copy(c, u)
			}()
		}
	}()
	return &passed
}

type counting struct {
	w io.Writer
	n *atomic.Int64
}

func (c counting) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return c.w.Write(p)
}
