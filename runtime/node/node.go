// Package node is Ensemble Node (spec 002): the person's persistent AI teammates. A node has a
// name, a handle, a role, a charter, a look, a model and a memory; the person talks to it in its
// DM or in a crew of nodes. Who answers a message is a pure function (WhoSpeaks); each answer is a
// turn in a durable queue in SQLite (turns.go), run as the assistant's own loop with the node's
// persona and tools (brain.go), so a node never acts twice after a crash or a sleep. What a node
// needs from the person is a card in the chat, mirrored on Needs me (cards.go).
package node

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/assistant"
	"github.com/ensemblework/ensemble/runtime/computer"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/jobs"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/needs"
	"github.com/ensemblework/ensemble/runtime/records"
	"github.com/ensemblework/ensemble/runtime/secrets"
	"github.com/ensemblework/ensemble/runtime/sessions"
	"github.com/ensemblework/ensemble/runtime/store"
	"github.com/ensemblework/ensemble/runtime/terminal"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// Limits of spec 002 §3, §5.1 and §10.
const (
	MaxNodes       = 24
	MaxCrewNodes   = 24
	MaxMemories    = 200
	MaxMemoryLen   = 500
	MaxBodyLen     = 20000
	MaxNameLen     = 60
	MaxCharterLen  = 6000
	DefaultTalk    = 4
	DefaultWork    = 4
	DefaultPerNode = 3
	// CardWait is how long a node's call waits for its card's answer before its turn parks.
	CardWait = 3 * time.Minute
	// QueuedMaxAge: a queued turn older than this is dropped rather than run late.
	QueuedMaxAge = time.Hour
)

// RetryDelays are when a turn the model's rate limit cut off before any tool ran is tried again.
var RetryDelays = []time.Duration{8 * time.Second, 30 * time.Second, 90 * time.Second}

// Config sets up a Service.
type Config struct {
	Store     *store.Store
	Writer    *ledger.Writer
	Bus       *events.Bus
	Assistant *assistant.Service
	Records   *records.Service
	// Needs mirrors the node's cards on Needs me; nil, cards are answered in the chat only.
	Needs *needs.Service
	// Jobs runs the person's coding agents: the sessions nodes drive and their plans' steps (spec
	// 002 §8); nil, nodes have no session tools. Sessions lists and scores agent sessions, Runs
	// checks agents and fills run profiles; either may be nil.
	Jobs     *jobs.Service
	Sessions *sessions.Service
	// SecretHTTP makes a node's secret_http call (runtime/secrets' Store.HTTP); nil leaves the
	// tool off.
	SecretHTTP func(ctx context.Context, req secrets.HTTPRequest, by string) (secrets.HTTPAnswer, error)
	Runs       tools.Runs
	// SecretEnv gives the values of the saved secrets named, for one of the node's commands'
	// environment (computer_run's secrets), ledgering each use; nil refuses them.
	SecretEnv func(ctx context.Context, names []string, by string) (map[string]string, error)
	// Computer runs the node's own tools on this computer (spec 002 §8.13); nil leaves them off.
	Computer *computer.Computer
	// Terminals runs the nodes' own shells (terminaltools.go): a Manager of their own, so they
	// never show among the person's terminals; nil (or no Computer) leaves the terminal tools
	// answering that there are none. Their screens hide saved secrets as Computer does.
	Terminals *terminal.Manager
	// Browser is the Chromium broker the nodes browse and capture with (browsertools.go,
	// webtask.go), and whose tabs their owner watches and takes over (browserlive.go); spec 002
	// §8.16, *browser.Broker. nil leaves the browser tools and live views off. RefuseURL is why an
	// address is Ensemble itself (its own UI, its relay), or "", asked before a node's page opens.
	Browser   Browser
	RefuseURL func(url string) string
	Now       func() time.Time
	Log       *slog.Logger
	// Talk and Work are the conversation and work turns that run at once; PerNode the work turns
	// one node runs at once. Zero takes the defaults (4, 4, 3).
	Talk, Work, PerNode int
	// CardWait overrides CardWait (tests).
	CardWait time.Duration
	// RetryDelays overrides RetryDelays (tests).
	RetryDelays []time.Duration
	// AssignGrace overrides AssignGrace, the wait before a task's turn (tests).
	AssignGrace time.Duration
	// RoutineTick overrides RoutineTick (tests).
	RoutineTick time.Duration

	// OpenCLISignIn opens a page a node's command asked a browser for (devicecodes.go); nil opens
	// it in the node's own tab with its sign-in card where Browser is set (tests override it).
	OpenCLISignIn OpenCLISignIn
}

// Service keeps the nodes, their rooms and messages, and runs their turns.
type Service struct {
	cfg Config
	log *slog.Logger

	kick chan struct{} // wakes the engine: a turn was queued or ended

	mu      sync.Mutex                 // guards the following
	running map[string]*runningTurn    // by lane
	waits   map[string]chan cardAnswer // a card's waiting call, by card message id
	grants  map[string][]grant         // computer cards' Once answers not used yet, by node
	uploads map[string]upload          // files attached in a chat, waiting for their message (attachments.go)

	snaps browser.RefNames // the last snapshot a node read of each tab, by work and tab (browseract.go)

	sessMu sync.Mutex // orders the changes to agent sessions' queues (sessions.go)

	outside   outsideWatches // what live node runs change outside their folders (outsidewatch.go)
	terms     nodeTerminals  // the nodes' open terminals (terminaltools.go)
	takeovers takeoverSet    // the owner's views of them and of tabs (takeovers.go)
	tabs      liveTabs       // the tabs with a live card or a view (browserlive.go)

	life    context.Context
	endLife context.CancelFunc
	wg      sync.WaitGroup
}

// New returns a Service; Start runs its turns.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Talk <= 0 {
		cfg.Talk = envInt("ENSEMBLE_NODE_TALK_PARALLEL", DefaultTalk)
	}
	if cfg.Work <= 0 {
		cfg.Work = envInt("ENSEMBLE_NODE_WORK_PARALLEL", DefaultWork)
	}
	if cfg.PerNode <= 0 {
		cfg.PerNode = envInt("ENSEMBLE_NODE_WORK_PER_NODE", DefaultPerNode)
	}
	if cfg.CardWait <= 0 {
		cfg.CardWait = CardWait
	}
	if cfg.RetryDelays == nil {
		cfg.RetryDelays = RetryDelays
	}
	life, end := context.WithCancel(context.Background())
	return &Service{cfg: cfg, log: cfg.Log, kick: make(chan struct{}, 1), running: map[string]*runningTurn{},
		waits: map[string]chan cardAnswer{}, grants: map[string][]grant{}, uploads: map[string]upload{}, life: life, endLife: end}
}

// Close stops the turns running now (they rerun or resume at the next start) and waits for them.
func (s *Service) Close() {
	s.endLife()
	s.wg.Wait()
	s.outside.forget(time.Time{})
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }
