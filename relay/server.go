package relay

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/hashicorp/yamux"
	"golang.org/x/time/rate"
)

// ServerConfig configures a relay.
type ServerConfig struct {
	// Domain is the relay's own name; runtimes are <id>.<Domain>.
	Domain string
	// TLS serves the relay's own name (autocert's TLSConfig in production, a test certificate in
	// tests). Connections for <id>.<Domain> never touch it.
	TLS *tls.Config
	// JoinSecret makes a private relay: a runtime must present HMAC-SHA256(JoinSecret, id) in hex.
	JoinSecret []byte
	Log        *slog.Logger
	// Debug logs server names; without it the log holds counters and errors only.
	Debug bool

	// StatusToken lets /status answer a request with "Authorization: Bearer <StatusToken>" from
	// anywhere; without it (or another token) /status answers only from the relay's own machine.
	StatusToken string

	HelloTimeout  time.Duration // to read a ClientHello; 10 s
	IdleTimeout   time.Duration // a spliced connection with no bytes either way; 2 min
	WriteTimeout  time.Duration // one write; 10 s
	MaxTunnels    int           // 10,000
	MaxStreams    int           // phone connections per tunnel; 1,000
	MaxConns      int           // connections in all; 50,000
	AcceptPerIP   rate.Limit    // new connections a second from one source; 50
	AcceptBurst   int           // 200
	RetryAfter    time.Duration // what a restarting relay tells runtimes; 2 s
	KeepAlive     time.Duration // yamux keepalive; 15 s
	LoginDeadline time.Duration // the whole login; 10 s

	// A public relay's fair shares. A source is an IPv4 address or an IPv6 /64 (see [Source]): one
	// source with as many free keys as it likes cannot fill the relay with tunnels, nor park
	// connections on its own tunnel, or on another's, to keep phones out.
	MaxConnsPerSource   int // connections open at once from one source, of every kind; 256
	MaxStreamsPerSource int // phone connections from one source to one tunnel; 64
	MaxTunnelsPerSource int // tunnels logged in from one source; 16
}

// Server is the relay: an SNI router for phone connections (Serve) and the HTTP handler of its own
// name (Handler: /v1/tunnel, /status and a landing page).
type Server struct {
	cfg ServerConfig
	log *slog.Logger

	mu      sync.Mutex // guards the following fields
	tunnels map[string]*tunnel
	buckets map[string]*bucket
	closed  bool

	own       *chanListener
	ownHTTP   *http.Server
	conns     chan struct{} // a slot per live connection
	perSource *share        // connections per source
	tunnelsBy *share        // tunnels per source
	stats     stats
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// stats are the counters /status serves.
type stats struct {
	TunnelsLive      atomic.Int64
	TunnelsTotal     atomic.Int64
	TunnelsReplaced  atomic.Int64
	LoginsRefused    atomic.Int64
	ConnsLive        atomic.Int64
	ConnsTotal       atomic.Int64
	ConnsUnknownName atomic.Int64
	ConnsNoTunnel    atomic.Int64
	ConnsRateLimited atomic.Int64
	ConnsOverShare   atomic.Int64
	ConnsBadHello    atomic.Int64
	ConnsOwn         atomic.Int64
	BytesToRuntime   atomic.Int64
	BytesToPhone     atomic.Int64
}

// tunnel is one runtime's live yamux session.
type tunnel struct {
	id      string
	source  string // where the runtime logged in from
	sess    *yamux.Session
	streams chan struct{}
	bySrc   *share // phone connections per source
	done    chan struct{}
	ready   chan struct{} // closed once the runtime was told it is logged in
	once    sync.Once
}

func (t *tunnel) close() { t.once.Do(func() { t.sess.Close(); close(t.done) }) }

// NewServer returns a relay.
func NewServer(cfg ServerConfig) *Server {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.HelloTimeout, 10*time.Second)
	def(&cfg.IdleTimeout, 2*time.Minute)
	def(&cfg.WriteTimeout, 10*time.Second)
	def(&cfg.RetryAfter, 2*time.Second)
	def(&cfg.KeepAlive, 15*time.Second)
	def(&cfg.LoginDeadline, 10*time.Second)
	if cfg.MaxTunnels == 0 {
		cfg.MaxTunnels = 10000
	}
	if cfg.MaxStreams == 0 {
		cfg.MaxStreams = 1000
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = 50000
	}
	if cfg.AcceptPerIP == 0 {
		cfg.AcceptPerIP = 50
	}
	if cfg.AcceptBurst == 0 {
		cfg.AcceptBurst = 200
	}
	if cfg.MaxConnsPerSource == 0 {
		cfg.MaxConnsPerSource = 256
	}
	if cfg.MaxStreamsPerSource == 0 {
		cfg.MaxStreamsPerSource = 64
	}
	if cfg.MaxTunnelsPerSource == 0 {
		cfg.MaxTunnelsPerSource = 16
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Domain = strings.TrimSuffix(strings.ToLower(cfg.Domain), ".")
	s := &Server{cfg: cfg, log: cfg.Log, tunnels: map[string]*tunnel{}, buckets: map[string]*bucket{},
		own: newChanListener(), conns: make(chan struct{}, cfg.MaxConns),
		perSource: newShare(cfg.MaxConnsPerSource), tunnelsBy: newShare(cfg.MaxTunnelsPerSource)}
	s.ownHTTP = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(cfg.Log.Handler(), slog.LevelDebug)}
	return s
}

