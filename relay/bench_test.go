package relay

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"
)

// benchPair starts a relay and a runtime, and returns a phone client through the relay and one
// straight to the same runtime handler over TLS on loopback, to compare in the same run.
func benchPair(b testing.TB) (viaRelay, direct *http.Client, relayURL, directURL string) {
	ca := newTestCA(b)
	r := startRelay(b, ca, "", nil)
	h := hello("runtime")
	rt := startRuntime(b, ca, func() string { return r.addr }, NewDeviceKey(), h)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(tls.NewListener(ln, ca.issue(b, rt.host)))
	b.Cleanup(func() { srv.Close() })
	return dialTo(ca, func() string { return r.addr }), dialTo(ca, func() string { return ln.Addr().String() }),
		"https://" + rt.host + "/", "https://" + rt.host + "/"
}

func timeGET(b testing.TB, c *http.Client, url string) time.Duration {
	start := time.Now()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(start)
}

// BenchmarkGET measures a GET on a kept connection, straight to the runtime and through the relay;
// the difference of the p50 metrics is what the relay adds (budget: under 1 ms).
func BenchmarkGET(b *testing.B) {
	viaRelay, direct, ru, du := benchPair(b)
	for _, tc := range []struct {
		name string
		c    *http.Client
		url  string
	}{{"direct", direct, du}, {"relay", viaRelay, ru}} {
		b.Run(tc.name, func(b *testing.B) {
			timeGET(b, tc.c, tc.url) // connect first
			var ds []time.Duration
			for b.Loop() {
				ds = append(ds, timeGET(b, tc.c, tc.url))
			}
			slices.Sort(ds)
			b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// TestAddedLatency interleaves direct and relayed GETs and checks the relay adds under 1 ms at p50.
func TestAddedLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	viaRelay, direct, ru, du := benchPair(t)
	timeGET(t, viaRelay, ru)
	timeGET(t, direct, du)
	var dr, dd []time.Duration
	for range 2000 {
		dd = append(dd, timeGET(t, direct, du))
		dr = append(dr, timeGET(t, viaRelay, ru))
	}
	slices.Sort(dr)
	slices.Sort(dd)
	p := func(ds []time.Duration, q int) time.Duration { return ds[len(ds)*q/100] }
	added := p(dr, 50) - p(dd, 50)
	t.Logf("GET p50/p99 direct %v/%v, via relay %v/%v: %v added at p50",
		p(dd, 50), p(dd, 99), p(dr, 50), p(dr, 99), added)
	if added > time.Millisecond {
		t.Errorf("the relay adds %v at p50; the budget is 1 ms", added)
	}
}
