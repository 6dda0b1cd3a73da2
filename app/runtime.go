package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/detect"
	"github.com/ensemblework/ensemble/frontend"
	"github.com/ensemblework/ensemble/runtime/api"
	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/bridge/keys"
	"github.com/ensemblework/ensemble/runtime/bridge/workspace"
	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/models"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/node"
	"github.com/ensemblework/ensemble/runtime/profiles"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/sessions"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/terminal"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// errAlreadyRunning: another runtime serves the data folder.
var errAlreadyRunning = errors.New("Ensemble is already running")

// runtimeConfig is what starting a runtime needs.
type runtimeConfig struct {
	DataDir string
	// Passphrase gives secret.key's passphrase when it has one; nil asks as askPassphrase does.
	Passphrase func() (string, error)
	Addr       string // where to listen; must be loopback
	Log        *slog.Logger
	// Drivers are the agents runs can use; nil for the ones this build has (tests set their own).
	Drivers map[string]engines.Driver
	// Relay turns on phone access through a relay; nil leaves it off.
	Relay *relayConfig
	// Notify shows a desktop notification; notify (the OS's own tool) when nil.
	Notify func(ctx context.Context, title, body string)
	// Command is how the sign-in pages name this runtime's commands (openCommand); selfCommand()
	// when empty.
	Command string
	// Browser is the Chromium broker nodes and runs browse with; nil makes the real one (tests
	// set a fake).
	Browser node.Browser
}

// Runtime is a running runtime: its database, event bus, API server and listener. `ensemble serve`
// and the desktop window both start one.
type Runtime struct {
	cfg    runtimeConfig
	store  *store.Store
	bus    *events.Bus
	needs  *needs.Service
	jobs   *jobs.Service
	api    *api.Server
	http   *http.Server
	ln     net.Listener
	phones *phoneAccess // nil while phone access is off
	URL    string
	served chan error

	sessions  *sessions.Service  // agent sessions: listed, deleted, chosen for new runs, cleaned up
	agents    *detect.Service    // which agents this computer has
	terms     *terminal.Manager  // the person's shells
	nodeTerms *terminal.Manager  // the nodes' own shells, never listed with the person's
	assistant *assistant.Service // its turns are stopped and saved before the database closes
	nodes     *node.Service      // its turns stop first: the next start reruns or resumes them
	secrets   *secrets.Store     // keys and run secrets, kept encrypted
	computer  *computer.Computer // nodes' commands: stopped with the runtime
	broker    *browser.Broker    // its Chromiums end with the runtime; nil when a test set a fake
	stop      context.CancelFunc // ends the runtime's own background work
}

