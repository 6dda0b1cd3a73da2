package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/store"
)

type fixture struct {
	srv   *httptest.Server
	api   *Server
	store *store.Store
	bus   *events.Bus
	token LaunchToken
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ensemble.db"))
	if err != nil {
		t.Fatal(err)
	}
	bus := events.NewBus()
	rec := records.New(st, ledger.New(st, bus))
	tok := NewLaunchToken()
	ui := fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>Ensemble</title>")}}
	a := New(Options{Version: "test", Token: tok, UI: ui, Keepalive: 50 * time.Millisecond},
		slog.New(slog.NewTextHandler(io.Discard, nil)), st, bus, rec)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(func() {
		bus.Close()
		srv.Close()
		st.Close()
	})
	return &fixture{srv: srv, api: a, store: st, bus: bus, token: tok}
}

// call sends a request; headers are pairs of name, value. The launch token is sent unless the
// headers set Authorization themselves ("" to send none).
func (f *fixture) call(t *testing.T, method, path, body string, headers ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+f.token.Reveal())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		} else if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
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

func (f *fixture) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := f.store.Reader().QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAccessChecks(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		headers []string
		want    int
	}{
		{"health needs no token", "GET", "/api/health", []string{"Authorization", ""}, 200},
		{"no token", "GET", "/api/tasks", []string{"Authorization", ""}, 401},
		{"wrong token", "GET", "/api/tasks", []string{"Authorization", "Bearer ens_launch_nope"}, 401},
		{"not bearer", "GET", "/api/tasks", []string{"Authorization", "Basic " + f.token.Reveal()}, 401},
		{"bad cookie", "GET", "/s/x1/api/tasks", []string{"Authorization", "", "Cookie", sessionCookie(f.port(t)) + "=forged"}, 401},
		{"bearer in lower case", "GET", "/api/tasks", []string{"Authorization", "bearer " + f.token.Reveal()}, 200},
		{"port not a number", "GET", "/api/tasks", []string{"Host", "127.0.0.1:4000x"}, 403},
		{"origin with a user", "GET", "/api/tasks", []string{"Origin", "http://x@" + strings.TrimPrefix(f.srv.URL, "http://")}, 403},
		{"origin with a path", "GET", "/api/tasks", []string{"Origin", f.srv.URL + "/"}, 403},
		{"token", "GET", "/api/tasks", nil, 200},
		{"localhost host", "GET", "/api/tasks", []string{"Host", "localhost:4000"}, 200},
		{"ipv6 loopback host", "GET", "/api/tasks", []string{"Host", "[::1]:4000"}, 200},
		{"foreign host with token", "GET", "/api/tasks", []string{"Host", "evil.example"}, 403},
		{"rebinding host with port", "GET", "/api/tasks", []string{"Host", "evil.example:4000"}, 403},
		{"foreign host on health", "GET", "/api/health", []string{"Host", "evil.example"}, 403},
		{"foreign origin", "GET", "/api/tasks", []string{"Origin", "http://evil.example"}, 403},
		{"foreign origin write", "POST", "/api/undo", []string{"Origin", "https://evil.example"}, 403},
		{"other local port", "GET", "/api/tasks", []string{"Origin", "http://127.0.0.1:1"}, 403},
		{"null origin", "GET", "/api/tasks", []string{"Origin", "null"}, 403},
		{"same origin", "GET", "/api/tasks", []string{"Origin", f.srv.URL}, 200},
		{"cross-site fetch", "GET", "/api/tasks", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"same-site fetch (another port)", "GET", "/api/tasks", []string{"Sec-Fetch-Site", "same-site"}, 403},
		{"unknown api route", "GET", "/api/nope", nil, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, body := f.call(t, tc.method, tc.path, "", tc.headers...)
			if got != tc.want {
				t.Fatalf("status %d, want %d (%v)", got, tc.want, body)
			}
			if got >= 400 && (body["error"] == nil || body["error"] == "") {
				t.Errorf("error answer without a sentence: %v", body)
			}
		})
	}
}

