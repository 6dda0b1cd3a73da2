// Package api is the runtime's local HTTP API: JSON under /api, the live event stream, browser
// sign-in, and the web UI.
//
// Every request passes the guard (a loopback Host, the runtime's own Origin); every route but
// Every request passes the guard (a loopback Host, the runtime's own Origin); every route but
// /api/health, sign-in and the UI's files needs the launch token (Authorization: Bearer) or the
// browser session cookie a one-time sign-in link sets, which goes only with requests under the
// session's own path (/s/<id>/api/…; see auth.go). What the relay carries is served by PhoneServer
// under the phone rules instead (phone.go): a paired phone's cookie only.
package api

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ensemblework/ensemble/engines/detect"
	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/profiles"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/sessions"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/terminal"
)

// Options configure a Server.
type Options struct {
	Version string
	// Command is how a person at this computer runs Ensemble ("ensemble", or the binary's path when
	// that is not on the PATH): the sign-in pages' "run `… open`" name it. "ensemble" when empty.
	Command string
	Token   LaunchToken
	// Hosts are extra host names the runtime answers to besides loopback ones (a relay hostname).
	Hosts []string
	// Relay is the runtime's name on its relay (<id>.<relay-domain>), served over TLS only, with
	// exact Origin checks, on the connections PhoneServer serves; empty while phone access is off.
	Relay string
	// Phones is the tunnel to the relay: its status, and a new address; nil while phone access is off.
	Phones PhoneAccess
	// UI is the built web UI; nil or without index.html, a page says how to build it.
	UI fs.FS
	// Keepalive is how often an idle event stream gets a comment line; 15 s when zero.
	Keepalive time.Duration
	// Needs is Needs me; its routes are mounted when it is set.
	Needs *needs.Service
	// Agents says which coding agents this computer has; its route is mounted when it is set.
	Agents *detect.Service
	// Jobs runs agents on tasks; its routes are mounted when it is set.
	Jobs *jobs.Service
	// Bridge is the context bridge's keys and answers; its routes are mounted when it is set.
	Bridge *Bridge
	// Profiles are the saved run profiles; their routes are mounted, and assign takes "profile",
	// when it is set (with Jobs).
	Profiles *profiles.Service
	// Sessions are the agent sessions derived from runs; their routes are mounted when it is set.
	Sessions *sessions.Service
	// Terminals are the person's shells; their routes are mounted when it is set.
	Terminals *terminal.Manager
	// Assistant answers assistant turns; its route is mounted when it is set.
	Assistant *assistant.Service
	// Nodes serves /api/node/…; nil, those routes answer 404.
	Nodes *node.Service
	// Secrets are the keys and secrets kept on this computer; their routes (and Settings' model
	// providers) are mounted when it is set.
	Secrets *secrets.Store
	// OllamaURL is where Settings looks for Ollama; models.OllamaURL when empty.
	OllamaURL string
}

// Server serves the API.
type Server struct {
	opts     Options
	log      *slog.Logger
	store    *store.Store
	bus      *events.Bus
	records  *records.Service
	links    links
	sessions browserSessions
	pairs    pairing
	phones   phoneSessions
	relay    atomic.Pointer[string] // the relay name, which rotation changes
	now      func() time.Time

	phoneLimits phoneLimits
}

// New returns a Server.
func New(opts Options, log *slog.Logger, st *store.Store, bus *events.Bus, rec *records.Service) *Server {
	if opts.Keepalive == 0 {
		opts.Keepalive = 15 * time.Second
	}
	s := &Server{opts: opts, log: log, store: st, bus: bus, records: rec,
		links: links{codes: map[string]signinCode{}}, now: time.Now, phoneLimits: defaultPhoneLimits}
	s.phones.wait = s.phoneLimits.endWait
	if opts.Relay != "" {
		s.relay.Store(&opts.Relay)
	}
	return s
}

// write runs fn in a write transaction through the ledger, as every write to the database goes:
// one writer at a time, so a pairing or a kept sign-in never races a record change for the
// database's write lock.
func (s *Server) write(ctx context.Context, fn func(*ledger.Tx) error) error {
	return s.records.Ledger().Exec(ctx, fn)
}

// person is the actor of every write made through the API with the launch token or a browser session.
var person = ledger.Actor{Kind: ledger.Person}

// Handler returns the routes, behind the guard.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, s.authed(h)) }

	mux.HandleFunc("GET /api/health", s.health)
	mux.HandleFunc("GET /auth/signin", s.signinPage)
	mux.HandleFunc("POST /auth/signin", s.signin)
	api("POST /api/signin-links", s.newSigninLink)
	api("POST /api/signout", s.signout)

	api("GET /api/tasks/states", s.taskStates)
	api("GET /api/tasks", s.listTasks)
	mountCollection(s, api, "tasks", taskCollection{s}, nil)
	mountCollection(s, api, "projects", s.records.Projects(), s.records.Projects().List)
	mountCollection(s, api, "people", s.records.People(), s.records.People().List)
	mountCollection(s, api, "repos", s.records.Repos(), s.records.Repos().List)
	mountCollection(s, api, "pages", s.records.Pages(), s.records.Pages().List)

	api("GET /api/trash", s.trash)
	api("POST /api/trash/{kind}/{id}/restore", s.restore)
	api("DELETE /api/trash/{kind}/{id}", s.purge)
	api("POST /api/undo", s.undo)
	api("POST /api/redo", s.redo)
	api("GET /api/ledger", s.ledger)
	api("GET /api/events", s.events)       // [since] or Last-Event-ID, [kinds] [subject]
	api("GET /api/events/log", s.eventLog) // [after] [limit] [kinds] [subject]
	s.mountNeeds(api)
	s.mountJobs(mux, api)
	s.mountAgents(api)
	s.mountSessions(api)
	s.mountTerminals(api)
	s.mountAssistant(api)
	s.mountNodes(api)
	s.mountTakeovers(api)
	s.mountRoutineHook(mux)
	if s.opts.Assistant != nil {
		// The MCP server of assistant turns on the person's plan: its own secret per turn, not the launch token.
		mux.Handle("/mcp/assistant", s.opts.Assistant.PlanMCP())
	}
	s.mountBridge(mux, api)
	s.mountPair(mux, api)
	s.mountSecrets(api)
	s.mountGitCredential(mux)

	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "There is no such API route.")
	})
	mux.Handle("/", s.ui())
	return sessionPaths(s.guard(mux))
}

// health answers anyone that the runtime is up; only those signed in learn its version.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{"ok": true}
	if s.signedIn(r) {
		out["version"] = s.opts.Version
	}
	writeJSON(w, http.StatusOK, out)
}
