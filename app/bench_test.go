package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines/agentproc"
)

// The benchmarks here run the real binary, as a person would, and report the figures the budgets
// in DESIGN.md name (docs/benchmarks.md records them). Run them with `make bench`.

// BenchmarkColdStart measures `ensemble serve` from exec to its first answered request, on a new
// data folder (migrations included) and on an existing one.
func BenchmarkColdStart(b *testing.B) {
	bin, err := buildBinary()
	if err != nil {
		b.Fatal(err)
	}
	warm := b.TempDir()
	coldStart(b, bin, warm) // create the database once
	for _, tc := range []struct {
		name string
		dir  func() string
	}{
		{"new-data", func() string { d, _ := os.MkdirTemp("", "ens-bench-"); return d }},
		{"existing-data", func() string { return warm }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var times []time.Duration
			for range b.N {
				times = append(times, coldStart(b, bin, tc.dir()))
			}
			b.ReportMetric(ms(pct(times, 50)), "p50-ms")
			b.ReportMetric(ms(pct(times, 95)), "p95-ms")
		})
	}
}

// coldStart starts serve on a fixed free port and polls it until /api/health answers.
func coldStart(b *testing.B, bin, data string) time.Duration {
	b.Helper()
	port := freePort(b)
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/api/health"
	client := &http.Client{Timeout: time.Second}
	start := time.Now()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:"+strconv.Itoa(port), "--data", data)
	agentproc.OwnGroup(cmd) // ended whole below, so no start's background work slows the next
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { agentproc.SignalGroup(cmd, true); cmd.Wait() }()
	for time.Since(start) < 10*time.Second {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return time.Since(start)
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	b.Fatal("serve did not answer within 10 s")
	return 0
}

func freePort(b *testing.B) int {
	b.Helper()
	s := httptest.NewServer(http.NotFoundHandler())
	port := s.Listener.Addr().(*net.TCPAddr).Port
	s.Close()
	return port
}

// BenchmarkIdleRSS measures the runtime's resident memory two seconds after start, with no runs,
// against a bare Go HTTP server built and started the same way in the same run. RSS counts the
// binary's own pages the kernel mapped (a recent kernel maps whole large page-cache folios, so
// most of a freshly built binary's code shows up), so the anonymous part, the memory the process
// allocated, is reported beside it.
func BenchmarkIdleRSS(b *testing.B) {
	base := buildBareServer(b)
	for range b.N {
		s := startServe(b, b.TempDir())
		time.Sleep(2 * time.Second)
		rss, anon := memKB(b, s.cmd.Process.Pid)
		agentproc.SignalGroup(s.cmd, true)
		<-s.done

		bare := exec.Command(base)
		out, err := bare.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := bare.Start(); err != nil {
			b.Fatal(err)
		}
		bufio.NewReader(out).ReadString('\n') // it prints its address once it listens
		time.Sleep(2 * time.Second)
		baseRSS, baseAnon := memKB(b, bare.Process.Pid)
		bare.Process.Kill()
		bare.Wait()

		b.ReportMetric(float64(rss)/1024, "RSS-MB")
		b.ReportMetric(float64(anon)/1024, "anon-MB")
		b.ReportMetric(float64(baseRSS)/1024, "bare-RSS-MB")
		b.ReportMetric(float64(baseAnon)/1024, "bare-anon-MB")
		b.ReportMetric(float64(rss)/float64(baseRSS), "RSS-vs-bare")
	}
}

// buildBareServer builds the baseline: net/http serving one handler on loopback, nothing else.
func buildBareServer(b *testing.B) string {
	dir := b.TempDir()
	src := `package main

import (
	"fmt"
	"net"
	"net/http"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(ln.Addr())
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
}
`
	for name, text := range map[string]string{"main.go": src, "go.mod": "module bare\n\ngo 1.26\n"} {
		if err := os.WriteFile(dir+"/"+name, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", "bare")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build the bare server: %v\n%s", err, out)
	}
	return dir + "/bare"
}

// memKB reads a process's resident set and its anonymous part from /proc.
func memKB(b *testing.B, pid int) (rss, anon int) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skip("no /proc here: ", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rss, _ = strconv.Atoi(f[1])
		case "RssAnon:":
			anon, _ = strconv.Atoi(f[1])
		}
	}
	if rss == 0 {
		b.Fatal("no VmRSS")
	}
	return rss, anon
}

