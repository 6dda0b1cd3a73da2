package api

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ensemblework/ensemble/relay"
)

// The phone path: every connection the relay carries to the runtime is served by [Server.PhoneServer],
// which marks each of its connections as a phone's. The phone rules follow the connection, never
// the Host header a request names:
//
//   - the Host must be the runtime's relay name; TLS only, HSTS, and the relay origin exactly for
//     writes, streams and upgrades (relayAllowed);
//   - only a paired phone's device cookie signs a request in: not the launch token, a browser
//     session, a bridge key, or a run's or turn's secret, and the routes those serve do not answer;
//   - a request gets tight time limits until a paired phone is seen making it (a stranger cannot
//     hold a connection open for long), and a connection no paired phone has used is closed soon
//     after it goes quiet;
//   - signing a phone out ends what it has open: its event streams, sockets and connections.
//
// phoneLimits are the phone path's time limits.
type phoneLimits struct {
	header        time.Duration // the TLS handshake, and each request's headers
	unpairedRead  time.Duration // reading the body of a request not (yet) a paired phone's
	unpairedWrite time.Duration // writing its answer: the UI's largest file, on a slow link
	unpairedIdle  time.Duration // a connection no paired phone used, between requests
	pairedRead    time.Duration // reading a paired phone's body: an attachment on a slow link
	idle          time.Duration // a paired phone's connection, between requests
	endWait       time.Duration // how long signing out waits for a phone's open requests to end
}

var defaultPhoneLimits = phoneLimits{
	header:        5 * time.Second,
	unpairedRead:  10 * time.Second,
	unpairedWrite: time.Minute,
	unpairedIdle:  10 * time.Second,
	pairedRead:    10 * time.Minute,
	idle:          2 * time.Minute,
	endWait:       time.Second,
}

const phoneMaxHeader = 64 << 10

// PhoneNotPaired is what an unpaired phone is told: what to do on the computer and with the phone.
const PhoneNotPaired = "This phone is not paired with this Ensemble: on your computer, open Settings → Phones and press Pair a phone, then scan the code with this phone's camera."

type phoneConnKey struct{}

// phoneConn is one connection the relay carried: where from, and whether a paired phone used it.
type phoneConn struct {
	conn     net.Conn // the TLS connection
	source   string   // relay.Source of the phone's address
	quietFor time.Duration
	paired   atomic.Bool

	mu   sync.Mutex // guards idle
	idle *time.Timer
}

// phoneOf is the phone connection r came on; nil for the computer's own (loopback) requests.
func phoneOf(r *http.Request) *phoneConn {
	pc, _ := r.Context().Value(phoneConnKey{}).(*phoneConn)
	return pc
}

// quiet starts the countdown that closes a connection no paired phone has used.
func (pc *phoneConn) quiet() {
	if pc.paired.Load() {
		return
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.idle == nil {
		pc.idle = time.AfterFunc(pc.quietFor, func() { pc.conn.Close() })
	} else {
		pc.idle.Reset(pc.quietFor)
	}
}

// busy stops the countdown.
func (pc *phoneConn) busy() {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.idle != nil {
		pc.idle.Stop()
	}
}

// PhoneServer is the http.Server for the connections the relay carries (serve it on the tunnel's
// listener behind TLS), with h, the runtime's Handler: under the phone rules whatever a request's
// Host says, with the phone path's time limits.
func (s *Server) PhoneServer(h http.Handler, errorLog *log.Logger) *http.Server {
	var conns sync.Map // net.Conn → *phoneConn
	lim := s.phoneLimits
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.header,
		IdleTimeout:       lim.idle,
		MaxHeaderBytes:    phoneMaxHeader,
		ErrorLog:          errorLog,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			pc := &phoneConn{conn: c, source: relay.Source(c.RemoteAddr().String()), quietFor: lim.unpairedIdle}
			conns.Store(c, pc)
			return context.WithValue(ctx, phoneConnKey{}, pc)
		},
		ConnState: func(c net.Conn, st http.ConnState) {
			v, ok := conns.Load(c)
			if !ok {
				return
			}
			pc := v.(*phoneConn)
			switch st {
			case http.StateIdle:
				pc.quiet()
			case http.StateActive:
				pc.busy()
			case http.StateHijacked, http.StateClosed:
				pc.busy()
				conns.Delete(c)
			}
		},
	}
}

