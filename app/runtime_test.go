package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestRuntimeURLIsTheListenersAddress starts the runtime on loopback addresses other than
// 127.0.0.1: the URL it announces (and writes to api.json) must reach it there.
func TestRuntimeURLIsTheListenersAddress(t *testing.T) {
	for _, addr := range []string{"127.0.0.2:0", "localhost:0"} {
		t.Run(addr, func(t *testing.T) {
			rt, err := startRuntime(context.Background(), runtimeConfig{DataDir: t.TempDir(), Addr: addr,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			host := strings.Split(addr, ":")[0]
			if host == "localhost" {
				host = "127.0.0.1" // Go listens on the name's first address
			}
			if !strings.HasPrefix(rt.URL, "http://"+host+":") {
				t.Fatalf("URL %s, want one on %s", rt.URL, host)
			}
			resp, err := http.Get(rt.URL + "/api/health")
			if err != nil {
				t.Fatalf("the announced URL does not answer: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s/api/health: %s", rt.URL, resp.Status)
			}
		})
	}
}