func TestBadBodiesChangeNothing(t *testing.T) {
	f := newFixture(t)
	code, task := f.call(t, "POST", "/api/tasks", `{"title": "Keep me"}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, task)
	}
	id := task["id"].(string)
	beforeEvents, beforeLedger := f.count(t, "events"), f.count(t, "ledger_groups")
	huge := `{"title": "` + strings.Repeat("x", maxBody) + `"}`
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
		sentence                 string
	}{
		{"malformed", "POST", "/api/tasks", `{"title": "x"`, 400, "The body is not valid JSON: it ends too soon."},
		{"not json", "POST", "/api/tasks", `title=x`, 400, "The body is not valid JSON (at byte 2)."},
		{"unknown field", "POST", "/api/tasks", `{"title": "x", "colour": "red"}`, 400, `Unknown field "colour".`},
		{"wrong type", "POST", "/api/tasks", `{"title": 7}`, 400, `Field "title" must be text, not number.`},
		{"wrong list type", "POST", "/api/tasks", `{"title": "x", "labels": "a"}`, 400, `Field "labels" must be a list, not string.`},
		{"array body", "POST", "/api/tasks", `[]`, 400, "The body must be a JSON object, not array."},
		{"two values", "POST", "/api/tasks", `{"title": "x"} {"title": "y"}`, 400, "The body must hold one JSON value and nothing after it."},
		{"oversized", "POST", "/api/tasks", huge, 400, "The body is larger than 1024 KB."},
		{"null body", "POST", "/api/tasks", `null`, 400, "The body must be a JSON object, not null."},
		{"invalid value", "POST", "/api/tasks", `{"title": "x", "priority": "asap"}`, 400, `Priority "asap" is not one of none, low, medium, high or urgent.`},
		{"patch unknown field", "PATCH", "/api/tasks/" + id, `{"titel": "y"}`, 400, `Unknown field "titel".`},
		{"patch malformed", "PATCH", "/api/tasks/" + id, `{`, 400, "The body is not valid JSON: it ends too soon."},
		{"patch oversized", "PATCH", "/api/tasks/" + id, huge, 400, "The body is larger than 1024 KB."},
		{"patch null body", "PATCH", "/api/tasks/" + id, `null`, 400, "The body must be a JSON object, not null."},
		{"patch wrong type", "PATCH", "/api/tasks/" + id, `{"due": 20261231}`, 400, `Field "due" must be text, not number.`},
		{"refused move", "PATCH", "/api/tasks/" + id, `{"status": "waiting_approval"}`, 409, "A task that is To do cannot move to Waiting approval; it can move to In progress, Blocked, Done or Dropped."},
		{"missing task", "PATCH", "/api/tasks/tsk_nope", `{"title": "y"}`, 404, `There is no task with id "tsk_nope".`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, body := f.call(t, tc.method, tc.path, tc.body)
			if got != tc.want || body["error"] != tc.sentence {
				t.Fatalf("got %d %q, want %d %q", got, body["error"], tc.want, tc.sentence)
			}
		})
	}
	if n := f.count(t, "tasks"); n != 1 {
		t.Errorf("%d tasks after bad requests, want 1", n)
	}
	if e, l := f.count(t, "events"), f.count(t, "ledger_groups"); e != beforeEvents || l != beforeLedger {
		t.Errorf("bad requests wrote events (%d→%d) or ledger groups (%d→%d)", beforeEvents, e, beforeLedger, l)
	}
	_, got := f.call(t, "GET", "/api/tasks/"+id, "")
	if got["title"] != "Keep me" || got["status"] != "todo" {
		t.Errorf("task changed by bad requests: %v", got)
	}
}

func TestRefusedMoveListsAllowed(t *testing.T) {
	f := newFixture(t)
	_, task := f.call(t, "POST", "/api/tasks", `{"title": "x", "status": "done"}`)
	code, body := f.call(t, "PATCH", "/api/tasks/"+task["id"].(string), `{"status": "blocked"}`)
	if code != 409 || fmt.Sprint(body["allowed"]) != "[todo in_progress]" {
		t.Fatalf("got %d %v, want 409 with allowed [todo in_progress]", code, body)
	}
}

// TestEveryTaskTransition moves a task between every pair of statuses over HTTP, on a real SQLite
// file: an allowed move is answered 200 and stored; a refused one is answered 409 with the moves
// that are allowed, and changes nothing (no ledger group, no event, the task as it was).
func TestEveryTaskTransition(t *testing.T) {
	f := newFixture(t)
	moves := records.Moves()
	for _, from := range records.Statuses {
		for _, to := range records.Statuses {
			t.Run(string(from)+"→"+string(to), func(t *testing.T) {
				code, task := f.call(t, "POST", "/api/tasks", `{"title": "move me", "status": "`+string(from)+`"}`)
				if code != 201 || task["status"] != string(from) {
					t.Fatalf("create in %s: %d %v", from, code, task)
				}
				id := task["id"].(string)
				events, groups := f.count(t, "events"), f.count(t, "ledger_groups")
				code, body := f.call(t, "PATCH", "/api/tasks/"+id, `{"status": "`+string(to)+`"}`)
				_, stored := f.call(t, "GET", "/api/tasks/"+id, "")
				if from == to || slices.Contains(moves[from], to) {
					if code != 200 || body["status"] != string(to) || stored["status"] != string(to) {
						t.Fatalf("allowed move: %d %v, stored %v; want 200 and %s", code, body, stored["status"], to)
					}
					return
				}
				if code != 409 || fmt.Sprint(body["allowed"]) != fmt.Sprint(moves[from]) || body["error"] == "" {
					t.Fatalf("refused move: %d %v; want 409 allowing %v", code, body, moves[from])
				}
				if stored["status"] != string(from) || f.count(t, "events") != events || f.count(t, "ledger_groups") != groups {
					t.Errorf("a refused move changed something: status %v, events %d→%d, groups %d→%d",
						stored["status"], events, f.count(t, "events"), groups, f.count(t, "ledger_groups"))
				}
			})
		}
	}
}

func TestKeepaliveDefaultsToFifteenSeconds(t *testing.T) {
	if got := New(Options{}, slog.New(slog.DiscardHandler), nil, nil, nil).opts.Keepalive; got != 15*time.Second {
		t.Errorf("keepalive = %v, want 15s", got)
	}
}

// TestSigninLinkIsOneTime: the cookie a sign-in sets lets the browser in under its path; the link
// does not work again, nor once expired.
func TestSigninLinkIsOneTime(t *testing.T) {
	f := newFixture(t)
	link := f.api.DirectSigninURL(f.srv.URL)
	resp, err := noRedirect.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	b := f.sessionFrom(t, resp, false)
	if code, _ := f.asBrowser(t, b, "GET", "/api/tasks", ""); code != 200 {
		t.Errorf("API with the session cookie: %d", code)
	}
	resp, _ = noRedirect.Get(link)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("second use of the link: %d, want 401", resp.StatusCode)
	}
	f.api.now = func() time.Time { return time.Now().Add(-10 * time.Minute) }
	old := f.api.SigninURL(f.srv.URL)
	f.api.now = time.Now
	if resp, _ := noRedirect.Get(old); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("expired link: %d, want 401", resp.StatusCode)
	}
}

func TestUIAndFallback(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/", "/board", "/tasks/tsk_1"} {
		resp, err := http.Get(f.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), "<title>Ensemble</title>") {
			t.Errorf("%s: %d %q", p, resp.StatusCode, b)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
	}
}

// readSSE reads events from an SSE body until it has n or the deadline passes.
func readSSE(t *testing.T, body io.Reader, n int) []events.Event {
	t.Helper()
	var out []events.Event
	sc := bufio.NewScanner(body)
	var ev events.Event
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			fmt.Sscan(line[4:], &ev.Seq)
		case strings.HasPrefix(line, "event: "):
			ev.Kind = events.Kind(line[7:])
		case strings.HasPrefix(line, "data: "):
			ev.Data = json.RawMessage(line[6:])
		case line == "" && ev.Kind != "":
			out = append(out, ev)
			ev = events.Event{}
		}
	}
	return out
}

func (f *fixture) stream(t *testing.T, ctx context.Context, lastID string) io.ReadCloser {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+f.token.Reveal())
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp.Body
}

func TestEventsReplayExactlyWhatWasMissed(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body := f.stream(t, ctx, "")
	f.call(t, "POST", "/api/tasks", `{"title": "one"}`)
	got := readSSE(t, body, 2) // task.created, ledger.write
	body.Close()
	if len(got) != 2 || got[0].Kind != "task.created" {
		t.Fatalf("live events = %v", got)
	}
	last := got[1].Seq
	// Offline: three more changes.
	for _, title := range []string{"two", "three", "four"} {
		f.call(t, "POST", "/api/tasks", `{"title": "`+title+`"}`)
	}
	body = f.stream(t, ctx, fmt.Sprint(last))
	defer body.Close()
	replayed := readSSE(t, body, 6)
	var titles []string
	for i, ev := range replayed {
		if ev.Seq != last+int64(i)+1 {
			t.Errorf("event %d has seq %d, want %d", i, ev.Seq, last+int64(i)+1)
		}
		if ev.Kind == "task.created" {
			var task records.Task
			json.Unmarshal(ev.Data, &task)
			titles = append(titles, task.Title)
		}
	}
	if strings.Join(titles, ",") != "two,three,four" {
		t.Errorf("replayed tasks %v, want two,three,four", titles)
	}
	// Then it follows live, with nothing repeated.
	f.call(t, "POST", "/api/tasks", `{"title": "five"}`)
	live := readSSE(t, body, 1)
	if len(live) != 1 || live[0].Seq != last+7 || live[0].Kind != "task.created" {
		t.Errorf("after replay: %v, want task.created with seq %d", live, last+7)
	}
}

// TestEventsResetAClientAheadOfTheLog: a client resuming from a seq the log never reached (the data
// folder was restored from a backup), by Last-Event-ID, ?since= or ?after=, is sent "reset" first,
// with the newest seq as its id, then follows live from there; one resuming from the newest is not.
func TestEventsResetAClientAheadOfTheLog(t *testing.T) {
	f := newFixture(t)
	f.call(t, "POST", "/api/tasks", `{"title": "one"}`)
	newest, err := events.Last(context.Background(), f.store.Reader())
	if err != nil || newest == 0 {
		t.Fatalf("newest %d, %v", newest, err)
	}
	open := func(t *testing.T, hdr, query string) io.ReadCloser {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/api/events"+query, nil)
		req.Header.Set("Authorization", "Bearer "+f.token.Reveal())
		if hdr != "" {
			req.Header.Set("Last-Event-ID", hdr)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("events: %v %v", resp, err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp.Body
	}
	for _, c := range []struct {
		name, header, query string
		ahead               int64
	}{
		{"Last-Event-ID", "%d", "", 1000}, {"since", "", "?since=%d", 1000}, {"after", "", "?after=%d", 1000}, {"one ahead", "%d", "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			newest, _ = events.Last(context.Background(), f.store.Reader())
			hdr, query := c.header, c.query
			if hdr != "" {
				hdr = fmt.Sprintf(hdr, newest+c.ahead)
			} else {
				query = fmt.Sprintf(query, newest+c.ahead)
			}
			body := open(t, hdr, query)
			got := readSSE(t, body, 1)
			if len(got) != 1 || got[0].Kind != events.KindReset || got[0].Seq != newest || string(got[0].Data) != fmt.Sprintf(`{"newest":%d}`, newest) {
				t.Fatalf("first event %+v, want reset with id %d", got, newest)
			}
			_, task := f.call(t, "POST", "/api/tasks", `{"title": "after the reset"}`)
			live := readSSE(t, body, 1)
			if len(live) != 1 || live[0].Kind != "task.created" || !strings.Contains(string(live[0].Data), task["id"].(string)) {
				t.Errorf("after the reset: %+v", live)
			}
		})
	}
	newest, _ = events.Last(context.Background(), f.store.Reader())
	// From the newest itself: nothing to reset, the next event is the next change.
	body := open(t, fmt.Sprint(newest), "")
	f.call(t, "POST", "/api/tasks", `{"title": "two"}`)
	if got := readSSE(t, body, 1); len(got) != 1 || got[0].Kind != "task.created" {
		t.Errorf("resuming from the newest: %v", got)
	}
}

func TestEventsKeepaliveAndBadResumePoint(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	body := f.stream(t, ctx, "")
	defer body.Close()
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		if sc.Text() == ": keepalive" {
			break
		}
	}
	if sc.Err() != nil {
		t.Fatalf("no keepalive: %v", sc.Err())
	}
	if code, _ := f.call(t, "GET", "/api/events", "", "Last-Event-ID", "abc"); code != 400 {
		t.Errorf("Last-Event-ID abc: %d, want 400", code)
	}
}

func TestSlowClientIsDroppedAndResumes(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	slow := f.stream(t, ctx, "") // never read
	defer slow.Close()
	fast := f.stream(t, ctx, "")
	defer fast.Close()
	for f.bus.Subscribers() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	// Big events, so that the slow client's socket buffers fill and its handler falls behind.
	const n = 3 * sseBuffer
	pad := strings.Repeat("x", 8<<10)
	tx, err := f.store.Writer().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := make([]events.Event, n)
	for i := range evs {
		if evs[i], err = events.Append(ctx, tx, time.Now(), "test.tick", "", map[string]any{"i": i, "pad": pad}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	first := evs[0].Seq

	var read atomic.Int64
	go func() {
		sc := bufio.NewScanner(fast)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "id: ") {
				read.Add(1)
			}
		}
	}()
	// Publish in chunks no bigger than a buffer, waiting for the fast client to read each one, as
	// a client that keeps up does.
	const chunk = sseBuffer / 2
	for i := 0; i < n; i += chunk {
		f.bus.Publish(evs[i:min(i+chunk, n)]...)
		for read.Load() < int64(min(i+chunk, n)) {
			if ctx.Err() != nil {
				t.Fatalf("the fast client read %d events of %d", read.Load(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if f.bus.Dropped() != 1 {
		t.Fatalf("dropped %d subscribers, want the slow one only", f.bus.Dropped())
	}
	// The slow client reconnects from where it was and gets everything, in order, from SQLite.
	again := f.stream(t, ctx, fmt.Sprint(first-1))
	defer again.Close()
	replayed := readSSE(t, again, n)
	if len(replayed) != n || replayed[0].Seq != first || replayed[n-1].Seq != first+n-1 {
		t.Fatalf("replayed %d events, want %d from seq %d", len(replayed), n, first)
	}
}

func TestUINotBuilt(t *testing.T) {
	a := New(Options{Token: NewLaunchToken()}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, nil, nil)
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "make run") {
		t.Errorf("unbuilt UI: %d %q", resp.StatusCode, b)
	}
}
