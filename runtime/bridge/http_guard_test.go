package bridge_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/runtime/bridge"
)

// TestHTTPBridgeRefusesOtherSites is DNS rebinding and cross-site requests against `ensemble mcp
// --http`: a Host that is not this computer's and an Origin other than the bridge's own get 403,
// with or without its token, WebSocket-style upgrades included; the token is compared whole.
func TestHTTPBridgeRefusesOtherSites(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	for _, token := range []string{"", "s3cret"} {
		hs := httptest.NewServer(bridge.HTTPHandler(srv, token))
		host := strings.TrimPrefix(hs.URL, "http://")
		port := host[strings.LastIndex(host, ":")+1:]
		other := "http://127.0.0.1:1"
		if port == "1" {
			other = "http://127.0.0.1:2"
		}
		upgrade := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket"}
		for _, tc := range []struct {
			name string
			hdr  map[string]string
			want int
		}{
			{"foreign host", map[string]string{"Host": "evil.example"}, 403},
			{"foreign host with port", map[string]string{"Host": "evil.example:" + port}, 403},
			{"loopback-looking host", map[string]string{"Host": "127.0.0.1.evil.example:" + port}, 403},
			{"localhost-looking host", map[string]string{"Host": "localhost.evil.example"}, 403},
			{"foreign origin", map[string]string{"Origin": "http://evil.example"}, 403},
			{"null origin", map[string]string{"Origin": "null"}, 403},
			{"another port", map[string]string{"Origin": other}, 403},
			{"another scheme", map[string]string{"Origin": "https://" + host}, 403},
			{"upgrade from another site", merge(upgrade, map[string]string{"Origin": "http://evil.example"}), 403},
			{"upgrade to a foreign host", merge(upgrade, map[string]string{"Host": "evil.example"}), 403},
			{"own origin", map[string]string{"Origin": hs.URL}, 0},
		} {
			t.Run(tc.name+", token "+token, func(t *testing.T) {
				req, _ := http.NewRequest("POST", hs.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				for k, v := range tc.hdr {
					if k == "Host" {
						req.Host = v
					} else {
						req.Header.Set(k, v)
					}
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				switch {
				case tc.want != 0 && resp.StatusCode != tc.want:
					t.Errorf("%d, want %d", resp.StatusCode, tc.want)
				case tc.want == 0 && (resp.StatusCode == 401 || resp.StatusCode == 403):
					t.Errorf("its own origin refused: %d", resp.StatusCode)
				}
			})
		}
		if token != "" {
			for _, got := range []string{"s3cre", "s3cret2", "S3CRET", ""} {
				req, _ := http.NewRequest("POST", hs.URL+"/mcp", strings.NewReader(`{}`))
				req.Header.Set("Authorization", "Bearer "+got)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 401 {
					t.Errorf("token %q: %d, want 401", got, resp.StatusCode)
				}
			}
		}
		hs.Close()
	}
}

func merge(a, b map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}
