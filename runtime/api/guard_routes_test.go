package api

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/detect"
	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/sessions"
	"github.com/ensemblework/ensemble/runtime/terminal"
)

// How a route lets a caller in. Every route but the public ones needs one of these.
const (
	byToken    = "launch token or session cookie" // s.authed
	byKey      = "ens_ key"                       // s.keyed: the context bridge
	byRun      = "run secret"                     // /mcp/run
	byTurn     = "turn secret"                    // /mcp/assistant
	byRelay    = "pairing secret via the relay"   // POST /api/pair: 403 anywhere else
	public     = "public"                         // answers without a credential
	noSuchPath = "404 before any credential"      // the /api/ fallback: says nothing but 404
	byHook     = "a routine's own webhook token"  // POST /api/node/hooks/routines/{id}: 403 without it
)

// routeAccess is every route Handler mounts with what it needs. A route added without an entry here
// fails TestEveryRouteIsGuarded, so each new route is decided on, not left open by accident.
var routeAccess = map[string]string{
	"GET /api/health":                    public,
	"GET /auth/signin":                   public, // takes a one-time code; see TestSigninLinkIsOneTime
	"POST /auth/signin":                  public, // the sign-in page's form, with the one-time code; see TestSigninCodeLifetime
	"GET /pair":                          public, // the pairing page: static, its script posts the secret
	"GET /pair.js":                       public,
	"/":                                  public, // the UI's files
	"/api/":                              noSuchPath,
	"POST /api/pair":                     byRelay,
	"/mcp/run":                           byRun,
	"/api/engine/git-credential":         byRun, // the run's own git token
	"/mcp/assistant":                     byTurn,
	"/api/bridge/":                       byKey,
	"POST /api/bridge/*":                 byKey,
	"GET /api/bridge/*":                  byKey,
	"PATCH /api/bridge/*":                byKey,
	"POST /api/node/hooks/routines/{id}": byHook, // see TestRoutineWebhookOnce
}

// routeOf is the key in routeAccess a pattern falls under.
func routeOf(pattern string) string {
	if a, ok := routeAccess[pattern]; ok && a != "" {
		return pattern
	}
	if m, p, ok := strings.Cut(pattern, " "); ok && strings.HasPrefix(p, "/api/bridge/") {
		return m + " /api/bridge/*"
	}
	return pattern
}

// mountedPatterns reads the package's source for every pattern passed to mux.Handle,
// mux.HandleFunc, api, route, read and mountCollection, so a route cannot be missed by the table.
func mountedPatterns(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	var out []string
	lit := func(e ast.Expr) (string, bool) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(b.Value)
		return s, err == nil
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			var fn string
			switch x := call.Fun.(type) {
			case *ast.Ident:
				fn = x.Name
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "mux" {
					fn = "mux." + x.Sel.Name
				}
			case *ast.IndexListExpr:
				if id, ok := x.X.(*ast.Ident); ok {
					fn = id.Name
				}
			}
			switch fn {
			case "api", "route", "mux.Handle", "mux.HandleFunc":
				p, ok := lit(call.Args[0])
				if !ok {
					// The helpers' own bodies pass their parameter on; mountCollection's and read's
					// patterns are built from a literal, taken below.
					if id, isID := call.Args[0].(*ast.Ident); isID && id.Name == "pattern" {
						return true
					}
					if _, isSum := call.Args[0].(*ast.BinaryExpr); isSum && (fn == "api" || fn == "route") {
						return true
					}
					t.Errorf("%s: a pattern that is not a literal: %s", fset.Position(call.Pos()), fn)
					return true
				}
				out = append(out, p)
			case "read":
				if p, ok := lit(call.Args[0]); ok {
					out = append(out, "POST /api/bridge/"+p)
				}
			case "mountCollection":
				if len(call.Args) >= 3 {
					if p, ok := lit(call.Args[2]); ok {
						base := "/api/" + p
						for _, m := range []string{"GET " + base, "POST " + base, "GET " + base + "/{id}", "PATCH " + base + "/{id}", "DELETE " + base + "/{id}"} {
							out = append(out, m)
						}
					}
				}
			}
			return true
		})
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fullFixture is a fixture whose Server has every optional part set, so every mount* adds its
// routes.
func fullFixture(t *testing.T) *fixture {
	t.Helper()
	f, _ := newJobsFixture(t) // runs and run profiles
	dir := t.TempDir()
	w := ledger.New(f.store, f.bus)
	o := &f.api.opts
	o.Needs = needs.New(f.store, w)
	o.Agents = detect.New(map[string]engines.Driver{"standin": standIn{}}, dir)
	o.Sessions = sessions.New(sessions.Options{Store: f.store, Writer: w, DataDir: dir, Log: slog.New(slog.DiscardHandler)})
	o.Assistant = assistant.New(assistant.Config{Records: f.api.records, Store: f.store, Writer: w, Needs: o.Needs,
		Log: slog.New(slog.DiscardHandler), Providers: func(p, base string) (models.Provider, error) {
			return nil, fmt.Errorf("No model is reached in this test.")
		}})
	o.Nodes = node.New(node.Config{Store: f.store, Writer: w, Bus: f.bus, Assistant: o.Assistant, Records: f.api.records, Needs: o.Needs,
		Log: slog.New(slog.DiscardHandler)}) // its turns are not started
	t.Cleanup(o.Nodes.Close)
	terms := terminal.New(terminal.Options{Max: 1, Home: dir}) // none is started
	t.Cleanup(terms.Close)
	o.Terminals = terms
	addSecrets(t, f, "")
	addBridge(t, f) // sets the handler with everything above mounted
	return f
}

