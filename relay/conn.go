package relay

import (
	"errors"
	"net"
	"os"

	"github.com/hashicorp/yamux"
)

// streamConn is one phone's connection through the tunnel, a yamux stream that keeps net.Conn's
// promise about deadlines: a Read or Write past its deadline fails with os.ErrDeadlineExceeded,
// which is a temporary net.Error.
//
// yamux's own ErrTimeout reports Timeout() but not Temporary(), and crypto/tls takes every read
// error that is not Temporary as the end of the connection, for good. net/http cancels the read it
// keeps pending on an idle HTTP/1.1 connection (between kept-alive requests, and before it hands a
// connection over to a WebSocket) by setting a read deadline in the past; with yamux's error that
// broke the TLS connection under it, so a second request on a kept-alive connection found it dead
// and a WebSocket closed after its first frame.
type streamConn struct {
	*yamux.Stream
	remote  net.Addr
	release func() // gives back the source's share; idempotent
}

func (c *streamConn) Close() error {
	c.release()
	return c.Stream.Close()
}

func (c *streamConn) Read(p []byte) (int, error) {
	n, err := c.Stream.Read(p)
	return n, deadlineError(err)
}

func (c *streamConn) Write(p []byte) (int, error) {
	n, err := c.Stream.Write(p)
	return n, deadlineError(err)
}

// RemoteAddr is the phone's address, as the relay saw it.
func (c *streamConn) RemoteAddr() net.Addr { return c.remote }

// deadlineError turns yamux's timeout into the one net.Conn documents. It is returned as is, not
// wrapped: crypto/tls asks the error itself whether it is a net.Error.
func deadlineError(err error) error {
	if errors.Is(err, yamux.ErrTimeout) {
		return os.ErrDeadlineExceeded
	}
	return err
}
