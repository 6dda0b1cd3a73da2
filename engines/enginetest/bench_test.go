package enginetest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkStreamedReply measures whole streamed replies (a paragraph of
// text and a tool call) over loopback HTTP, per wire format; it reports
// requests/s.
func BenchmarkStreamedReply(b *testing.B) {
	text := strings.Repeat("The scripted model streams this sentence. ", 12)
	step := Say(text).Call("Bash", map[string]any{"command": "ls -la", "description": "list"}).Forever()
	for _, c := range []struct {
		name, path string
		body       map[string]any
	}{
		{"anthropic", "/v1/messages", anthropicBody("hi", "Bash")},
		{"responses", "/v1/responses", responsesBody("hi", "Bash")},
		{"chat", "/v1/chat/completions", chatBody("hi", "Bash")},
		{"gemini", "/v1beta/models/m:streamGenerateContent?alt=sse", geminiBody("hi", "Bash")},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := NewServer(b, WithLogf(func(string, ...any) {}))
			s.Script(step)
			body, _ := json.Marshal(c.body)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				resp, err := client.Post(s.URL+c.path, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || n == 0 {
					b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