// phoneAllowed applies the phone rules to a request that came through the relay, before any route:
// false when it has answered.
func (s *Server) phoneAllowed(w http.ResponseWriter, r *http.Request) bool {
	host := s.relayHost()
	h := r.Host
	if hh, port, err := net.SplitHostPort(h); err == nil && port == "443" {
		h = hh
	}
	if host == "" || !strings.EqualFold(h, host) {
		writeError(w, http.StatusMisdirectedRequest, "This is not the address of this Ensemble; open the address its pairing code gave you.")
		return false
	}
	if !s.relayAllowed(w, r) {
		return false
	}
	if p := r.URL.Path; strings.HasPrefix(p, "/mcp/") || strings.HasPrefix(p, "/api/bridge/") || strings.HasPrefix(p, "/auth/") ||
		strings.HasPrefix(p, "/api/engine/") {
		writeError(w, http.StatusForbidden, "This is for programs and browsers on the computer itself; it does not answer through the relay.")
		return false
	}
	// Until a paired phone is seen making it (phoneAuthed), a request has little time.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(s.phoneLimits.unpairedRead))
	rc.SetWriteDeadline(time.Now().Add(s.phoneLimits.unpairedWrite))
	return true
}

// phoneAuthed lets a phone's request through with a paired device's cookie, and keeps it among
// what that phone has open until it ends.
func (s *Server) phoneAuthed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pc := phoneOf(r)
		c, err := r.Cookie(deviceCookie)
		if err != nil {
			writeError(w, http.StatusUnauthorized, PhoneNotPaired)
			return
		}
		id, err := s.validDevice(r.Context(), c.Value)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if id == "" {
			writeError(w, http.StatusUnauthorized, PhoneNotPaired)
			return
		}
		ctx, done := s.phones.track(r.Context(), id, pc)
		defer done()
		pc.paired.Store(true)
		rc := http.NewResponseController(w)
		rc.SetWriteDeadline(time.Time{})
		if r.Body == nil || r.Body == http.NoBody {
			rc.SetReadDeadline(time.Time{})
		} else {
			rc.SetReadDeadline(time.Now().Add(s.phoneLimits.pairedRead))
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// deadlineBody lifts the read deadline once the body is read: what the server reads after it (to
// notice a closed HTTP/1.1 connection) must not end a long answer.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	once sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) {
		b.once.Do(func() { b.rc.SetReadDeadline(time.Time{}) })
	}
	return n, err
}

// ErrSignedOut is the cause of a paired phone's request ended because the phone was signed out.
var ErrSignedOut = errors.New("This phone was signed out; pair it again to use it.")

// phoneSessions are the requests each paired phone has open, so signing it out ends them.
type phoneSessions struct {
	wait time.Duration // for open requests to end, before their connections are cut
	mu   sync.Mutex    // guards reqs
	reqs map[string]map[*openRequest]struct{}
}

type openRequest struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
	conn   *phoneConn
}

// track keeps a request of device id until done is called.
func (p *phoneSessions) track(ctx context.Context, id string, pc *phoneConn) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	o := &openRequest{cancel: cancel, done: make(chan struct{}), conn: pc}
	p.mu.Lock()
	if p.reqs == nil {
		p.reqs = map[string]map[*openRequest]struct{}{}
	}
	if p.reqs[id] == nil {
		p.reqs[id] = map[*openRequest]struct{}{}
	}
	p.reqs[id][o] = struct{}{}
	p.mu.Unlock()
	return ctx, func() {
		p.mu.Lock()
		delete(p.reqs[id], o)
		if len(p.reqs[id]) == 0 {
			delete(p.reqs, id)
		}
		p.mu.Unlock()
		cancel(nil)
		close(o.done)
	}
}

// end ends every request the devices ids have open: their contexts are canceled (ErrSignedOut)
// and they are waited for a moment; the connection of one still going then is closed, so a stream
// or socket that does not stop by itself is cut. It returns once all of that is done.
func (p *phoneSessions) end(ids ...string) {
	p.mu.Lock()
	var reqs []*openRequest
	for _, id := range ids {
		for o := range p.reqs[id] {
			reqs = append(reqs, o)
		}
	}
	p.mu.Unlock()
	for _, o := range reqs {
		o.cancel(ErrSignedOut)
	}
	wait, cancel := context.WithTimeout(context.Background(), p.wait)
	defer cancel()
	for _, o := range reqs {
		select {
		case <-o.done:
		case <-wait.Done():
			o.conn.conn.Close()
		}
	}
}

// signedIn reports whether r carries a credential that signs it in where it came from: a paired
// phone's cookie through the relay; the launch token or a browser session on the computer.
func (s *Server) signedIn(r *http.Request) bool {
	if phoneOf(r) != nil {
		c, err := r.Cookie(deviceCookie)
		if err != nil {
			return false
		}
		id, err := s.validDevice(r.Context(), c.Value)
		return err == nil && id != ""
	}
	ok, err := s.authenticate(r)
	return err == nil && ok
}
