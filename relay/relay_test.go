package relay

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func hello(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s over %s", name, r.Proto)
	})
}

func get(t testing.TB, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestThroughRelay(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil)
	rt := startRuntime(t, ca, func() string { return r.addr }, NewDeviceKey(), hello("runtime"))
	phone := dialTo(ca, func() string { return r.addr })
	if got := get(t, phone, "https://"+rt.host+"/"); got != "hello from runtime over HTTP/2.0" {
		t.Fatalf("got %q", got)
	}
	// The relay's own name is served by the relay.
	if got := get(t, phone, "https://"+testDomain+"/"); !strings.Contains(got, "Ensemble relay") {
		t.Fatalf("landing page: %q", got)
	}
	var st Status
	resp, err := phone.Get("https://" + testDomain + "/status")
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonDecode(resp.Body, &st); err != nil || st.Tunnels != 1 || st.ConnsTotal < 2 {
		t.Fatalf("status %+v, %v", st, err)
	}
}

func TestRefusedNames(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil)
	phone := dialTo(ca, func() string { return r.addr })
	phone.Timeout = 3 * time.Second
	for _, host := range []string{
		NewDeviceKey().ID() + "." + testDomain, // no tunnel
		"not-an-id." + testDomain,
		"elsewhere.example",
	} {
		if _, err := phone.Get("https://" + host + "/"); err == nil {
			t.Errorf("%s: answered", host)
		}
	}
	// A connection that sends nothing is closed at the hello deadline.
	r2 := startRelay(t, ca, "", func(c *ServerConfig) { c.HelloTimeout = 100 * time.Millisecond })
	c, err := net.Dial("tcp", r2.addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		t.Fatalf("silent connection: %v, want closed by the relay", err)
	}
	st := r.srv.Status()
	if st.ConnsNoTunnel != 1 || st.ConnsUnknownName != 2 {
		t.Fatalf("status %+v", st)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// A second runtime cannot claim an id without its key: it can send the public key but not sign.
func TestClaimWithoutKeyRefused(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil)
	victim := NewDeviceKey()
	rt := startRuntime(t, ca, func() string { return r.addr }, victim, hello("victim"))
	thief := NewDeviceKey()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wc, resp, err := websocket.Dial(ctx, "wss://"+testDomain+"/v1/tunnel", &websocket.DialOptions{HTTPClient: dialTo(ca, func() string { return r.addr })})
	if err != nil {
		t.Fatal(err)
	}
	binding, err := tlsBinding(resp.TLS)
	if err != nil {
		t.Fatal(err)
	}
	conn := websocket.NetConn(ctx, wc, websocket.MessageBinary)
	defer conn.Close()
	_, h, err := readFrameOf(conn, frameServerHello)
	if err != nil {
		t.Fatal(err)
	}
	p := append(append([]byte{}, victim.Public()...), thief.signAuth(testDomain, h[1:], binding, "")[32:]...)
	writeFrame(conn, frameClientAuth, p)
	typ, msg, err := readFrameOf(conn, frameServerOK, frameRefused)
	if err != nil || typ != frameRefused {
		t.Fatalf("got 0x%02x %q %v, want refused", typ, msg, err)
	}
	phone := dialTo(ca, func() string { return r.addr })
	if got := get(t, phone, "https://"+rt.host+"/"); !strings.Contains(got, "victim") {
		t.Fatalf("victim's tunnel lost: %q", got)
	}
	if r.srv.Status().LoginsRefused != 1 {
		t.Fatalf("status %+v", r.srv.Status())
	}
}

func TestPrivateRelay(t *testing.T) {
	ca := newTestCA(t)
	secret := []byte("relay secret")
	r := startRelay(t, ca, "", func(c *ServerConfig) { c.JoinSecret = secret })
	k := NewDeviceKey()
	c := NewClient(ClientConfig{Relay: testDomain, Key: k, HTTPClient: dialTo(ca, func() string { return r.addr })})
	if _, err := c.connectOnce(context.Background()); err == nil || !strings.Contains(err.Error(), "private") {
		t.Fatalf("no join token: %v", err)
	}
	rt := NewClient(ClientConfig{Relay: testDomain, Key: k, JoinToken: JoinToken(secret, k.ID()), HTTPClient: dialTo(ca, func() string { return r.addr })})
	go rt.Run(context.Background())
	defer rt.Close()
	waitUp(t, rt)
}

