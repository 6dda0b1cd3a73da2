package relay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// http1 makes a phone that speaks only HTTP/1.1 and keeps one connection.
func http1(phone *http.Client) *http.Client {
	old := phone.Transport.(*http.Transport)
	tr := &http.Transport{DialContext: old.DialContext, TLSClientConfig: &tls.Config{RootCAs: old.TLSClientConfig.RootCAs},
		MaxConnsPerHost: 1, Protocols: new(http.Protocols)}
	tr.Protocols.SetHTTP1(true)
	return &http.Client{Transport: tr, Timeout: phone.Timeout}
}

// 100 requests on one kept-alive HTTP/1.1 connection through the relay: every one after the
// first reuses it. (A read deadline in the past used to break the TLS connection under it.)
func TestKeepAliveHTTP1(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil)
	rt := startRuntime(t, ca, func() string { return r.addr }, NewDeviceKey(), hello("runtime"))
	phone := http1(dialTo(ca, func() string { return r.addr }))
	var first string
	for i := range 100 {
		var local string
		var reused bool
		req, _ := http.NewRequest("GET", "https://"+rt.host+"/", nil)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(c httptrace.GotConnInfo) { local, reused = c.Conn.LocalAddr().String(), c.Reused }}))
		resp, err := phone.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "hello from runtime over HTTP/1.1" {
			t.Fatalf("request %d: %q", i+1, b)
		}
		if i == 0 {
			first = local
		} else if !reused || local != first {
			t.Fatalf("request %d went on connection %s (reused %v), not the first one's %s", i+1, local, reused, first)
		}
	}
}

// echo is a WebSocket server that sends back every message, and pings the client all along
// (pongs counts the answers).
func echo(t *testing.T, pongs *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(8 << 20)
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			for ctx.Err() == nil {
				if c.Ping(ctx) == nil {
					pongs.Add(1)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		for {
			typ, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			if err := c.Write(ctx, typ, b); err != nil {
				t.Errorf("echo: %v", err)
				return
			}
		}
	})
}

// A WebSocket through the relay carries many messages both ways, small and large, with pings in
// between; it used to close right after its first frame.
func TestWebSocketThroughRelay(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil)
	var pongs atomic.Int64
	rt := startRuntime(t, ca, func() string { return r.addr }, NewDeviceKey(), echo(t, &pongs))
	phone := http1(dialTo(ca, func() string { return r.addr }))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "wss://"+rt.host+"/ws", &websocket.DialOptions{HTTPClient: phone})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(8 << 20)
	for i := range 200 {
		msg := []byte(fmt.Sprintf("message %d ", i))
		if i%50 == 0 {
			msg = bytes.Repeat(msg, 200_000) // a few MB: many yamux windows
		}
		if err := c.Write(ctx, websocket.MessageBinary, msg); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		_, got, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("message %d came back as %d bytes, want %d", i, len(got), len(msg))
		}
	}
	if err := c.Close(websocket.StatusNormalClosure, "done"); err != nil {
		t.Fatalf("close: %v", err)
	}
	if pongs.Load() == 0 {
		t.Fatal("no ping of the server's was answered")
	}
}

// Large bodies go both ways intact, over HTTP/1.1 and HTTP/2.
func TestLargeBodies(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB each way")
	}
	const size = 64 << 20
	blob := make([]byte, size)
	for i := range blob {
		blob[i] = byte(rand.N(256))
	}
	want := sha256.Sum256(blob)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			s := sha256.New()
			n, err := io.Copy(s, r.Body)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			fmt.Fprintf(w, "%d %x", n, s.Sum(nil))
			return
		}
		w.Write(blob)
	})
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil)
	rt := startRuntime(t, ca, func() string { return r.addr }, NewDeviceKey(), h)
	for _, tc := range []struct {
		name  string
		phone *http.Client
	}{{"HTTP/1.1", http1(dialTo(ca, func() string { return r.addr }))}, {"HTTP/2", dialTo(ca, func() string { return r.addr })}} {
		t.Run(tc.name, func(t *testing.T) {
			tc.phone.Timeout = 2 * time.Minute
			resp, err := tc.phone.Post("https://"+rt.host+"/up", "application/octet-stream", bytes.NewReader(blob))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := fmt.Sprintf("%d %x", size, want); string(b) != got {
				t.Fatalf("upload arrived as %q, want %q", b, got)
			}
			resp, err = tc.phone.Get("https://" + rt.host + "/down")
			if err != nil {
				t.Fatal(err)
			}
			s := sha256.New()
			n, err := io.Copy(s, resp.Body)
			resp.Body.Close()
			if err != nil || n != size || !bytes.Equal(s.Sum(nil), want[:]) {
				t.Fatalf("download: %d bytes, %v, checksum match %v", n, err, bytes.Equal(s.Sum(nil), want[:]))
			}
			if resp.Proto != map[string]string{"HTTP/1.1": "HTTP/1.1", "HTTP/2": "HTTP/2.0"}[tc.name] {
				t.Fatalf("spoke %s", resp.Proto)
			}
		})
	}
}

// An event stream that is quiet but for keepalives outlives the relay's idle timeout many times
// over, on HTTP/1.1 and HTTP/2, and still delivers what comes after.
func TestQuietStreamOutlivesIdleTimeout(t *testing.T) {
	const idle, keepalive = 300 * time.Millisecond, 100 * time.Millisecond
	news := make(chan string)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		fmt.Fprint(w, ": live\n\n")
		rc.Flush()
		tick := time.NewTicker(keepalive)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				fmt.Fprint(w, ": keepalive\n\n")
			case m := <-news:
				fmt.Fprintf(w, "data: %s\n\n", m)
			}
			if rc.Flush() != nil {
				return
			}
		}
	})
	ca := newTestCA(t)
	r := startRelay(t, ca, "", func(c *ServerConfig) { c.IdleTimeout = idle })
	rt := startRuntime(t, ca, func() string { return r.addr }, NewDeviceKey(), h)
	for _, tc := range []struct {
		name  string
		phone *http.Client
	}{{"HTTP/1.1", http1(dialTo(ca, func() string { return r.addr }))}, {"HTTP/2", dialTo(ca, func() string { return r.addr })}} {
		t.Run(tc.name, func(t *testing.T) {
			tc.phone.Timeout = 0
			resp, err := tc.phone.Get("https://" + rt.host + "/events")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			lines := make(chan string)
			go func() {
				defer close(lines)
				b := make([]byte, 4096)
				for {
					n, err := resp.Body.Read(b)
					for _, l := range strings.Split(string(b[:n]), "\n") {
						if l != "" {
							lines <- l
						}
					}
					if err != nil {
						return
					}
				}
			}()
			// Count keepalives: ten idle timeouts' worth of them, each one proof the stream is up.
			for n := 0; n < int(10*idle/keepalive); {
				l, ok := <-lines
				if !ok {
					t.Fatalf("the stream ended after %d keepalives", n)
				}
				if l == ": keepalive" {
					n++
				}
			}
			marker := "after-" + tc.name
			news <- marker
			for l := range lines {
				if l == "data: "+marker {
					return
				}
			}
			t.Fatal("the stream ended before the news")
		})
	}
}