// BenchmarkCreateTask creates tasks from 8 concurrent clients over loopback HTTP, each one durable
// (synchronous commit) before it is answered, against a no-op loopback handler as the baseline.
func BenchmarkCreateTask(b *testing.B) {
	const clients, total = 8, 2000
	s := startServe(b, b.TempDir())
	body := `{"title": "bench task", "labels": ["bench"], "priority": "high"}`
	create := func(ctx context.Context) error {
		code, _, err := s.post(ctx, "/api/tasks", body)
		if err == nil && code != http.StatusCreated {
			err = fmt.Errorf("status %d", code)
		}
		return err
	}
	noop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{}`))
	}))
	defer noop.Close()
	base := &served{f: apiFile{URL: noop.URL, Token: "x"}}
	baseline := func(ctx context.Context) error {
		_, _, err := base.post(ctx, "/", body)
		return err
	}
	for range b.N {
		bt, bl := load(b, clients, total, baseline)
		ct, cl := load(b, clients, total, create)
		b.ReportMetric(ct, "tasks/s")
		b.ReportMetric(ms(pct(cl, 50)), "p50-ms")
		b.ReportMetric(ms(pct(cl, 99)), "p99-ms")
		b.ReportMetric(bt, "baseline-req/s")
		b.ReportMetric(ms(pct(bl, 50)), "baseline-p50-ms")
		b.ReportMetric(ms(pct(bl, 99)), "baseline-p99-ms")
	}
}

// load runs total calls of do from clients goroutines and returns calls per second and each latency.
func load(b *testing.B, clients, total int, do func(context.Context) error) (float64, []time.Duration) {
	ctx := context.Background()
	next := make(chan struct{}, total)
	for range total {
		next <- struct{}{}
	}
	close(next)
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				t := time.Now()
				if err := do(ctx); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(t)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return float64(total) / time.Since(start).Seconds(), lat
}

// BenchmarkSSEFanout connects 50 event-stream clients and measures, for each task created, the time
// from its commit (the event's own timestamp) to its arrival at each client.
func BenchmarkSSEFanout(b *testing.B) {
	const clients, events = 50, 200
	s := startServe(b, b.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan time.Duration, clients*events*2)
	var ready sync.WaitGroup
	for range clients {
		ready.Add(1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", s.f.URL+"/api/events", nil)
			req.Header.Set("Authorization", "Bearer "+s.f.Token)
			resp, err := http.DefaultClient.Do(req)
			ready.Done()
			if err != nil {
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			kind := ""
			for sc.Scan() {
				line := sc.Text()
				if k, ok := strings.CutPrefix(line, "event: "); ok {
					kind = k
				}
				if d, ok := strings.CutPrefix(line, "data: "); ok && kind == "task.created" {
					now := time.Now()
					var t struct {
						CreatedAt time.Time `json:"createdAt"`
					}
					json.Unmarshal([]byte(d), &t)
					got <- now.Sub(t.CreatedAt)
				}
			}
		}()
	}
	ready.Wait()
	time.Sleep(100 * time.Millisecond)
	for range b.N {
		var lat []time.Duration
		for range events {
			if code, _, err := s.post(ctx, "/api/tasks", `{"title": "fan-out"}`); err != nil || code != 201 {
				b.Fatal(code, err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		deadline := time.After(10 * time.Second)
		for len(lat) < clients*events {
			select {
			case d := <-got:
				lat = append(lat, d)
			case <-deadline:
				b.Fatalf("only %d of %d deliveries arrived", len(lat), clients*events)
			}
		}
		b.ReportMetric(ms(pct(lat, 50)), "p50-ms")
		b.ReportMetric(ms(pct(lat, 99)), "p99-ms")
	}
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