// A second runtime with a copy of the key takes the name (the newest tunnel wins); the first is
// told at once, says so in its status, and keeps taking the name back. A new key (rotation) gives it
// a name of its own that the copy cannot take.
func TestTakenNameNoticedAndTakenBack(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil)
	k := NewDeviceKey()
	addr := func() string { return r.addr }
	taken := make(chan TunnelStatus, 100)
	owner := NewClient(ClientConfig{Relay: testDomain, Key: k, HTTPClient: dialTo(ca, addr),
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, OnTaken: func(s TunnelStatus) { taken <- s }})
	ownerSrv := &http.Server{Handler: hello("owner")}
	go ownerSrv.Serve(tls.NewListener(owner, &tls.Config{GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
		return &ca.issue(t, h.ServerName).Certificates[0], nil
	}}))
	go owner.Run(context.Background())
	t.Cleanup(func() { owner.Close(); ownerSrv.Close() })
	waitUp(t, owner)
	if st := owner.Status(); !st.Up || st.Taken != 0 || st.Host != k.ID()+"."+testDomain {
		t.Fatalf("status before: %+v", st)
	}

	thief := startRuntime(t, ca, addr, k, hello("thief"))
	var st TunnelStatus
	select {
	case st = <-taken:
	case <-time.After(10 * time.Second):
		t.Fatal("the owner was not told its name was taken")
	}
	if st.Taken < 1 || st.TakenAt.IsZero() || st.TakenFrom != "127.0.0.1" || st.Host != thief.host {
		t.Fatalf("taken: %+v", st)
	}
	// It takes the name back, and keeps doing so: the thief is told in turn.
	for r.srv.Status().TunnelsReplaced < 4 {
		time.Sleep(10 * time.Millisecond)
	}
	if st := owner.Status(); st.Taken < 1 {
		t.Fatalf("status forgot the taking: %+v", st)
	}
	if st := thief.c.Status(); st.Taken < 1 {
		t.Fatalf("the other copy was not told either: %+v", st)
	}

	// Rotation: a new key, a new name, nothing taken; the copy of the old key has the old name to
	// itself and cannot log in as the new one.
	fresh := NewDeviceKey()
	up := owner.Connected()
	owner.SetKey(fresh)
	if st := owner.Status(); st.Taken != 0 || st.Host != fresh.ID()+"."+testDomain {
		t.Fatalf("after a new key: %+v", st)
	}
	for owner.Connected() == up {
		time.Sleep(5 * time.Millisecond)
	}
	waitUp(t, owner)
	phone := dialTo(ca, addr)
	phone.Transport.(*http.Transport).DisableKeepAlives = true
	if got := get(t, phone, "https://"+owner.Host()+"/"); got != "hello from owner over HTTP/1.1" {
		t.Fatalf("the new name: %q", got)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := phone.Get("https://" + thief.host + "/"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), "thief") {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the old name never settled on the copy")
		}
	}
	replaced := r.srv.Status().TunnelsReplaced
	for range 20 {
		if got := get(t, phone, "https://"+owner.Host()+"/"); !strings.Contains(got, "owner") {
			t.Fatalf("the new name answered %q", got)
		}
	}
	if st := owner.Status(); st.Taken != 0 || !st.Up {
		t.Fatalf("after rotation: %+v", st)
	}
	if n := r.srv.Status().TunnelsReplaced; n != replaced {
		t.Fatalf("tunnels still replaced after rotation: %d, then %d", replaced, n)
	}
}

// waitDown closes when the client's tunnel that was up (up) has gone down.
func waitDown(c *Client, up <-chan struct{}) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for c.Connected() == up {
			time.Sleep(5 * time.Millisecond)
		}
		close(ch)
	}()
	return ch
}

// ticker streams a line every 20 ms, like an event stream.
func ticker() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(w, "data: %d\n\n", i); err != nil {
				return
			}
			rc.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
}

// readTicks reads n ticks from a stream, or fails.
func readTicks(t *testing.T, phone *http.Client, url string, n int) (*bufio.Reader, io.Closer) {
	t.Helper()
	resp, err := phone.Get(url)
	if err != nil {
		t.Fatalf("open stream: %v", err)
	}
	br := bufio.NewReader(resp.Body)
	for i := 0; i < n; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if strings.HasPrefix(line, "data:") {
			i++
		}
	}
	return br, resp.Body
}

func TestTunnelDroppedWhileStreaming(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil)
	addr := func() string { return r.addr }
	rt := startRuntime(t, ca, addr, NewDeviceKey(), ticker())
	phone := dialTo(ca, addr)
	br, body := readTicks(t, phone, "https://"+rt.host+"/events", 3)
	defer body.Close()

	up := rt.c.Connected()
	dropped := time.Now()
	rt.c.dropForTest()
	// The stream ends: both ends of the tunnel are closed.
	for {
		if _, err := br.ReadString('\n'); err != nil {
			break
		}
	}
	<-waitDown(rt.c, up)
	waitUp(t, rt.c)
	_, body2 := readTicks(t, phone, "https://"+rt.host+"/events", 1)
	body2.Close()
	if d := time.Since(dropped); d > time.Second {
		t.Fatalf("serving again took %v, want under a second", d)
	}
	t.Logf("serving again %v after the drop", time.Since(dropped).Round(time.Millisecond))
}

func TestRelayRestarted(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil)
	var cur atomic.Pointer[string]
	cur.Store(&r.addr)
	addr := func() string { return *cur.Load() }
	rt := startRuntime(t, ca, addr, NewDeviceKey(), hello("runtime"))
	phone := dialTo(ca, addr)
	phone.Transport.(*http.Transport).DisableKeepAlives = true
	get(t, phone, "https://"+rt.host+"/")

	up := rt.c.Connected()
	r.stop() // tells the runtime it is restarting
	<-waitDown(rt.c, up)
	r2 := startRelay(t, ca, r.addr, nil) // the same address, a fresh relay with an empty table
	cur.Store(&r2.addr)
	waitUp(t, rt.c)
	if got := get(t, phone, "https://"+rt.host+"/"); !strings.Contains(got, "runtime") {
		t.Fatalf("after restart: %q", got)
	}
}

// The relay never sees the page, the cookie, or a secret the page posts: a tap on every byte the
// relay receives and sends, phones' and runtime's, holds none of them.
func TestRelayIsBlind(t *testing.T) {
	const (
		bodyMarker   = "page-marker-7f3a9c1e"
		cookieMarker = "cookie-marker-b81d44"
		secretMarker = "pairing-secret-c0ffee42"
	)
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil)
	tp := startTap(t, r.addr)
	addr := func() string { return tp.ln.Addr().String() }
	var gotSecret atomic.Bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			gotSecret.Store(bytes.Contains(b, []byte(secretMarker)))
			http.SetCookie(w, &http.Cookie{Name: "__Host-device", Value: cookieMarker, Path: "/", Secure: true, HttpOnly: true})
		}
		fmt.Fprint(w, bodyMarker)
	})
	rt := startRuntime(t, ca, addr, NewDeviceKey(), h)
	phone := dialTo(ca, addr)
	resp, err := phone.Post("https://"+rt.host+"/api/pair", "application/json", strings.NewReader(`{"secret":"`+secretMarker+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != bodyMarker || !gotSecret.Load() || !strings.Contains(resp.Header.Get("Set-Cookie"), cookieMarker) {
		t.Fatalf("the exchange itself failed: %q %v %q", b, gotSecret.Load(), resp.Header.Get("Set-Cookie"))
	}
	seen := tp.bytes()
	if len(seen) < 1000 {
		t.Fatalf("the tap saw only %d bytes", len(seen))
	}
	for _, m := range []string{bodyMarker, cookieMarker, secretMarker, "/api/pair"} {
		if bytes.Contains(seen, []byte(m)) {
			t.Errorf("the relay's traffic holds %q", m)
		}
	}
	if !bytes.Contains(seen, []byte(rt.host)) {
		t.Error("the tap did not see the server name; is it tapping the right traffic?")
	}
}

func TestManyPhones(t *testing.T) {
	if testing.Short() {
		t.Skip("load")
	}
	const phones, requests = 200, 20
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil)
	addr := func() string { return r.addr }
	rt := startRuntime(t, ca, addr, NewDeviceKey(), hello("runtime"))
	var failures atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for range phones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			phone := dialTo(ca, addr) // its own connection
			defer phone.CloseIdleConnections()
			for range requests {
				resp, err := phone.Get("https://" + rt.host + "/")
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d of %d requests failed; first: %v", n, phones*requests, firstErr.Load())
	}
	t.Logf("%d phones × %d requests through the relay in %v, no failures", phones, requests, time.Since(start).Round(time.Millisecond))
}

func jsonDecode(r io.ReadCloser, v any) error {
	defer r.Close()
	return json.NewDecoder(r).Decode(v)
}

// A proxy between the runtime and the relay that ends the runtime's TLS with a certificate the
// runtime trusts for the relay's name, and opens its own TLS to the relay, passes every byte of the
// login through both ways; the relay still refuses it, because the runtime signed the exporter of
// the connection it had (to the proxy), not of the one the relay has. The runtime's name stays free.
func TestLoginThroughTLSProxyRefused(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil)
	var passed atomic.Int64 // bytes the proxy carried from the runtime to the relay
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: ca.issue(t, testDomain).Certificates,
		NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := tls.Dial("tcp", r.addr, &tls.Config{ServerName: testDomain, RootCAs: ca.pool, NextProtos: []string{"http/1.1"}})
				if err != nil {
					return
				}
				defer u.Close()
				go func() { io.Copy(countingWriter{u, &passed}, c); u.Close() }()
				io.Copy(c, u)
			}()
		}
	}()
	k := NewDeviceKey()
	c := NewClient(ClientConfig{Relay: testDomain, Key: k, HTTPClient: dialTo(ca, func() string { return ln.Addr().String() })})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res := make(chan error, 1)
	go func() { _, err := c.connectOnce(ctx); res <- err }()
	select {
	case <-c.Connected():
		t.Fatal("the runtime logged in through a TLS-ending proxy")
	case err := <-res:
		if err == nil || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("login through a TLS-ending proxy: %v, want refused", err)
		}
	}
	if passed.Load() < 100 {
		t.Fatalf("the proxy carried %d bytes; did the login go through it?", passed.Load())
	}
	if st := r.srv.Status(); st.LoginsRefused != 1 || st.Tunnels != 0 {
		t.Fatalf("status %+v", st)
	}
	// The same runtime straight to the relay (or through a proxy that does not end TLS) logs in.
	direct := NewClient(ClientConfig{Relay: testDomain, Key: k, HTTPClient: dialTo(ca, func() string { return r.addr })})
	go direct.Run(context.Background())
	t.Cleanup(func() { direct.Close() })
	waitUp(t, direct)
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return c.w.Write(p)
}
