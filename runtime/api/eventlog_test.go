package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/runtime/events"
)

// TestEventStreamFilter: ?kinds= and ?subject= narrow the one stream, and the log pages through
// what the same filter selects.
func TestEventStreamFilter(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/api/events?since=0&kinds=task.", nil)
	req.Header.Set("Authorization", "Bearer "+f.token.Reveal())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, one := f.call(t, "POST", "/api/tasks", `{"title": "one"}`)
	f.call(t, "POST", "/api/projects", `{"name": "p"}`)
	_, two := f.call(t, "POST", "/api/tasks", `{"title": "two"}`)
	got := readSSE(t, resp.Body, 2)
	if len(got) != 2 || got[0].Kind != "task.created" || got[1].Kind != "task.created" || got[0].Seq >= got[1].Seq {
		t.Fatalf("filtered stream: %+v, want the two task.created and nothing else", got)
	}

	type page struct {
		Events []events.Event `json:"events"`
		More   bool           `json:"more"`
	}
	read := func(query string) (int, page) {
		t.Helper()
		req, _ := http.NewRequest("GET", f.srv.URL+"/api/events/log"+query, nil)
		req.Header.Set("Authorization", "Bearer "+f.token.Reveal())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p page
		json.NewDecoder(resp.Body).Decode(&p)
		return resp.StatusCode, p
	}
	for _, tc := range []struct {
		query string
		want  string // kinds and subjects, in order
	}{
		{"?kinds=task.", fmt.Sprintf("[task.created %s task.created %s]", one["id"], two["id"])},
		{"?kinds=task.&subject=" + two["id"].(string), fmt.Sprintf("[task.created %s]", two["id"])},
		{"?kinds=project.created,task.created&limit=2", fmt.Sprintf("[task.created %s project.created %s]", one["id"], "?")},
		{fmt.Sprintf("?kinds=task.&after=%d", got[0].Seq), fmt.Sprintf("[task.created %s]", two["id"])},
	} {
		code, p := read(tc.query)
		var seen []any
		for _, ev := range p.Events {
			subject := ev.Subject
			if ev.Kind == "project.created" {
				subject = "?"
			}
			seen = append(seen, ev.Kind, subject)
		}
		if code != 200 || fmt.Sprint(seen) != tc.want {
			t.Errorf("log%s: %d %v, want %s", tc.query, code, seen, tc.want)
		}
		if p.More != (len(p.Events) == 2 && tc.query == "?kinds=project.created,task.created&limit=2") {
			t.Errorf("log%s: more = %v", tc.query, p.More)
		}
	}
	for _, q := range []string{"/api/events/log?kinds=task%25", "/api/events/log?after=x", "/api/events/log?limit=0", "/api/events?kinds=Task."} {
		if code, _ := f.call(t, "GET", q, ""); code != 400 {
			t.Errorf("%s: %d, want 400", q, code)
		}
	}
}
