package relay

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"time"
)

// maxHello bounds the bytes read while looking for a ClientHello's server name. A post-quantum
// (ML-KEM) hello is about 1.8 KB; TLS allows a 16 KB record and a hello split across records.
const maxHello = 64 << 10

var errPeeked = errors.New("relay: peeked")

// peekServerName reads a TLS ClientHello from r and returns its server name (lower case, no
// trailing dot) and every byte it read, to be sent on first. It uses crypto/tls's own parser: every
// byte read goes through a tee, and GetConfigForClient stops the handshake once the hello is parsed.
func peekServerName(r io.Reader) (string, []byte, error) {
	var buf bytes.Buffer
	var name string
	var ok bool
	err := tls.Server(readOnlyConn{r: io.TeeReader(io.LimitReader(r, maxHello), &buf)}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			name, ok = h.ServerName, true
			return nil, errPeeked
		},
	}).Handshake()
	if !ok {
		if err == nil {
			err = errors.New("no ClientHello")
		}
		return "", buf.Bytes(), err
	}
	return strings.TrimSuffix(strings.ToLower(name), "."), buf.Bytes(), nil
}

// readOnlyConn lets crypto/tls read a hello and nothing more: its alerts go nowhere.
type readOnlyConn struct{ r io.Reader }

func (c readOnlyConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c readOnlyConn) Write(p []byte) (int, error)      { return 0, io.ErrClosedPipe }
func (c readOnlyConn) Close() error                     { return nil }
func (c readOnlyConn) LocalAddr() net.Addr              { return nil }
func (c readOnlyConn) RemoteAddr() net.Addr             { return nil }
func (c readOnlyConn) SetDeadline(time.Time) error      { return nil }
func (c readOnlyConn) SetReadDeadline(time.Time) error  { return nil }
func (c readOnlyConn) SetWriteDeadline(time.Time) error { return nil }

// prefixConn replays the bytes already read before reading on from the connection.
type prefixConn struct {
	net.Conn
	pre []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
