package relay

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// pipe copies both ways between a and b until either side ends or errs, or no byte has crossed
// either way for idle, then closes both. Every write waits at most writeLimit; closing both ends
// on any error is what keeps a timed-out yamux write (GHSA-29qp-crvh-w22m) from leaving a
// half-dead stream behind.
//
// Idle means quiet both ways: an event stream or a download sends for minutes while the phone
// sends nothing, and that one-way traffic must keep the connection up.
func pipe(a, b net.Conn, idle, writeLimit time.Duration, ab, ba *atomic.Int64) {
	var once sync.Once
	closeBoth := func() { once.Do(func() { a.Close(); b.Close() }) }
	var last atomic.Int64 // unix nanoseconds of the last bytes either way
	last.Store(time.Now().UnixNano())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); copyDeadlined(b, a, idle, writeLimit, ab, &last); closeBoth() }()
	go func() { defer wg.Done(); copyDeadlined(a, b, idle, writeLimit, ba, &last); closeBoth() }()
	wg.Wait()
}

func copyDeadlined(dst, src net.Conn, idle, writeLimit time.Duration, count, last *atomic.Int64) {
	buf := make([]byte, 32<<10)
	for {
		src.SetReadDeadline(time.Now().Add(idle))
		n, err := src.Read(buf)
		if n > 0 {
			last.Store(time.Now().UnixNano())
			dst.SetWriteDeadline(time.Now().Add(writeLimit))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			if count != nil {
				count.Add(int64(n))
			}
		}
		if err != nil {
			// Quiet this way but not the other: read on.
			if timeout(err) && time.Since(time.Unix(0, last.Load())) < idle {
				continue
			}
			return
		}
	}
}

func timeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
