package relay

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestSource(t *testing.T) {
	for _, tt := range []struct{ addr, want string }{
		{"203.0.113.7:443", "203.0.113.7"},
		{"[::ffff:203.0.113.7]:443", "203.0.113.7"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:1", "2001:db8:1:2::/64"},
		{"relay", "relay"},
	} {
		if got := Source(tt.addr); got != tt.want {
			t.Errorf("Source(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

// dialFrom is dialTo from a local address of its own: another source, on loopback.
func dialFrom(ca *testCA, local string, addr func() string) *http.Client {
	c := dialTo(ca, addr)
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr())
	}
	return c
}

// park opens n connections from local to the relay that send a ClientHello for host and then
// nothing, and returns how many the relay still holds open a moment after (the rest it closed).
func park(t *testing.T, relayAddr, local, host string, n int) (held []net.Conn) {
	t.Helper()
	hello := clientHello(t, &tls.Config{ServerName: host})
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	var all []net.Conn
	for range n {
		c, err := d.Dial("tcp", relayAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.Write(hello)
		all = append(all, c)
	}
	// A connection the relay refused is closed at once; one it holds stays open (what the runtime
	// answers is read and dropped). Whether it is closed shows within moments: read each until it
	// ends or a short wait passes.
	for _, c := range all {
		buf := make([]byte, 4096)
		for {
			c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			_, err := c.Read(buf)
			if isTimeout(err) {
				c.SetReadDeadline(time.Time{})
				held = append(held, c)
			}
			if err != nil {
				break
			}
		}
	}
	return held
}

// One source parking connections on a runtime's tunnel holds at most its share of it; a phone from
// elsewhere still gets in.
func TestParkedOnAnotherTunnel(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", func(c *ServerConfig) { c.MaxStreams = 20; c.MaxStreamsPerSource = 8 })
	stalled := make(chan struct{})
	t.Cleanup(func() { close(stalled) })
	rt := startRuntime(t, ca, func() string { return r.addr }, NewDeviceKey(), hello("victim"))
	held := park(t, r.addr, "127.0.0.2", rt.host, 50)
	if len(held) != 8 {
		t.Fatalf("the relay holds %d of one source's parked connections, want its share of 8", len(held))
	}
	phone := dialFrom(ca, "127.0.0.3", func() string { return r.addr })
	if got := get(t, phone, "https://"+rt.host+"/"); !strings.Contains(got, "victim") {
		t.Fatalf("phone from elsewhere: %q", got)
	}
	if r.srv.Status().ConnsOverShare < 42 {
		t.Fatalf("status %+v", r.srv.Status())
	}
}

// One source with its own tunnel cannot park on it what the whole relay has.
func TestParkedOnOwnTunnel(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", func(c *ServerConfig) { c.MaxConns = 30; c.MaxConnsPerSource = 10 })
	victim := startRuntime(t, ca, func() string { return r.addr }, NewDeviceKey(), hello("victim"))
	// The squatter's own runtime, from 127.0.0.2, whose tunnel is one of its connections.
	sq := NewClient(ClientConfig{Relay: testDomain, Key: NewDeviceKey(), HTTPClient: dialFrom(ca, "127.0.0.2", func() string { return r.addr })})
	go sq.Run(context.Background())
	t.Cleanup(func() { sq.Close() })
	waitUp(t, sq)
	go func() { // it accepts and holds every connection on it
		for {
			c, err := sq.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	held := park(t, r.addr, "127.0.0.2", sq.Host(), 100)
	if len(held) != 9 { // ten connections in all, the tunnel's among them
		t.Fatalf("the relay holds %d parked connections of one source, want 9 (its share of 10, less its tunnel)", len(held))
	}
	phone := dialFrom(ca, "127.0.0.3", func() string { return r.addr })
	if got := get(t, phone, "https://"+victim.host+"/"); !strings.Contains(got, "victim") {
		t.Fatalf("phone from elsewhere: %q", got)
	}
}

// Keys are free, tunnels per source are not.
func TestTunnelsPerSource(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", func(c *ServerConfig) { c.MaxTunnelsPerSource = 2 })
	from := func(local string) *Client {
		return NewClient(ClientConfig{Relay: testDomain, Key: NewDeviceKey(), HTTPClient: dialFrom(ca, local, func() string { return r.addr })})
	}
	for range 2 {
		c := from("127.0.0.2")
		go c.Run(context.Background())
		t.Cleanup(func() { c.Close() })
		waitUp(t, c)
	}
	_, err := from("127.0.0.2").connectOnce(context.Background())
	if err == nil || !strings.Contains(err.Error(), "as many tunnels") {
		t.Fatalf("a third tunnel from one source: %v", err)
	}
	other := from("127.0.0.3")
	go other.Run(context.Background())
	t.Cleanup(func() { other.Close() })
	waitUp(t, other)
}

// /status is for the relay's operator: its own machine, or its status token.
func TestStatusForOperatorOnly(t *testing.T) {
	h := NewServer(ServerConfig{Domain: testDomain, StatusToken: "operator-token"}).Handler()
	for _, tt := range []struct {
		name, remote, auth string
		want               int
	}{
		{"from the relay's machine", "127.0.0.1:5000", "", 200},
		{"from the relay's machine, IPv6", "[::1]:5000", "", 200},
		{"from elsewhere", "203.0.113.9:5000", "", 403},
		{"from elsewhere with the token", "203.0.113.9:5000", "Bearer operator-token", 200},
		{"from elsewhere with another token", "203.0.113.9:5000", "Bearer guess", 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "https://"+testDomain+"/status", nil)
			req.RemoteAddr = tt.remote
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tt.want || (w.Code == 200) != strings.Contains(w.Body.String(), `"tunnels"`) {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
		})
	}
}

// The runtime keeps its own share per source, whatever the relay lets through: one source's
// parked connections take at most MaxConnsPerSource of the runtime, and give them back as they end.
func TestRuntimeSharePerSource(t *testing.T) {
	ca := newTestCA(t)
	r := startRelay(t, ca, "", nil) // a relay that allows every source all it has
	rt := startRuntimeWith(t, ca, func() string { return r.addr }, NewDeviceKey(), hello("runtime"),
		func(c *ClientConfig) { c.MaxConnsPerSource = 4 })
	held := park(t, r.addr, "127.0.0.2", rt.host, 10)
	if len(held) != 4 {
		t.Fatalf("the runtime holds %d of one source's parked connections, want its share of 4", len(held))
	}
	phone := dialFrom(ca, "127.0.0.3", func() string { return r.addr })
	if got := get(t, phone, "https://"+rt.host+"/"); !strings.Contains(got, "runtime") {
		t.Fatalf("phone from elsewhere: %q", got)
	}
	for _, c := range held {
		c.Close()
	}
	// Closed, they are given back: the source can connect again.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if len(park(t, r.addr, "127.0.0.2", rt.host, 1)) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the source's share was not given back")
		}
	}
}
