package bridge

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/runtime/loopback"
)

// DefaultHTTPAddr is where `ensemble mcp --http` listens.
const DefaultHTTPAddr = "127.0.0.1:4010"

// CheckHost refuses a listening host other than this computer's loopback names: the bridge holds
// the key, so it must not be reachable from another machine.
func CheckHost(host string) error {
	switch host {
	case "127.0.0.1", "localhost", "::1":
		return nil
	}
	return fmt.Errorf("CONTEXT_BRIDGE_HOST is %q; the context bridge listens only on 127.0.0.1, localhost or ::1, so that no other computer can use its key", host)
}

// HTTPHandler serves the bridge's MCP server over Streamable HTTP at /mcp. Like the runtime's own
// guard it refuses a Host that is not this computer (DNS rebinding) and an Origin other than its
// own (a web page); with token set, every request must carry it as a bearer token.
func HTTPHandler(srv *mcp.Server, token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopback.Host(r.Host) {
			http.Error(w, "This address is not one the context bridge answers on; use http://127.0.0.1.", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			// The bridge serves plain HTTP only, so its own origin is http://<the Host it was sent to>.
			u, err := url.Parse(o)
			if err != nil || u.Scheme != "http" || !strings.EqualFold(u.Host, r.Host) {
				http.Error(w, "Requests from another site are refused.", http.StatusForbidden)
				return
			}
		}
		if token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="ensemble-context-bridge"`)
				http.Error(w, "This context bridge needs its token (CONTEXT_BRIDGE_HTTP_TOKEN) as Authorization: Bearer.", http.StatusUnauthorized)
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
}
