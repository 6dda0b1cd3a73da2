package bridge

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/runtime/httpin"
	"github.com/ensemblework/ensemble/runtime/loopback"
)

// DefaultHTTPAddr is where `ensemble mcp --http` listens.
const DefaultHTTPAddr = "127.0.0.1:4010"

// MinHTTPToken is the shortest CONTEXT_BRIDGE_HTTP_TOKEN the HTTP bridge takes: every process on
// the computer can reach its port, so the token is all that stands between them and the key.
const MinHTTPToken = 16

// maxHTTPBody caps a message to the HTTP bridge: a 20 MB file to upload, in base64, with the
// JSON-RPC around it (the runtime's own cap on an upload).
const maxHTTPBody = 28 << 20

// CheckHost refuses a listening host other than this computer's loopback names: the bridge holds
// the key, so it must not be reachable from another machine.
func CheckHost(host string) error {
	switch host {
	case "127.0.0.1", "localhost", "::1":
		return nil
	}
	return fmt.Errorf("CONTEXT_BRIDGE_HOST is %q; the context bridge listens only on 127.0.0.1, localhost or ::1, so that no other computer can use its key", host)
}

// CheckHTTPToken refuses a token the HTTP bridge would not be safe behind: none, or a short one.
func CheckHTTPToken(token string) error {
	switch {
	case token == "":
		return errors.New("ensemble mcp --http needs a token, since any program on this computer can reach its port: set CONTEXT_BRIDGE_HTTP_TOKEN to a random secret (such as the output of `openssl rand -hex 32`) and give it to the MCP client as Authorization: Bearer")
	case len(token) < MinHTTPToken:
		return fmt.Errorf("CONTEXT_BRIDGE_HTTP_TOKEN is %d characters; use a random secret of at least %d (such as the output of `openssl rand -hex 32`)", len(token), MinHTTPToken)
	}
	return nil
}

// HTTPHandler serves the bridge's MCP server over Streamable HTTP at /mcp. Every request must carry
// token as a bearer token; one that [CheckHTTPToken] refuses lets no request in. It takes what
// the runtime's own API takes, through the same checks (package httpin): a Host that is this
// computer with a numeric port (DNS rebinding), no Origin but its own (a web page), and a body
// that is JSON in UTF-8, without NUL characters or a field given twice.
func HTTPHandler(srv *mcp.Server, token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	tokenErr := CheckHTTPToken(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, err := httpin.Host(r.Host); err != nil || !loopback.Host(name) {
			http.Error(w, "This address is not one the context bridge answers on; use http://127.0.0.1.", http.StatusForbidden)
			return
		}
		// The bridge serves plain HTTP only, so its own origin is http://<the Host it was sent to>.
		if o := r.Header.Get("Origin"); o != "" && !httpin.SameOrigin(o, "http", r.Host) {
			http.Error(w, "Requests from another site are refused.", http.StatusForbidden)
			return
		}
		got, ok := httpin.Bearer(r.Header)
		if tokenErr != nil || !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ensemble-context-bridge"`)
			http.Error(w, "This context bridge needs its token (CONTEXT_BRIDGE_HTTP_TOKEN) as Authorization: Bearer.", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			raw, err := httpin.ReadBody(w, r, maxHTTPBody)
			if err == nil {
				err = httpin.CheckJSON(raw)
			}
			if err != nil {
				status := http.StatusBadRequest
				var he *httpin.Error
				if errors.As(err, &he) {
					status = he.Status
				}
				http.Error(w, err.Error(), status)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(raw))
		}
		mux.ServeHTTP(w, r)
	})
}
