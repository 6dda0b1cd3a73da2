package api

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// phoneClient is a phone on the phone path, dialing from local (each loopback address is a source
// of its own), speaking HTTP/2 or only HTTP/1.1.
func phoneClient(ts *httptest.Server, local string, h2 bool) *http.Client {
	base := ts.Client().Transport.(*http.Transport)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	tr := &http.Transport{TLSClientConfig: base.TLSClientConfig.Clone(), DialContext: d.DialContext, Protocols: new(http.Protocols)}
	tr.Protocols.SetHTTP1(true)
	tr.Protocols.SetHTTP2(h2)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// phoneRequest is a request addressed to the relay name, as it arrives through the tunnel.
func phoneRequest(ctx context.Context, ts *httptest.Server, method, path, body, cookie string, headers ...string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, method, ts.URL+path, strings.NewReader(body))
	req.Host = testRelayHost
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: deviceCookie, Value: cookie})
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	return req
}

func send(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestEveryRouteThroughTheRelay walks every route on the phone path: the launch token opens none
// of them, the routes of programs on the computer (the bridge, runs' and turns' MCP, browser
// sign-in) do not answer at all, a Host other than the relay name is misdirected, and a paired
// phone's cookie opens what the launch token opens on the computer.
func TestEveryRouteThroughTheRelay(t *testing.T) {
	f := fullFixture(t)
	host := testRelayHost
	f.api.relay.Store(&host)
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = f.api.PhoneServer(f.api.Handler(), nil)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	phone := phoneClient(ts, "127.0.0.1", true)
	ctx := context.Background()

	code, out := f.call(t, "POST", "/api/pair/links", "")
	secret, _ := strings.CutPrefix(fmt.Sprint(out["url"]), origin+"/pair#s=")
	if code != http.StatusCreated || secret == "" {
		t.Fatalf("pair link: %d %v", code, out)
	}
	resp, err := phone.Do(phoneRequest(ctx, ts, "POST", "/api/pair", `{"secret":"`+secret+`"}`, "", "Origin", origin))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("pair: %v %v", err, resp)
	}
	var device string
	for _, c := range resp.Cookies() {
		if c.Name == deviceCookie {
			device = c.Value
		}
	}
	resp.Body.Close()
	bearer := "Bearer " + f.token.Reveal()

	patterns := mountedPatterns(t)
	for _, p := range patterns {
		access := routeAccess[routeOf(p)]
		if access == "" {
			access = byToken
		}
		method, path := requestFor(p)
		if !strings.Contains(p, " ") {
			method = http.MethodGet // the UI's files, the /api/ fallback
		}
		t.Run(p, func(t *testing.T) {
			// Another Host on the tunnel's connection is not this runtime, launch token or not.
			if got, _ := send(t, phone, phoneRequest(ctx, ts, method, path, `{}`, device, "Host", "127.0.0.1", "Authorization", bearer,
				"Origin", "http://127.0.0.1")); got != http.StatusMisdirectedRequest {
				t.Errorf("Host 127.0.0.1 through the relay: %d, want 421", got)
			}
			hdr := []string{"Authorization", bearer, "Origin", origin}
			switch {
			case strings.HasPrefix(path, "/mcp/") || strings.HasPrefix(path, "/api/bridge/") || strings.HasPrefix(path, "/auth/") ||
				strings.HasPrefix(path, "/api/engine/"):
				for _, cookie := range []string{"", device} {
					if got, _ := send(t, phone, phoneRequest(ctx, ts, method, path, `{}`, cookie, hdr...)); got != http.StatusForbidden {
						t.Errorf("a route for programs on the computer (%s), cookie %v: %d, want 403", access, cookie != "", got)
					}
				}
			case access == byToken:
				got, body := send(t, phone, phoneRequest(ctx, ts, method, path, `{}`, "", hdr...))
				if got != http.StatusUnauthorized || !strings.Contains(body, "scan the code") {
					t.Errorf("the launch token through the relay: %d %s, want 401 and the pairing sentence", got, body)
				}
				if method == http.MethodGet { // reads only: a write would act
					if got, body := send(t, phone, phoneRequest(ctx, ts, method, path, "", device, "Sec-Fetch-Site", "same-origin")); got == 401 || got == 403 || got == 421 {
						t.Errorf("a paired phone: %d %s", got, body)
					}
				}
			case access == public:
				if got, _ := send(t, phone, phoneRequest(ctx, ts, method, path, "", "")); got == 401 || got == 403 || got == 421 {
					t.Errorf("public route through the relay: %d", got)
				}
			case access == noSuchPath:
				if got, _ := send(t, phone, phoneRequest(ctx, ts, method, path, "", device)); got != http.StatusNotFound {
					t.Errorf("no such path: %d, want 404", got)
				}
			}
		})
	}
}

