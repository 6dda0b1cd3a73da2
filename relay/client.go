package relay

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/hashicorp/yamux"
)

// ClientConfig configures the runtime's tunnel.
type ClientConfig struct {
	// Relay is the relay's name, with a port when it is not 443; the runtime is <id>.<name>.
	Relay string
	Key   DeviceKey
	// JoinToken is for a private relay (see [JoinToken]).
	JoinToken string
	// HTTPClient dials the relay; http.DefaultClient when nil.
	HTTPClient *http.Client
	Log        *slog.Logger

	MinBackoff time.Duration // 0.5 s
	MaxBackoff time.Duration // 30 s
	KeepAlive  time.Duration // 15 s

	// MaxConnsPerSource bounds the phone connections one source (see [Source]) has open at once,
	// whatever the relay allows: the runtime's own fair share. 64.
	MaxConnsPerSource int
	// OnTaken is called, in a goroutine of its own, each time another runtime with this key takes
	// the runtime's name on the relay.
	OnTaken func(TunnelStatus)
}

// TunnelStatus is the tunnel as the person is told about it.
type TunnelStatus struct {
	Host string `json:"host"`
	Up   bool   `json:"up"`
	// Taken counts the times another tunnel logged in with this runtime's key took its name on the
	// relay, since the key was made or rotated: someone has a copy of the key. TakenAt is the last
	// time, TakenFrom the source the relay saw it come from.
	Taken     int       `json:"taken,omitempty"`
	TakenAt   time.Time `json:"takenAt,omitzero"`
	TakenFrom string    `json:"takenFrom,omitempty"`
	// Err is why the tunnel is down, while it is.
	Err string `json:"error,omitempty"`
}

// Client is the runtime's side of the relay: it dials out, logs in with the device key, and yields
// each phone connection through Accept, as a net.Listener, carrying the phone's TLS bytes. Serve it
// with tls.NewListener and an http.Server.
//
// The reconnect contract: Run dials, and whenever the tunnel breaks (an error on either end closes
// the whole tunnel and every phone connection on it) it dials again after a jittered backoff from
// MinBackoff to MaxBackoff, reset by each successful login. A relay that says it is restarting is
// redialed after the delay it asks for. A tunnel taken by another runtime with the same key is
// taken back: Run dials again after a backoff that grows with each taking, reset only by a new key
// ([Client.SetKey]), and [Client.Status] says so all along. Run returns only when its context ends or
// Close is called. Accept keeps working across reconnects.
type Client struct {
	cfg       ClientConfig
	log       *slog.Logger
	conns     chan net.Conn
	done      chan struct{}
	once      sync.Once
	perSource *share

	mu        sync.Mutex // guards the following fields
	key       DeviceKey
	sess      *yamux.Session
	connected chan struct{} // closed while a tunnel is up
	status    TunnelStatus
}

// NewClient returns a Client; call Run to connect.
func NewClient(cfg ClientConfig) *Client {
	if cfg.MinBackoff == 0 {
		cfg.MinBackoff = 500 * time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.KeepAlive == 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxConnsPerSource == 0 {
		cfg.MaxConnsPerSource = 64
	}
	return &Client{cfg: cfg, log: cfg.Log, conns: make(chan net.Conn), done: make(chan struct{}), connected: make(chan struct{}),
		key: cfg.Key, perSource: newShare(cfg.MaxConnsPerSource)}
}

// Host is the name phones use: <id>.<relay name without port>.
func (c *Client) Host() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hostLocked()
}

func (c *Client) hostLocked() string {
	return c.key.ID() + "." + strings.ToLower(relayName(c.cfg.Relay))
}

// Status reports the tunnel as it is now.
func (c *Client) Status() TunnelStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.status
	st.Host = c.hostLocked()
	st.Up = c.sess != nil
	if st.Up {
		st.Err = ""
	}
	return st
}

// SetKey changes the runtime's key, and with it its name: the tunnel under the old name is closed
// and Run logs in again with k. What was said about the old name being taken is forgotten.
func (c *Client) SetKey(k DeviceKey) {
	c.mu.Lock()
	c.key = k
	c.status = TunnelStatus{}
	sess := c.sess
	c.mu.Unlock()
	if sess != nil {
		sess.Close()
	}
}

func relayName(relay string) string {
	if h, _, err := net.SplitHostPort(relay); err == nil {
		return h
	}
	return relay
}

// Connected returns a channel closed while a tunnel is up (a new channel after each reconnect).
func (c *Client) Connected() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connected
}

// Run keeps a tunnel up until ctx ends or Close is called.
func (c *Client) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	backoff := c.cfg.MinBackoff
	taken := c.cfg.MinBackoff // the wait before taking the name back, doubled each time it is taken
	for {
		wait, err := c.connectOnce(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, errTaken) {
			wait, taken = taken, min(taken*2, c.cfg.MaxBackoff)
		}
		if wait > 0 { // a login succeeded: start again from the smallest backoff, or the relay's ask
			backoff = c.cfg.MinBackoff
		}
		d := backoff/2 + rand.N(backoff/2+1)
		if wait > d {
			d = wait
		}
		c.mu.Lock()
		c.status.Err = err.Error()
		if c.status.Taken == 0 { // a new key starts over
			taken = c.cfg.MinBackoff
		}
		c.mu.Unlock()
		c.log.Info("relay: tunnel down; dialing again", "in", d.Round(time.Millisecond), "err", err)
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
		if backoff *= 2; backoff > c.cfg.MaxBackoff {
			backoff = c.cfg.MaxBackoff
		}
	}
}

// errTaken: another tunnel with this runtime's key took its name on the relay.
var errTaken = errors.New("another runtime with this computer's phone key took its address on the relay")

// connectOnce dials, logs in and serves one tunnel until it breaks. wait > 0 means the login
// succeeded, and how long to wait before dialing again (at least 1 ns).
func (c *Client) connectOnce(ctx context.Context) (wait time.Duration, err error) {
	u := url.URL{Scheme: "wss", Host: c.cfg.Relay, Path: "/v1/tunnel"}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	wc, resp, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{HTTPClient: c.cfg.HTTPClient})
	cancel()
	if err != nil {
		return 0, fmt.Errorf("dial %s: %w", u.Host, err)
	}
	binding, err := tlsBinding(resp.TLS)
	if err != nil {
		wc.CloseNow()
		return 0, err
	}
	wc.SetReadLimit(1 << 20)
	conn := websocket.NetConn(ctx, wc, websocket.MessageBinary)
	defer conn.Close()

	conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, hello, err := readFrameOf(conn, frameServerHello)
	if err != nil {
		return 0, fmt.Errorf("read hello: %w", err)
	}
	if len(hello) < 1+nonceLen || hello[0] != protocolVersion {
		return 0, fmt.Errorf("relay speaks another protocol version")
	}
	c.mu.Lock()
	key := c.key
	c.mu.Unlock()
	if err := writeFrame(conn, frameClientAuth, key.signAuth(relayName(c.cfg.Relay), hello[1:1+nonceLen], binding, c.cfg.JoinToken)); err != nil {
		return 0, fmt.Errorf("send login: %w", err)
	}
	typ, p, err := readFrameOf(conn, frameServerOK, frameRefused)
	if err != nil {
		return 0, fmt.Errorf("read login answer: %w", err)
	}
	if typ == frameRefused {
		return 0, fmt.Errorf("relay refused the login: %s", p)
	}
	if string(p) != key.ID() {
		return 0, fmt.Errorf("relay answered for another id")
	}
	conn.SetDeadline(time.Time{})

	ycfg := yamux.DefaultConfig()
	ycfg.KeepAliveInterval = c.cfg.KeepAlive
	ycfg.ConnectionWriteTimeout = 10 * time.Second
	ycfg.AcceptBacklog = 1024
	ycfg.LogOutput = nil
	ycfg.Logger = slog.NewLogLogger(c.log.Handler(), slog.LevelDebug)
	sess, err := yamux.Server(conn, ycfg)
	if err != nil {
		return 0, err
	}
	defer sess.Close()
	c.mu.Lock()
	if c.key.ID() != key.ID() { // the key changed while this one logged in
		c.mu.Unlock()
		return time.Nanosecond, errors.New("the phone key changed")
	}
	c.sess = sess
	close(c.connected)
	c.mu.Unlock()
	c.log.Info("relay: tunnel up", "host", c.Host())
	defer func() {
		c.mu.Lock()
		c.sess = nil
		c.connected = make(chan struct{})
		c.mu.Unlock()
	}()

	notices := make(chan []byte, 1)
	for {
		st, err := sess.AcceptStream()
		if err != nil {
			select {
			case n := <-notices:
				return c.onNotice(n)
			default:
			}
			return time.Nanosecond, fmt.Errorf("tunnel: %w", err)
		}
		go c.handleStream(st, notices)
	}
}

// handleStream reads a stream's first frame: a phone connection goes to Accept; a notice ends the
// tunnel.
func (c *Client) handleStream(st *yamux.Stream, notices chan<- []byte) {
	st.SetReadDeadline(time.Now().Add(10 * time.Second))
	typ, p, err := readFrame(st)
	if err != nil {
		st.Close()
		return
	}
	st.SetReadDeadline(time.Time{})
	switch typ {
	case frameConn:
		src := Source(string(p))
		if !c.perSource.take(src) {
			st.Close()
			return
		}
		var once sync.Once
		pc := &streamConn{Stream: st, remote: pipeAddr(p), release: func() { once.Do(func() { c.perSource.give(src) }) }}
		select {
		case c.conns <- pc:
		case <-c.done:
			pc.Close()
		}
	case frameNotice:
		select {
		case notices <- p:
		default:
		}
		st.Close()
		// The relay closes the session once the runtime has read the notice.
	default:
		st.Close()
	}
}

// onNotice decides what a notice means for the next dial.
func (c *Client) onNotice(p []byte) (time.Duration, error) {
	if len(p) < 5 {
		return time.Nanosecond, errors.New("tunnel closed by the relay")
	}
	retry := time.Duration(binary.BigEndian.Uint32(p[1:5])) * time.Millisecond
	switch p[0] {
	case noticeReplaced:
		c.mu.Lock()
		c.status.Taken++
		c.status.TakenAt = time.Now()
		c.status.TakenFrom = string(p[5:])
		st := c.status
		st.Host = c.hostLocked()
		c.mu.Unlock()
		c.log.Warn("relay: "+errTaken.Error()+"; taking it back", "host", st.Host, "from", st.TakenFrom, "times", st.Taken)
		if c.cfg.OnTaken != nil {
			go c.cfg.OnTaken(st)
		}
		return 0, errTaken
	case noticeRestarting:
		return max(retry, time.Nanosecond), errors.New("relay restarting")
	}
	return time.Nanosecond, errors.New("tunnel closed by the relay")
}

// Accept returns the next phone connection (its TLS bytes, not yet decrypted).
func (c *Client) Accept() (net.Conn, error) {
	select {
	case pc := <-c.conns:
		return pc, nil
	case <-c.done:
		return nil, net.ErrClosed
	}
}

// Close stops Run and Accept and closes the tunnel.
func (c *Client) Close() error {
	c.once.Do(func() { close(c.done) })
	c.mu.Lock()
	if c.sess != nil {
		c.sess.Close()
	}
	c.mu.Unlock()
	return nil
}

// Addr names the listener.
func (c *Client) Addr() net.Addr { return pipeAddr(c.Host()) }

// dropForTest closes the current tunnel as a broken network would.
func (c *Client) dropForTest() {
	c.mu.Lock()
	if c.sess != nil {
		c.sess.Close()
	}
	c.mu.Unlock()
}