// Handler serves the relay's own name: the tunnel endpoint, the counters and a landing page. It can
// run under httptest as well as behind Serve.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/tunnel", s.serveTunnel)
	mux.HandleFunc("GET /status", s.serveStatus)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Strict-Transport-Security", "max-age=31536000")
		fmt.Fprintln(w, "This is an Ensemble relay. It forwards encrypted connections to the Ensemble runtimes that dial it, and keeps nothing.")
	})
	return mux
}

// Serve accepts phone and runtime connections on ln (the relay's :443) until ln is closed.
func (s *Server) Serve(ln net.Listener) error {
	go s.ownHTTP.Serve(tls.NewListener(s.own, s.cfg.TLS))
	go s.sweepBuckets()
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return err
		}
		src := Source(c.RemoteAddr().String())
		if !s.allow(src) {
			s.stats.ConnsRateLimited.Add(1)
			c.Close()
			continue
		}
		if !s.perSource.take(src) {
			s.stats.ConnsOverShare.Add(1)
			c.Close()
			continue
		}
		select {
		case s.conns <- struct{}{}:
		default:
			s.perSource.give(src)
			s.stats.ConnsRateLimited.Add(1)
			c.Close()
			continue
		}
		go func() {
			var once sync.Once
			release := func() { once.Do(func() { <-s.conns; s.perSource.give(src) }) }
			// A connection for the relay's own name lives on in its HTTP server (a tunnel for as long
			// as it is up): it keeps its slots until it is closed.
			if !s.route(&releasingConn{Conn: c, release: release}, src) {
				release()
			}
		}()
	}
}

// route peeks the server name and hands the connection to the relay's own server (and reports
// true), or splices it to a tunnel until it ends.
func (s *Server) route(c net.Conn, src string) (handedOff bool) {
	s.stats.ConnsTotal.Add(1)
	c.SetReadDeadline(time.Now().Add(s.cfg.HelloTimeout))
	name, hello, err := peekServerName(c)
	if err != nil {
		s.stats.ConnsBadHello.Add(1)
		c.Close()
		return false
	}
	c.SetReadDeadline(time.Time{})
	if s.cfg.Debug {
		s.log.Debug("relay: connection", "sni", name)
	}
	if name == s.cfg.Domain {
		s.stats.ConnsOwn.Add(1)
		if !s.own.push(&prefixConn{Conn: c, pre: hello}) {
			c.Close()
			return false
		}
		return true
	}
	id, ok := strings.CutSuffix(name, "."+s.cfg.Domain)
	if !ok || !ValidID(id) {
		s.stats.ConnsUnknownName.Add(1)
		c.Close()
		return false
	}
	t := s.lookup(id)
	if t == nil {
		s.stats.ConnsNoTunnel.Add(1)
		c.Close()
		return false
	}
	if !t.bySrc.take(src) {
		s.stats.ConnsOverShare.Add(1)
		c.Close()
		return false
	}
	defer t.bySrc.give(src)
	select {
	case t.streams <- struct{}{}:
		defer func() { <-t.streams }()
	default:
		s.stats.ConnsRateLimited.Add(1)
		c.Close()
		return false
	}
	<-t.ready
	st, err := t.sess.OpenStream()
	if err != nil {
		s.stats.ConnsNoTunnel.Add(1)
		c.Close()
		return false
	}
	st.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	if err := writeFrame(st, frameConn, []byte(c.RemoteAddr().String())); err != nil {
		st.Close()
		c.Close()
		return false
	}
	if _, err := st.Write(hello); err != nil {
		st.Close()
		c.Close()
		return false
	}
	s.stats.BytesToRuntime.Add(int64(len(hello)))
	s.stats.ConnsLive.Add(1)
	defer s.stats.ConnsLive.Add(-1)
	pipe(c, st, s.cfg.IdleTimeout, s.cfg.WriteTimeout, &s.stats.BytesToRuntime, &s.stats.BytesToPhone)
	return false
}

func (s *Server) lookup(id string) *tunnel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tunnels[id]
}

// allow applies the per-source accept rate.
func (s *Server) allow(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[host]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(s.cfg.AcceptPerIP, s.cfg.AcceptBurst)}
		s.buckets[host] = b
	}
	b.seen = time.Now()
	return b.lim.Allow()
}

func (s *Server) sweepBuckets() {
	for {
		time.Sleep(time.Minute)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		for h, b := range s.buckets {
			if time.Since(b.seen) > 5*time.Minute {
				delete(s.buckets, h)
			}
		}
		s.mu.Unlock()
	}
}

// serveTunnel logs a runtime in and keeps its tunnel until it ends.
func (s *Server) serveTunnel(w http.ResponseWriter, r *http.Request) {
	wc, err := websocket.Accept(w, r, &websocket.AcceptOptions{})
	if err != nil {
		return
	}
	wc.SetReadLimit(1 << 20) // a yamux frame: 12 bytes of header and at most its 256 KiB window
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn := websocket.NetConn(ctx, wc, websocket.MessageBinary)
	defer conn.Close()

	conn.SetDeadline(time.Now().Add(s.cfg.LoginDeadline))
	id, err := s.login(conn, r.TLS)
	if err != nil {
		s.stats.LoginsRefused.Add(1)
		s.log.Info("relay: login refused", "err", err)
		writeFrame(conn, frameRefused, []byte(err.Error()))
		return
	}
	// The session exists and the tunnel is in the table before the runtime hears it is logged in,
	// so a phone that connects as soon as the runtime says it is up finds it. Streams wait for ready:
	// until then the OK frame is the only thing written.
	sess, err := yamux.Client(conn, s.yamuxConfig())
	if err != nil {
		return
	}
	t := &tunnel{id: id, source: Source(r.RemoteAddr), sess: sess, streams: make(chan struct{}, s.cfg.MaxStreams),
		bySrc: newShare(s.cfg.MaxStreamsPerSource), done: make(chan struct{}), ready: make(chan struct{})}
	if !s.tunnelsBy.take(t.source) {
		s.stats.LoginsRefused.Add(1)
		writeFrame(conn, frameRefused, []byte("This address has as many tunnels on this relay as it may have; close one first."))
		sess.Close()
		return
	}
	defer s.tunnelsBy.give(t.source)
	if err := s.register(t); err != nil {
		writeFrame(conn, frameRefused, []byte("The relay is full or closing; try again later."))
		sess.Close()
		return
	}
	err = writeFrame(conn, frameServerOK, []byte(id))
	conn.SetDeadline(time.Time{})
	close(t.ready)
	if err != nil {
		t.close()
	}
	s.stats.TunnelsLive.Add(1)
	s.stats.TunnelsTotal.Add(1)
	defer s.stats.TunnelsLive.Add(-1)
	select {
	case <-sess.CloseChan():
	case <-t.done:
	case <-r.Context().Done():
	}
	t.close()
	s.mu.Lock()
	if s.tunnels[id] == t {
		delete(s.tunnels, id)
	}
	s.mu.Unlock()
}

// login runs the login of the protocol up to frameServerOK, and returns the id the runtime proved.
func (s *Server) login(conn net.Conn, cs *tls.ConnectionState) (string, error) {
	binding, err := tlsBinding(cs)
	if err != nil {
		return "", err
	}
	hello := make([]byte, 1+nonceLen)
	hello[0] = protocolVersion
	rand.Read(hello[1:])
	if err := writeFrame(conn, frameServerHello, hello); err != nil {
		return "", fmt.Errorf("send hello: %w", err)
	}
	_, p, err := readFrameOf(conn, frameClientAuth)
	if err != nil {
		return "", fmt.Errorf("read login: %w", err)
	}
	id, join, err := verifyAuth(s.cfg.Domain, hello[1:], binding, p)
	if err != nil {
		return "", err
	}
	if len(s.cfg.JoinSecret) > 0 && !hmac.Equal([]byte(join), []byte(JoinToken(s.cfg.JoinSecret, id))) {
		return "", errors.New("this relay is private and the join token is not valid for this id")
	}
	return id, nil
}

// JoinToken is what a private relay with secret expects from the runtime with id: verified without
// keeping any state.
func JoinToken(secret []byte, id string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(id))
	return hex.EncodeToString(m.Sum(nil))
}

// register makes t the tunnel for its id. The newest tunnel wins; the one it replaces is told so and
// closed.
func (s *Server) register(t *tunnel) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("relay closed")
	}
	old := s.tunnels[t.id]
	if old == nil && len(s.tunnels) >= s.cfg.MaxTunnels {
		s.mu.Unlock()
		return errors.New("too many tunnels")
	}
	s.tunnels[t.id] = t
	s.mu.Unlock()
	if old != nil {
		s.stats.TunnelsReplaced.Add(1)
		go s.notify(old, noticeReplaced, 0, t.source)
	}
	return nil
}