// On the computer's own listener, the phone's ways in are not: its relay name is not a Host the
// runtime answers, and its device cookie signs nothing in.
func TestLoopbackRefusesThePhonesWays(t *testing.T) {
	f := newRelayFixture(t, testRelayHost)
	tok := f.pair(t)
	for _, tc := range []struct {
		name string
		host string
		want int
	}{{"the relay name as Host", testRelayHost, http.StatusForbidden}, {"a device cookie", "", http.StatusUnauthorized}} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", f.plain.URL+"/api/tasks", nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			req.AddCookie(&http.Cookie{Name: deviceCookie, Value: tok})
			if got, body := send(t, http.DefaultClient, req); got != tc.want {
				t.Fatalf("%d %s, want %d", got, body, tc.want)
			}
		})
	}
}

// openStream opens the event stream as the phone's EventSource does and reads until it is live.
func openStream(t *testing.T, c *http.Client, ts *httptest.Server, cookie string) (*bufio.Reader, io.Closer) {
	t.Helper()
	req := phoneRequest(context.Background(), ts, "GET", "/api/events", "", cookie, "Accept", "text/event-stream", "Sec-Fetch-Site", "same-origin")
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream: %v %v", err, resp)
	}
	br := bufio.NewReader(resp.Body)
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if strings.HasPrefix(l, ": live") {
			return br, resp.Body
		}
	}
}

// readAll reads what is left of a stream, and whether it ended (rather than the test's long wait
// running out).
func readRest(br *bufio.Reader) (string, bool) {
	var b strings.Builder
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&b, br)
		done <- err
	}()
	select {
	case <-done:
		return b.String(), true
	case <-time.After(15 * time.Second):
		return "", false
	}
}

// Signing a phone out ends its open event stream before the answer comes back: what happens after
// never reaches it. Another phone's stream goes on.
func TestSigningOutEndsOpenStreams(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2], func(t *testing.T) {
			f := newRelayFixture(t, testRelayHost)
			gone, stays := f.pair(t), f.pair(t)
			phone := phoneClient(f.tls, "127.0.0.2", h2)
			other := phoneClient(f.tls, "127.0.0.3", h2)
			br, body := openStream(t, phone, f.tls, gone)
			defer body.Close()
			obr, obody := openStream(t, other, f.tls, stays)
			defer obody.Close()

			var id string
			f.store.Reader().QueryRow("SELECT id FROM paired_devices WHERE hash = ?", hashText(gone)).Scan(&id)
			if code, _ := f.call(t, "DELETE", "/api/pair/devices/"+id, ""); code != http.StatusNoContent {
				t.Fatalf("revoke: %d", code)
			}
			// After the answer: a task, whose event the signed-out stream must not carry.
			marker := "after-sign-out-" + randomText(4)
			if code, _ := f.call(t, "POST", "/api/tasks", `{"title":"`+marker+`"}`); code != http.StatusCreated {
				t.Fatal("task")
			}
			rest, ended := readRest(br)
			if !ended {
				t.Fatal("the signed-out phone's stream is still open")
			}
			if strings.Contains(rest, marker) {
				t.Fatal("the signed-out phone's stream carried an event from after its sign-out")
			}
			for {
				l, err := obr.ReadString('\n')
				if err != nil {
					t.Fatalf("the other phone's stream ended: %v", err)
				}
				if strings.Contains(l, marker) {
					break
				}
			}
			if code, _ := send(t, phone, phoneRequest(context.Background(), f.tls, "GET", "/api/tasks", "", gone)); code != http.StatusUnauthorized {
				t.Fatalf("the signed-out phone's next request: %d", code)
			}
		})
	}
}

