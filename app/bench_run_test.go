package app

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// BenchmarkProtocolLineToSSE measures the path of every agent message: a line on the agent's
// stdout pipe, read by its driver, recorded by the run (SQLite, in groups), published, and
// received by an event-stream client. The agent writes 5,000 lines a second for two seconds. The
// baseline is the same lines read straight off the same kind of pipe.
func BenchmarkProtocolLineToSSE(b *testing.B) {
	const rate, seconds = 5000, 2
	for range b.N {
		base := pipeLatencies(b, rate, seconds, nil)
		b.ReportMetric(ms(pct(base, 50)), "pipe-p50-ms")
		b.ReportMetric(ms(pct(base, 99)), "pipe-p99-ms")

		lines := make(chan []time.Duration, 1)
		drv := &pipeAgent{rate: rate, seconds: seconds}
		rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: b.TempDir(), Addr: "127.0.0.1:0",
			Log: slog.New(slog.DiscardHandler), Drivers: map[string]engines.Driver{"pipe": drv}})
		if err != nil {
			b.Fatal(err)
		}
		f, _ := readAPIFile(rt.cfg.DataDir)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", rt.URL+"/api/events", nil)
		req.Header.Set("Authorization", "Bearer "+f.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		go func() { lines <- sseLatencies(resp.Body, rate*seconds) }()
		c := &client{f: f, http: httpClient()}
		if err := c.do(ctx, "POST", "/api/agent/assign", map[string]any{"title": "Stream", "agent": "pipe",
			"folder": b.TempDir(), "settings": map[string]any{"mode": "unattended"}}, nil); err != nil {
			b.Fatal(err)
		}
		got := <-lines
		cancel()
		resp.Body.Close()
		rt.Close()
		if len(got) < rate*seconds {
			b.Fatalf("the client got %d of %d messages", len(got), rate*seconds)
		}
		b.ReportMetric(ms(pct(got, 50)), "p50-ms")
		b.ReportMetric(ms(pct(got, 99)), "p99-ms")
		b.ReportMetric(float64(pct(got, 50))/float64(pct(base, 50)), "p50-x-pipe")
	}
}

// writeLines writes rate lines a second for seconds to w, each carrying its send time, then closes w.
func writeLines(w io.WriteCloser, rate, seconds int) {
	defer w.Close()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	per := rate / 1000
	for n := 0; n < rate*seconds; {
		<-tick.C
		for range per {
			line := `{"type":"assistant","sent":` + strconv.FormatInt(time.Now().UnixNano(), 10) + "}\n"
			if _, err := io.WriteString(w, line); err != nil {
				return
			}
			n++
		}
	}
}

// sentAt reads the send time back out of a line.
func sentAt(line string) time.Time {
	var m struct{ Sent int64 }
	json.Unmarshal([]byte(line), &m)
	return time.Unix(0, m.Sent)
}

// pipeLatencies is the baseline: lines read straight off an OS pipe.
func pipeLatencies(b *testing.B, rate, seconds int, _ any) []time.Duration {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	go writeLines(w, rate, seconds)
	var out []time.Duration
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		out = append(out, time.Since(sentAt(sc.Text())))
	}
	r.Close()
	return out
}

// sseLatencies reads run.message events until it has n, measuring each from its line's send time.
func sseLatencies(body io.Reader, n int) []time.Duration {
	var out []time.Duration
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	kind := ""
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		if k, ok := strings.CutPrefix(line, "event: "); ok {
			kind = k
			continue
		}
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok || kind != "run.message" {
			continue
		}
		now := time.Now()
		var tr struct{ Text string }
		json.Unmarshal([]byte(d), &tr)
		out = append(out, now.Sub(sentAt(tr.Text)))
	}
	return out
}

// pipeAgent is a stand-in agent that speaks through a real OS pipe: it writes protocol lines at a
// fixed rate, and its driver reads them and reports each as a message.
type pipeAgent struct{ rate, seconds int }

func (p *pipeAgent) Name() string { return "pipe" }

func (p *pipeAgent) Start(ctx context.Context, spec engines.Spec, h engines.Host) (engines.Run, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	go writeLines(w, p.rate, p.seconds)
	run := &pipeRun{done: make(chan struct{})}
	go func() {
		defer close(run.done)
		defer r.Close()
		h.Event(engines.Event{At: time.Now(), Kind: engines.EventStarted, Session: "pipe"})
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			h.Event(engines.Event{At: time.Now(), Kind: engines.EventMessage, Text: sc.Text()})
		}
	}()
	return run, nil
}

type pipeRun struct{ done chan struct{} }

func (r *pipeRun) Wait() (engines.Result, error) {
	<-r.done
	return engines.Result{SessionID: "pipe", Summary: "streamed"}, nil
}

func (r *pipeRun) Stop(context.Context) error { return nil }
