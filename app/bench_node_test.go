package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkNodeMessageFanout posts messages in a node's DM with 20 event-stream clients open, and
// measures the time from each message's commit (its own timestamp) to its arrival at every client
// (budget: p99 < 10 ms). The messages go to a crew whose one node is paused, so they wake nobody
// and only the post and its fan-out are measured.
func BenchmarkNodeMessageFanout(b *testing.B) {
	const clients, msgs = 20, 100
	s := startServe(b, b.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code, n, err := s.post(ctx, "/api/node/nodes", `{"name": "Quiet"}`)
	if err != nil || code != 201 {
		b.Fatal(code, err)
	}
	id, _ := n["id"].(string)
	if code, _, err := s.patch(ctx, "/api/node/nodes/"+id, `{"status": "paused"}`); err != nil || code != 200 {
		b.Fatal(code, err)
	}
	code, crew, err := s.post(ctx, "/api/node/crews", `{"title": "Quiet crew", "nodeIds": ["`+id+`"]}`)
	if err != nil || code != 201 {
		b.Fatal(code, err)
	}
	room, _ := crew["id"].(string)
	got := make(chan time.Duration, clients*msgs*2)
	var ready sync.WaitGroup
	for range clients {
		ready.Add(1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", s.f.URL+"/api/events?kinds=node", nil)
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
				if d, ok := strings.CutPrefix(line, "data: "); ok && kind == "node.message" {
					now := time.Now()
					var m struct {
						Author    string    `json:"author"`
						Body      string    `json:"body"`
						CreatedAt time.Time `json:"createdAt"`
					}
					json.Unmarshal([]byte(d), &m)
					if m.Author == "person" && strings.HasPrefix(m.Body, "fan-out") {
						got <- now.Sub(m.CreatedAt)
					}
				}
			}
		}()
	}
	ready.Wait()
	time.Sleep(100 * time.Millisecond)
	for range b.N {
		var lat []time.Duration
		for i := range msgs {
			body := fmt.Sprintf(`{"body": "fan-out %d"}`, i)
			if code, _, err := s.post(ctx, "/api/node/rooms/"+room+"/messages", body); err != nil || code != 201 {
				b.Fatal(code, err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		deadline := time.After(10 * time.Second)
		for len(lat) < clients*msgs {
			select {
			case d := <-got:
				lat = append(lat, d)
			case <-deadline:
				b.Fatalf("only %d of %d deliveries arrived", len(lat), clients*msgs)
			}
		}
		b.ReportMetric(ms(pct(lat, 50)), "p50-ms")
		b.ReportMetric(ms(pct(lat, 99)), "p99-ms")
	}
}