// 100 wrong pairing codes from one source limit that source only: the owner's valid link works
// from another, and the guesser's own next attempts are refused unread.
func TestPairingFailuresCountPerSource(t *testing.T) {
	f := newRelayFixture(t, testRelayHost)
	guesser := phoneClient(f.tls, "127.0.0.2", true)
	owner := phoneClient(f.tls, "127.0.0.3", true)
	post := func(c *http.Client, secret string) int {
		code, _ := send(t, c, phoneRequest(context.Background(), f.tls, "POST", "/api/pair", `{"secret":"`+secret+`"}`, "", "Origin", origin))
		return code
	}
	got := map[int]int{}
	for i := range 100 {
		got[post(guesser, fmt.Sprintf("guess%02dAAAAAAAAAAAAAAAAA", i))]++
	}
	if got[http.StatusUnauthorized] != pairFailLimit || got[http.StatusTooManyRequests] != 100-pairFailLimit {
		t.Fatalf("100 guesses from one source: %v, want %d refused as wrong and the rest as too many", got, pairFailLimit)
	}
	if code := post(owner, f.link(t)); code != http.StatusCreated {
		t.Fatalf("the owner's link from another source: %d, want 201", code)
	}
	if code := post(guesser, f.link(t)); code != http.StatusTooManyRequests {
		t.Fatalf("the guesser with a good link while limited: %d, want 429", code)
	}
	// A minute later the guesser's failures have aged.
	f.now = f.now.Add(time.Minute)
	if code := post(guesser, f.link(t)); code != http.StatusCreated {
		t.Fatalf("a minute later: %d", code)
	}
}

// The table of sources with failures has a bound: a crowd of sources cannot grow it without end.
func TestPairingFailureSourcesBounded(t *testing.T) {
	f := newRelayFixture(t, testRelayHost)
	for i := range pairFailSources + 50 {
		f.api.takePairSecret(fmt.Sprintf("198.51.%d.%d", i/256, i%256), "guess")
	}
	if n := len(f.api.pairs.failures); n > pairFailSources {
		t.Fatalf("%d sources remembered, bound %d", n, pairFailSources)
	}
	if ok, limited := f.api.takePairSecret("203.0.113.1", f.link(t)); !ok || limited {
		t.Fatalf("a new source's good secret with the table full: ok %v, limited %v", ok, limited)
	}
}

// rawTLS is a connection to the phone path that speaks HTTP/1.1 by hand.
func rawTLS(t *testing.T, ts *httptest.Server) *tls.Conn {
	t.Helper()
	c, err := tls.Dial("tcp", ts.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer reads c until the server closes it (true), or a long wait runs out (false).
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	_, err := io.Copy(io.Discard, c)
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

// A connection no paired phone has used holds nothing for long: slow headers, a slow body and an
// idle kept-alive connection are each closed by the runtime; a paired phone's idle connection
// outlives the last of them.
func TestUnpairedConnectionsHaveLittleTime(t *testing.T) {
	f := newRelayFixtureWith(t, testRelayHost, func(s *Server) {
		s.phoneLimits.header = 300 * time.Millisecond
		s.phoneLimits.unpairedRead = 300 * time.Millisecond
		s.phoneLimits.unpairedIdle = 300 * time.Millisecond
	})
	tok := f.pair(t)
	req := func(path, cookie string) string {
		s := "GET " + path + " HTTP/1.1\r\nHost: " + testRelayHost + "\r\n"
		if cookie != "" {
			s += "Cookie: " + deviceCookie + "=" + cookie + "\r\n"
		}
		return s + "\r\n"
	}
	readAnswer := func(c *tls.Conn) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c.SetReadDeadline(time.Time{})
	}

	// The paired phone's connection: one request, then quiet.
	paired := rawTLS(t, f.tls)
	io.WriteString(paired, req("/api/tasks", tok))
	readAnswer(paired)

	var wg sync.WaitGroup
	for name, start := range map[string]func(c *tls.Conn){
		"slow headers": func(c *tls.Conn) { io.WriteString(c, "GET /pair.js HTTP/1.1\r\nHost: "+testRelayHost+"\r\nX-Slow: ") },
		"slow body": func(c *tls.Conn) {
			io.WriteString(c, "POST /api/pair HTTP/1.1\r\nHost: "+testRelayHost+"\r\nOrigin: "+origin+
				"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"secret\":")
		},
		"idle after a request": func(c *tls.Conn) { io.WriteString(c, req("/pair.js", "")); readAnswer(c) },
	} {
		c := rawTLS(t, f.tls)
		start(c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !closedByServer(c) {
				t.Errorf("%s: the runtime kept the connection open", name)
			}
		}()
	}
	wg.Wait()
	// Every stranger's connection is closed by now; the paired one is still open and still works.
	paired.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := paired.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the paired phone's idle connection: %v, want still open", err)
	}
	paired.SetReadDeadline(time.Time{})
	io.WriteString(paired, req("/api/tasks", tok))
	readAnswer(paired)
}