// fullServer is fullFixture's server and launch token.
func fullServer(t *testing.T) (*httptest.Server, LaunchToken) {
	f := fullFixture(t)
	return f.srv, f.token
}

var wildcard = regexp.MustCompile(`\{[a-z]+\}`)

// requestFor is a request a pattern matches: its method (POST where it names none) and its path
// with each wildcard filled in.
func requestFor(pattern string) (method, path string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = http.MethodPost, pattern
	}
	path = wildcard.ReplaceAllStringFunc(path, func(w string) string {
		if w == "{kind}" {
			return "tasks"
		}
		return "X1"
	})
	if strings.HasSuffix(path, "/") {
		path += "anything"
	}
	return method, path
}

// TestEveryRouteIsGuarded walks every route Handler mounts: without a credential each answers 401
// (but the public ones and those with their own rules); the launch token is taken after "Bearer" in
// any case of the word; and with the launch token each refuses a Host that is not this computer or
// whose port is not a number, and an Origin that is not exactly the runtime's own (one with a user
// or a path included), with 403, WebSocket upgrades included.
func TestEveryRouteIsGuarded(t *testing.T) {
	srv, tok := fullServer(t)
	patterns := mountedPatterns(t)
	if len(patterns) < 100 {
		t.Fatalf("found only %d routes in the source; the walk is broken", len(patterns))
	}
	otherPort := "http://127.0.0.1:1"
	if strings.HasSuffix(srv.URL, ":1") {
		otherPort = "http://127.0.0.1:2"
	}
	send := func(t *testing.T, method, path string, hdr map[string]string) int {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := c.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	bearer := "Bearer " + tok.Reveal()
	srvPort, _ := strconv.Atoi(strings.Split(srv.URL, ":")[2])
	for _, p := range patterns {
		access := routeAccess[routeOf(p)]
		if access == "" {
			access = byToken
			if !strings.HasPrefix(p, "GET /api/") && !strings.HasPrefix(p, "POST /api/") && !strings.HasPrefix(p, "PUT /api/") &&
				!strings.HasPrefix(p, "PATCH /api/") && !strings.HasPrefix(p, "DELETE /api/") {
				t.Errorf("%s: a route outside /api with no entry in routeAccess; decide what it needs", p)
				continue
			}
		}
		method, path := requestFor(p)
		t.Run(p, func(t *testing.T) {
			// Without a credential.
			want := map[string]int{byToken: 401, byKey: 401, byRun: 401, byTurn: 401, byRelay: 403, noSuchPath: 404, byHook: 403}[access]
			if want != 0 {
				if got := send(t, method, path, nil); got != want {
					t.Errorf("no credential: %d, want %d (%s)", got, want, access)
				}
				// A session cookie that is not one, and the launch token where it is not the credential.
				forged := path
				if strings.HasPrefix(path, "/api/") {
					forged = "/s/x1" + path // where a browser session's cookie is taken
				}
				if got := send(t, method, forged, map[string]string{"Cookie": sessionCookie(srvPort) + "=forged"}); got != want && !(forged != path && got == 404) {
					t.Errorf("forged cookie: %d, want %d", got, want)
				}
				if access != byToken {
					if got := send(t, method, path, map[string]string{"Authorization": bearer}); got != want {
						t.Errorf("the launch token on a route that does not take it: %d, want %d", got, want)
					}
				}
			}
			// The scheme's name is matched in any case; the token is not.
			if access == byToken {
				for _, scheme := range []string{"bearer", "BEARER", "bEaReR"} {
					if got := send(t, method, path, map[string]string{"Authorization": scheme + " " + tok.Reveal()}); got == 401 || got == 403 {
						t.Errorf("Authorization: %s <launch token>: %d", scheme, got)
					}
				}
				if got := send(t, method, path, map[string]string{"Authorization": "Bearer " + strings.ToUpper(tok.Reveal())}); got != 401 {
					t.Errorf("the launch token in another case: %d, want 401", got)
				}
			}
			// The guard, with the launch token, for every route.
			port := strings.Split(srv.URL, ":")[2]
			own := strings.TrimPrefix(srv.URL, "http://")
			for _, h := range []map[string]string{
				{"Host": "evil.example"},
				{"Host": "evil.example:" + port},
				{"Host": "127.0.0.1:" + port + "x"},
				{"Host": "127.0.0.1:+" + port},
				{"Host": "127.0.0.1:0x" + port},
				{"Host": "127.0.0.1:99999"},
				{"Host": "127.0.0.1:"},
				{"Origin": "http://evil@" + own},
				{"Origin": "http://user:pass@" + own},
				{"Origin": srv.URL + "/"},
				{"Origin": srv.URL + "/api/tasks"},
				{"Origin": srv.URL + "?x=1"},
				{"Host": "127.0.0.1.evil.example"},
				{"Host": "localhost.evil.example"},
				{"Origin": "http://evil.example"},
				{"Origin": "null"},
				{"Origin": otherPort},
				{"Origin": "https://" + strings.TrimPrefix(srv.URL, "http://")},
				{"Origin": "http://evil.example", "Connection": "Upgrade", "Upgrade": "websocket",
					"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="},
				{"Origin": otherPort, "Connection": "Upgrade", "Upgrade": "websocket",
					"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="},
				{"Host": "evil.example", "Connection": "Upgrade", "Upgrade": "websocket",
					"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="},
			} {
				h["Authorization"] = bearer
				m := method
				if h["Upgrade"] != "" {
					m = http.MethodGet
				}
				if got := send(t, m, path, h); got != http.StatusForbidden {
					t.Errorf("%v: %d, want 403", h, got)
				}
			}
			if strings.HasPrefix(path, "/api/") {
				for _, site := range []string{"cross-site", "same-site"} {
					if got := send(t, method, path, map[string]string{"Authorization": bearer, "Sec-Fetch-Site": site}); got != http.StatusForbidden {
						t.Errorf("Sec-Fetch-Site %s: %d, want 403", site, got)
					}
				}
			}
		})
	}
	// Every entry of the table names a route that still exists.
	for k := range routeAccess {
		if !slices.ContainsFunc(patterns, func(p string) bool { return routeOf(p) == k }) {
			t.Errorf("routeAccess names %q, which Handler no longer mounts", k)
		}
	}
}

// TestGuardRoutesWalkSeesTheSource keeps mountedPatterns honest: it must read this package's
// source, so the test runs from the package folder.
func TestGuardRoutesWalkSeesTheSource(t *testing.T) {
	if _, err := os.Stat("server.go"); err != nil {
		t.Fatal("the route walk reads server.go from the package folder:", err)
	}
}