// startRuntime opens the data folder and database, listens, writes api.json and serves.
func startRuntime(ctx context.Context, cfg runtimeConfig) (*Runtime, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data folder: %w", err)
	}
	if f, err := readAPIFile(cfg.DataDir); err == nil && healthy(ctx, f.URL) {
		return nil, fmt.Errorf("%w for %s at %s", errAlreadyRunning, cfg.DataDir, f.URL)
	}
	ln, err := listen(cfg.Addr)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, dbPath(cfg.DataDir))
	if err != nil {
		ln.Close()
		return nil, err
	}
	bus := events.NewBus()
	w := ledger.New(st, bus)
	rec := records.New(st, w)
	nd := needs.New(st, w)
	// Decisions left open by a runtime that stopped have no one waiting for them any more.
	if _, err := nd.ExpireOrphans(ctx); err != nil {
		ln.Close()
		st.Close()
		return nil, err
	}
	// Secrets load before runs start and the API serves, so their values are known to the Redactor,
	// and hidden in what runs record, from the start (runs resumed at start-up included).
	pass := cfg.Passphrase
	if pass == nil {
		pass = askPassphrase(os.Stderr)
	}
	sec, err := secrets.New(ctx, secrets.Options{DataDir: cfg.DataDir, Store: st, Writer: w, Passphrase: pass})
	if err != nil {
		ln.Close()
		st.Close()
		return nil, err
	}
	// From here on no log line holds a kept value either, whatever it quotes.
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.Log = slog.New(secrets.HidingHandler(cfg.Log.Handler(), sec.Redactor()))
	drivers := cfg.Drivers
	if drivers == nil {
		drivers = agentDrivers(cfg.Log)
	}
	home, _ := os.UserHomeDir()
	agents := detect.New(drivers, home)
	// The listener's own address, so --addr [::1]:0 or 127.0.0.2:… is where clients go too.
	url := "http://" + ln.Addr().String()
	ss := sessions.New(sessions.Options{Store: st, Writer: w, DataDir: cfg.DataDir, Log: cfg.Log, Drivers: drivers})
	files := rec.Files(filepath.Join(cfg.DataDir, "files"))
	work := workspace.New(st, rec, files)
	// A run reads the person's records around its task with the bridge's own code.
	secretHTTP := func(ctx context.Context, req secrets.HTTPRequest, by string) (secrets.HTTPAnswer, error) {
		return sec.HTTP(ctx, req, by, nil)
	}
	// The browser is made before the services that use it; its sign-ins reach the runs' and the
	// node service once they exist (a sign-in seen done before then has no one waiting for it), and
	// so do the runs' questions of the node service (the person's capture sites).
	var nodesLater atomic.Pointer[node.Service]
	var runSignIns atomic.Pointer[jobs.Service]
	// The relay's name is read when asked: its settings load below.
	refuse := func(u string) string { return refuseEnsemble(ln.Addr().String(), relayName(cfg.Relay))(u) }
	brw := cfg.Browser
	var broker *browser.Broker
	if brw == nil {
		broker = newBroker(cfg.DataDir, refuse, func(work browser.Work, tab string, ok bool, how string) {
			// Each takes only its own works' tabs: runs "run:…", nodes the rest.
			if js := runSignIns.Load(); js != nil {
				js.OnSignIn(work, tab, ok, how)
			}
			if n := nodesLater.Load(); n != nil {
				n.OnSignIn(work, tab, ok, how)
			}
		}, cfg.Log)
		brw = broker
	}
	js := jobs.New(jobs.Options{Browser: brw, RefuseURL: refuse, Store: st, Writer: w, Records: rec, Asker: needsAsker{nd}, DataDir: cfg.DataDir, Sessions: ss,
		Drivers: drivers, Log: cfg.Log, MCPURL: url + "/mcp/run", Ready: agents.Ready, Models: agents.Models,
		Hide: sec.Redactor().Hide, Context: work.Runs(), SecretHTTP: secretHTTP, Secrets: sec, GitHelper: runGitHelper(url), Bus: bus,
		SiteRule: func(ctx context.Context, site string) string { // the nodes keep the person's capture sites
			if n := nodesLater.Load(); n != nil {
				return n.SiteRule(ctx, site)
			}
			return ""
		}})
	runSignIns.Store(js)
	if err := js.Start(ctx); err != nil {
		ln.Close()
		st.Close()
		return nil, err
	}
	token := api.NewLaunchToken()
	bridge := &api.Bridge{Keys: keys.New(st, w), Work: work, Files: files}
	if cfg.Relay == nil {
		if cfg.Relay, err = loadRelayConfig(cfg.DataDir); err != nil {
			ln.Close()
			js.Close()
			st.Close()
			return nil, err
		}
	}
	if cfg.Notify == nil {
		cfg.Notify = notify
	}
	var phones *phoneAccess
	var phoneHost string
	var phoneAPI api.PhoneAccess // nil, not a nil *phoneAccess, while phone access is off
	if cfg.Relay != nil {
		key, host, err := relayHost(cfg.DataDir, cfg.Relay, sec.Sealer())
		if err != nil {
			ln.Close()
			js.Close()
			st.Close()
			return nil, err
		}
		phones = newPhoneAccess(cfg.DataDir, cfg.Relay, key, sec.Sealer(), w, cfg.Log, cfg.Notify)
		phoneHost, phoneAPI = host, phones
	}
	terms := terminal.New(terminal.Options{Home: home, Log: cfg.Log})
	// The nodes' shells are held by hosts of their own, which outlive this runtime (a long build a
	// node started goes on through an upgrade); the person's stay here.
	nodeTerms := terminal.New(terminal.Options{Max: 24, Home: home, Log: cfg.Log, Host: terminalHost(cfg.DataDir)})
	prof := profiles.New(profiles.Options{Store: st, Writer: w, KnownAgent: js.KnownAgent})
	// One registry for the assistant and the nodes: a node's turn is the assistant's own loop, with
	// the node's tools besides (which the assistant's own turns never offer).
	reg := tools.HubTools()
	for _, t := range node.Tools() {
		if err := reg.Register(t); err != nil {
			panic(err)
		}
	}
	asst := assistant.New(assistant.Config{Records: rec, Store: st, Writer: w, Needs: nd, Log: cfg.Log, Providers: models.Source{Keys: sec}.Provider, Tools: reg,
		Runs:  tools.NewRuns(js, ss, prof),
		Plans: drivers, PlanDir: filepath.Join(cfg.DataDir, "assistant", "chats"), PlanMCPURL: url + "/mcp/assistant", PlanReady: agents.Ready,
		Hide: sec.Redactor().Hide})
	if err := asst.Resume(ctx); err != nil {
		cfg.Log.Warn("assistant: held writes not asked again on Needs me", "err", err)
	}
	places := jobs.NewPlaces(home, cfg.DataDir, url)
	comp := computer.New(computer.Options{Home: home, DataDir: cfg.DataDir, Workspace: places.Workspace, Binary: places.Binary, Runtime: places.Runtime,
		Hide: sec.Redactor().Hide, Log: cfg.Log, Store: st, Writer: w})
	nodes := node.New(node.Config{Store: st, Writer: w, Bus: bus, Assistant: asst, Records: rec, Needs: nd, Log: cfg.Log,
		Jobs: js, Sessions: ss, Runs: tools.NewRuns(js, ss, prof), SecretHTTP: secretHTTP, SecretEnv: sec.ForCommand, Computer: comp,
		Terminals: nodeTerms, Browser: brw, RefuseURL: refuse})
	nodesLater.Store(nodes)
	if err := nodes.Start(ctx); err != nil {
		cfg.Log.Warn("node: the turn queue did not start", "err", err)
	}
	nodes.AdoptTerminals(ctx, nodeTerms.Reattach())   // the last runtime's, still running in their hosts
	go nodes.ResumeLogins(context.WithoutCancel(ctx)) // the tabs waiting for the owner's sign-in, held again
	srv := api.New(api.Options{Version: Version, Command: cmp.Or(cfg.Command, selfCommand()), Token: token, UI: frontend.Dist(), Needs: nd, Jobs: js, Profiles: prof, Bridge: bridge, Sessions: ss, Relay: phoneHost, Phones: phoneAPI, Agents: agents, Assistant: asst, Nodes: nodes, Terminals: terms, Secrets: sec}, cfg.Log, st, bus, rec)
	handler := srv.Handler()
	r := &Runtime{
		cfg: cfg, store: st, bus: bus, needs: nd, computer: comp, jobs: js, sessions: ss, agents: agents, terms: terms, nodeTerms: nodeTerms, api: srv, ln: ln, assistant: asst, nodes: nodes, secrets: sec, broker: broker,
		URL:    url,
		served: make(chan error, 1),
		phones: phones,
		http: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(cfg.Log.Handler(), slog.LevelWarn),
		},
	}
	if err := writeAPIFile(cfg.DataDir, apiFile{URL: r.URL, Port: ln.Addr().(*net.TCPAddr).Port, PID: os.Getpid(), Token: token.Reveal(), Version: Version}); err != nil {
		ln.Close()
		js.Close()
		st.Close()
		return nil, err
	}
	ss.Start() // the clean-up of retired sessions
	go func() { r.served <- r.http.Serve(ln) }()
	bg, stop := context.WithCancel(context.Background())
	r.stop = stop
	go agents.Run(bg) // detection runs agents' own commands: off the start-up path
	if phones != nil {
		// Phones get the same routes and UI, on a server of their own whose connections follow the
		// phone rules, behind TLS that ends here.
		phones.start(srv.PhoneServer(handler, slog.NewLogLogger(cfg.Log.Handler(), slog.LevelDebug)))
	}
	return r, nil
}