// Only those signed in learn the runtime's version.
func TestHealthVersionOnlyToTheSignedIn(t *testing.T) {
	f := newRelayFixture(t, testRelayHost)
	tok := f.pair(t)
	phone := phoneClient(f.tls, "127.0.0.1", true)
	version := func(req *http.Request) any {
		t.Helper()
		c := http.DefaultClient
		if req.URL.Scheme == "https" {
			c = phone
		}
		code, body := send(t, c, req)
		var out map[string]any
		if code != 200 || json.Unmarshal([]byte(body), &out) != nil || out["ok"] != true {
			t.Fatalf("health: %d %s", code, body)
		}
		return out["version"]
	}
	plain := func(auth string) *http.Request {
		req, _ := http.NewRequest("GET", f.plain.URL+"/api/health", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		return req
	}
	if v := version(plain("")); v != nil {
		t.Errorf("the computer, no token: version %v", v)
	}
	if v := version(plain("Bearer " + f.token.Reveal())); v != "test" {
		t.Errorf("the computer, launch token: version %v", v)
	}
	if v := version(phoneRequest(context.Background(), f.tls, "GET", "/api/health", "", "")); v != nil {
		t.Errorf("a stranger through the relay: version %v", v)
	}
	if v := version(phoneRequest(context.Background(), f.tls, "GET", "/api/health", "", tok)); v != "test" {
		t.Errorf("a paired phone: version %v", v)
	}
}

// phoneKey is a PhoneAccess whose Rotate hands out the names it is given.
type phoneKey struct {
	mu    sync.Mutex
	host  string
	names []string
}

func (p *phoneKey) Status() PhoneStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PhoneStatus{Host: p.host, Up: true}
}

func (p *phoneKey) Rotate(context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host, p.names = p.names[0], p.names[1:]
	return p.host, nil
}

// A new phone address signs every phone out (their open streams end) and moves the relay name:
// the old cookie opens nothing at the new name, and new links are for it. Only from the computer.
func TestRotateSignsEveryPhoneOut(t *testing.T) {
	const newHost = "zyxwvutsrqponmlkjihgfedcba.relay.test"
	pk := &phoneKey{host: testRelayHost, names: []string{newHost}}
	f := newRelayFixtureWith(t, testRelayHost, func(s *Server) { s.opts.Phones = pk })
	tok := f.pair(t)
	phone := phoneClient(f.tls, "127.0.0.2", true)
	br, body := openStream(t, phone, f.tls, tok)
	defer body.Close()
	if code, _ := send(t, phone, phoneRequest(context.Background(), f.tls, "POST", "/api/pair/rotate", "", tok, "Origin", origin)); code != http.StatusForbidden {
		t.Fatalf("rotation from a phone: %d, want 403", code)
	}
	code, out := f.call(t, "POST", "/api/pair/rotate", "")
	if code != http.StatusOK || out["host"] != newHost || out["signedOut"] != float64(1) {
		t.Fatalf("rotate: %d %v", code, out)
	}
	if _, ended := readRest(br); !ended {
		t.Fatal("the phone's stream is still open after rotation")
	}
	if f.count(t, "paired_devices") != 0 {
		t.Fatal("phones still paired")
	}
	for _, h := range []string{testRelayHost, newHost} {
		if code, _ := send(t, phone, phoneRequest(context.Background(), f.tls, "GET", "/api/tasks", "", tok, "Host", h)); code != http.StatusUnauthorized && code != http.StatusMisdirectedRequest {
			t.Errorf("the old cookie at %s: %d", h, code)
		}
	}
	if code, _ := send(t, phone, phoneRequest(context.Background(), f.tls, "GET", "/pair.js", "", "", "Host", testRelayHost)); code != http.StatusMisdirectedRequest {
		t.Errorf("the old name: %d, want 421", code)
	}
	_, out = f.call(t, "POST", "/api/pair/links", "")
	if u := fmt.Sprint(out["url"]); !strings.HasPrefix(u, "https://"+newHost+"/pair#s=") {
		t.Fatalf("link after rotation: %s", u)
	}
	_, out = f.call(t, "GET", "/api/pair/devices", "")
	if out["relay"] != newHost {
		t.Fatalf("devices: %v", out)
	}
}

// A request that does not stop when its phone is signed out has its connection cut; end returns
// either way.
func TestSignOutCutsWhatDoesNotStop(t *testing.T) {
	p := phoneSessions{wait: 50 * time.Millisecond}
	a, b := net.Pipe()
	defer b.Close()
	stuck := &phoneConn{conn: a}
	ctx, _ := p.track(context.Background(), "phone_1", stuck) // never done: it ignores ctx
	ended := make(chan struct{})
	go func() { p.end("phone_1"); close(ended) }()
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), ErrSignedOut) {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
	<-ended
	if _, err := b.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the stuck request's connection: %v, want closed", err)
	}
}