// notify tells a tunnel's runtime why it is being closed, then closes it.
func (s *Server) notify(t *tunnel, kind byte, retry time.Duration, detail string) {
	defer t.close()
	<-t.ready
	st, err := t.sess.OpenStream()
	if err != nil {
		return
	}
	st.SetWriteDeadline(time.Now().Add(2 * time.Second))
	p := make([]byte, 5, 5+len(detail))
	p[0] = kind
	binary.BigEndian.PutUint32(p[1:], uint32(retry.Milliseconds()))
	p = append(p, detail...)
	if writeFrame(st, frameNotice, p) == nil {
		// Wait for the runtime to close the stream (it read the notice), at most two seconds.
		st.SetReadDeadline(time.Now().Add(2 * time.Second))
		io.Copy(io.Discard, st)
	}
	st.Close()
}

func (s *Server) yamuxConfig() *yamux.Config {
	c := yamux.DefaultConfig()
	c.KeepAliveInterval = s.cfg.KeepAlive
	c.ConnectionWriteTimeout = s.cfg.WriteTimeout
	c.StreamOpenTimeout = s.cfg.WriteTimeout
	c.AcceptBacklog = 1024
	c.LogOutput = nil
	c.Logger = slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)
	return c
}

// Status is what /status serves.
type Status struct {
	Tunnels          int64 `json:"tunnels"`
	TunnelsTotal     int64 `json:"tunnelsTotal"`
	TunnelsReplaced  int64 `json:"tunnelsReplaced"`
	LoginsRefused    int64 `json:"loginsRefused"`
	Conns            int64 `json:"conns"`
	ConnsTotal       int64 `json:"connsTotal"`
	ConnsUnknownName int64 `json:"connsUnknownName"`
	ConnsNoTunnel    int64 `json:"connsNoTunnel"`
	ConnsRateLimited int64 `json:"connsRateLimited"`
	ConnsOverShare   int64 `json:"connsOverShare"`
	ConnsBadHello    int64 `json:"connsBadHello"`
	ConnsOwn         int64 `json:"connsOwn"`
	BytesToRuntime   int64 `json:"bytesToRuntime"`
	BytesToPhone     int64 `json:"bytesToPhone"`
}

// Status reads the counters.
func (s *Server) Status() Status {
	return Status{
		Tunnels: s.stats.TunnelsLive.Load(), TunnelsTotal: s.stats.TunnelsTotal.Load(),
		TunnelsReplaced: s.stats.TunnelsReplaced.Load(), LoginsRefused: s.stats.LoginsRefused.Load(),
		Conns: s.stats.ConnsLive.Load(), ConnsTotal: s.stats.ConnsTotal.Load(),
		ConnsUnknownName: s.stats.ConnsUnknownName.Load(), ConnsNoTunnel: s.stats.ConnsNoTunnel.Load(),
		ConnsRateLimited: s.stats.ConnsRateLimited.Load(), ConnsOverShare: s.stats.ConnsOverShare.Load(),
		ConnsBadHello: s.stats.ConnsBadHello.Load(),
		ConnsOwn:      s.stats.ConnsOwn.Load(), BytesToRuntime: s.stats.BytesToRuntime.Load(),
		BytesToPhone: s.stats.BytesToPhone.Load(),
	}
}

// serveStatus serves the counters to the relay's operator only: from the relay's own machine, or
// with the status token. What they count (tunnels, refusals, bytes) is no one else's business.
func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	if !s.statusAllowed(r) {
		http.Error(w, "The relay's counters are for its operator: ask from the relay's own machine, or with its status token.", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(s.Status())
}

func (s *Server) statusAllowed(r *http.Request) bool {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.cfg.StatusToken != "" {
		return hmac.Equal([]byte(tok), []byte(s.cfg.StatusToken))
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// Close tells every runtime the relay is restarting (so it redials after RetryAfter) and closes
// every tunnel. The listener given to Serve is the caller's to close.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	ts := make([]*tunnel, 0, len(s.tunnels))
	for _, t := range s.tunnels {
		ts = append(ts, t)
	}
	s.tunnels = map[string]*tunnel{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range ts {
		wg.Add(1)
		go func() { defer wg.Done(); s.notify(t, noticeRestarting, s.cfg.RetryAfter, "") }()
	}
	wg.Wait()
	s.own.Close()
	return s.ownHTTP.Close()
}

// releasingConn gives back its connection's slots when it is closed.
type releasingConn struct {
	net.Conn
	release func() // idempotent
}

func (c *releasingConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// chanListener is a net.Listener fed by route with connections for the relay's own name.
type chanListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newChanListener() *chanListener {
	return &chanListener{ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *chanListener) push(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *chanListener) Addr() net.Addr { return pipeAddr("relay") }

// pipeAddr names a connection that has no network address of its own.
type pipeAddr string

func (a pipeAddr) Network() string { return "relay" }
func (a pipeAddr) String() string  { return string(a) }
