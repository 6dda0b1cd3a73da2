package bridge_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/bridge"
)

const httpToken = "s3cret-5b1e9c2f7d"

// TestHTTPBridgeRefusesOtherSites is DNS rebinding and cross-site requests against `ensemble mcp
// --http`: a Host that is not this computer's or whose port is not a number, and an Origin other
// than the bridge's own (one with a user or a path included) get 403, WebSocket-style upgrades
// included; the token is compared whole, its scheme's name in any case. A handler given no token,
// or a short one, lets nothing in.
func TestHTTPBridgeRefusesOtherSites(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	for _, token := range []string{"", "short", httpToken} {
		hs := httptest.NewServer(bridge.HTTPHandler(srv, token))
		host := strings.TrimPrefix(hs.URL, "http://")
		port := host[strings.LastIndex(host, ":")+1:]
		other := "http://127.0.0.1:1"
		if port == "1" {
			other = "http://127.0.0.1:2"
		}
		send := func(t *testing.T, hdr map[string]string) int {
			t.Helper()
			req, _ := http.NewRequest("POST", hs.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+token)
			for k, v := range hdr {
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
			return resp.StatusCode
		}
		if token != httpToken {
			t.Run("token "+token, func(t *testing.T) {
				if got := send(t, nil); got != 401 {
					t.Errorf("a bridge with token %q answered %d, want 401", token, got)
				}
			})
			hs.Close()
			continue
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
			{"port not a number", map[string]string{"Host": "127.0.0.1:" + port + "x"}, 403},
			{"port with a sign", map[string]string{"Host": "127.0.0.1:+" + port}, 403},
			{"port out of range", map[string]string{"Host": "127.0.0.1:99999"}, 403},
			{"empty port", map[string]string{"Host": "127.0.0.1:"}, 403},
			{"foreign origin", map[string]string{"Origin": "http://evil.example"}, 403},
			{"null origin", map[string]string{"Origin": "null"}, 403},
			{"another port", map[string]string{"Origin": other}, 403},
			{"another scheme", map[string]string{"Origin": "https://" + host}, 403},
			{"origin with a user", map[string]string{"Origin": "http://evil@" + host}, 403},
			{"origin with a path", map[string]string{"Origin": hs.URL + "/mcp"}, 403},
			{"origin with a slash", map[string]string{"Origin": hs.URL + "/"}, 403},
			{"upgrade from another site", merge(upgrade, map[string]string{"Origin": "http://evil.example"}), 403},
			{"upgrade to a foreign host", merge(upgrade, map[string]string{"Host": "evil.example"}), 403},
			{"own origin", map[string]string{"Origin": hs.URL}, 0},
			{"bearer in lower case", map[string]string{"Authorization": "bearer " + httpToken}, 0},
			{"BEARER", map[string]string{"Authorization": "BEARER " + httpToken}, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got := send(t, tc.hdr)
				switch {
				case tc.want != 0 && got != tc.want:
					t.Errorf("%d, want %d", got, tc.want)
				case tc.want == 0 && (got == 401 || got == 403):
					t.Errorf("refused: %d", got)
				}
			})
		}
		for _, got := range []string{httpToken[:len(httpToken)-1], httpToken + "2", strings.ToUpper(httpToken), ""} {
			if code := send(t, map[string]string{"Authorization": "Bearer " + got}); code != 401 {
				t.Errorf("token %q: %d, want 401", got, code)
			}
		}
		hs.Close()
	}
}

// TestHTTPBridgeRefusesBadBodies: a message to the HTTP bridge is held to the runtime's rules for a
// JSON body (package httpin, the same code), before the MCP SDK reads it: a field given twice,
// invalid UTF-8, an escaped half of a surrogate pair, a NUL character, a body over the cap or sent
// as another media type are refused with one sentence; a media type in another case is JSON.
func TestHTTPBridgeRefusesBadBodies(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	hs := httptest.NewServer(bridge.HTTPHandler(srv, httpToken))
	defer hs.Close()
	for _, c := range []struct {
		name, ct, body string
		want           int
		says           string
	}{
		{"duplicate", "application/json", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, 400, "given twice"},
		{"duplicate argument", "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1,"a":2}}}`, 400, "given twice"},
		{"invalid UTF-8", "application/json", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}", 400, "UTF-8"},
		{"lone surrogate", "application/json", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}`, 400, "surrogate"},
		{"NUL", "application/json", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"a\u0000"}}`, 400, "NUL"},
		{"oversized", "application/json", `{"x":"` + strings.Repeat("x", 29<<20) + `"}`, 400, "larger than"},
		{"another media type", "text/plain", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 415, "as JSON"},
		{"media type in another case", "Application/JSON; charset=UTF-8", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", hs.URL+"/mcp", strings.NewReader(c.body))
			req.Header.Set("Content-Type", c.ct)
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+httpToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			msg := strings.TrimSpace(string(b))
			if resp.StatusCode != c.want || !strings.Contains(msg, c.says) {
				t.Errorf("%d %q, want %d saying %q", resp.StatusCode, msg, c.want, c.says)
			}
			if c.want != 200 && (strings.Count(msg, ". ") > 0 || !strings.HasSuffix(msg, ".")) {
				t.Errorf("not one sentence: %q", msg)
			}
		})
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
