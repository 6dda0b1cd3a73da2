package bridge_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/bridge"
)

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func TestStreamableHTTP(t *testing.T) {
	r := startRuntime(t)
	r.seed(t)
	b := bridge.New(context.Background(), bridge.Config{DataDir: r.data, Key: r.key(t, "http", true), Dir: t.TempDir()})
	srv := httptest.NewServer(bridge.HTTPHandler(b.Server(), httpToken))
	defer srv.Close()
	ctx := context.Background()
	connectHTTP := func(token string) (*mcp.ClientSession, error) {
		hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
		return mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	}
	cs, err := connectHTTP(httpToken)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	out := mustCall(t, cs, "ensemble_search", map[string]any{"query": "login"})
	if out["count"].(float64) == 0 {
		t.Errorf("search over HTTP = %v", out)
	}
	// Without CONTEXT_BRIDGE_HTTP_TOKEN's twin Local, an HTTP bridge neither reads nor writes paths.
	mustFail(t, cs, "ensemble_upload_file", map[string]any{"path": "/etc/passwd"}, "does not read files on this computer")
	if _, err := connectHTTP("wrong"); err == nil {
		t.Error("a wrong token connected")
	}
	if _, err := connectHTTP(""); err == nil {
		t.Error("no token connected")
	}
	for _, tc := range []struct {
		name, host, origin string
		want               int
	}{
		{"foreign host", "evil.example", "", 403},
		{"foreign origin", "", "http://evil.example", 403},
		{"no token", "", "", 401},
	} {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}

func TestCheckHost(t *testing.T) {
	for host, ok := range map[string]bool{"127.0.0.1": true, "localhost": true, "::1": true, "0.0.0.0": false, "192.168.1.2": false, "example.com": false, "": false} {
		if err := bridge.CheckHost(host); (err == nil) != ok {
			t.Errorf("CheckHost(%q) = %v", host, err)
		}
	}
}
