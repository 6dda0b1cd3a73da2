package api

import (
	"net/http"
	"strings"

	"github.com/ensemblework/ensemble/runtime/httpin"
	"github.com/ensemblework/ensemble/runtime/loopback"
)

// guard refuses requests a web page could have made: a Host that is not this computer (DNS
// rebinding) or whose port is not a number, an Origin other than the runtime's own (one with a user
// or a path included), and browser requests the browser itself marks
// as coming from another site. The runtime binds to loopback only, so these are the only ways a page
// the person visits could reach it.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if phoneOf(r) != nil { // it came through the relay, whatever its Host says
			if s.phoneAllowed(w, r) {
				next.ServeHTTP(w, r)
			}
			return
		}
		if name, err := httpin.Host(r.Host); err != nil || !loopback.Host(name) && !s.allowedHost(name) {
			writeError(w, http.StatusForbidden, "This address is not one Ensemble answers on; open it at http://127.0.0.1 or http://localhost.")
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r) {
			writeError(w, http.StatusForbidden, "Requests from another site are refused.")
			return
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" && strings.HasPrefix(r.URL.Path, "/api/") {
			writeError(w, http.StatusForbidden, "Requests from another site are refused.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// allowedHost reports whether name (a Host header's, without its port) is one of Options.Hosts.
func (s *Server) allowedHost(name string) bool {
	for _, a := range s.opts.Hosts {
		if strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// sameOrigin reports whether the Origin header names exactly the scheme, host and port the request
// was sent to. Another port on localhost is another origin (and another program).
func sameOrigin(origin string, r *http.Request) bool {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return httpin.SameOrigin(origin, scheme, r.Host)
}

// isRoutineHook reports whether r calls a routine's webhook: a POST from another program (a
// webhook carries no Origin), answered on the routine's own token, not a session's.
func isRoutineHook(r *http.Request) bool {
	id, ok := strings.CutPrefix(r.URL.Path, routineHookPath)
	return ok && r.Method == http.MethodPost && id != "" && !strings.Contains(id, "/")
}

// relayAllowed applies the rules for the runtime's relay name, where the neighbours
// (<other-id>.<relay-domain>) are the same site, so SameSite cookies do not keep their pages out:
// TLS only, HSTS, and every write, event stream and WebSocket upgrade from exactly the runtime's
// relay origin. A same-origin EventSource sends no Origin (Fetch adds it only to CORS-tainted
// requests), so a stream without one must carry Sec-Fetch-Site: same-origin, which browsers set and
// pages cannot.
func (s *Server) relayAllowed(w http.ResponseWriter, r *http.Request) bool {
	if r.TLS == nil {
		writeError(w, http.StatusForbidden, "The relay address is served over HTTPS only.")
		return false
	}
	w.Header().Set("Strict-Transport-Security", "max-age=31536000")
	origin := r.Header.Get("Origin")
	if origin != "" && origin != s.relayOrigin() {
		writeError(w, http.StatusForbidden, "Requests from another site are refused.")
		return false
	}
	write := r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions
	upgrade := r.Header.Get("Upgrade") != ""
	stream := strings.Contains(r.Header.Get("Accept"), "text/event-stream") || r.URL.Path == "/api/events" ||
		strings.HasSuffix(r.URL.Path, "/stream")
	switch {
	case (write || upgrade) && origin != s.relayOrigin() && !isRoutineHook(r):
		writeError(w, http.StatusForbidden, "Requests from another site are refused.")
		return false
	case stream && origin == "" && r.Header.Get("Sec-Fetch-Site") != "same-origin":
		writeError(w, http.StatusForbidden, "Requests from another site are refused.")
		return false
	}
	return true
}