// listen binds addr, which must be on loopback; if the port is taken it takes a free one instead.
func listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q is not host:port", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--addr %q is not on this computer; Ensemble listens only on loopback (127.0.0.1); reach it from elsewhere through the relay", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	ln, err2 := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err2 != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// PhoneURL is where a paired phone opens the runtime; "" while phone access is off.
func (r *Runtime) PhoneURL() string {
	if r.phones == nil {
		return ""
	}
	return "https://" + r.phones.Host() + "/"
}

// SigninURL is a fresh one-time link that signs a browser in at once, until the runtime stops: the
// desktop window's own (and the browser tests').
func (r *Runtime) SigninURL() string { return r.api.DirectSigninURL(r.URL) }

// SigninPageURL is a fresh one-time link to the sign-in page, where the person chooses whether the
// browser stays signed in: the link `ensemble serve` prints.
func (r *Runtime) SigninPageURL() string { return r.api.SigninURL(r.URL) }

// Done delivers the server's error if it stops by itself.
func (r *Runtime) Done() <-chan error { return r.served }

// Close stops serving (ending the event streams first, so shutdown does not wait on them), closes
// the database and removes api.json.
func (r *Runtime) Close() error {
	if r.stop != nil {
		r.stop()
	}
	r.bus.Close()
	r.terms.Close()      // its WebSockets end with it: Shutdown does not wait for hijacked connections
	r.nodeTerms.Detach() // the nodes' shells go on in their hosts, for the next runtime
	if r.phones != nil {
		r.phones.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = r.http.Close()
	}
	removeAPIFile(r.cfg.DataDir, os.Getpid())
	r.sessions.Close()
	r.jobs.Close()     // runs record that they were interrupted before the database closes
	r.nodes.Close()    // a node's turn cut off here reruns or resumes at the next start
	r.computer.Close() // and its commands end with it
	if r.broker != nil {
		r.broker.Close() // after the runs and nodes, which close their tabs
	}
	r.assistant.Close(ctx) // a turn still answering is saved as stopped
	return errors.Join(err, r.store.Close())
}

// healthy reports whether a runtime answers at url.
func healthy(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/health", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
