package relay

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// deadliner is what pipe needs of each side: a net.Conn or a yamux stream.
type deadliner interface {
	net.Conn
}

// pipe copies both ways between a and b until either side ends or errs, then closes both. Every read
// waits at most idle and every write at most writeLimit; closing both ends on any error is what keeps
// a timed-out yamux write (GHSA-29qp-crvh-w22m) from leaving a half-dead stream behind.
func pipe(a, b deadliner, idle, writeLimit time.Duration, ab, ba *atomic.Int64) {
	var once sync.Once
	closeBoth := func() { once.Do(func() { a.Close(); b.Close() }) }
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); copyDeadlined(b, a, idle, writeLimit, ab); closeBoth() }()
	go func() { defer wg.Done(); copyDeadlined(a, b, idle, writeLimit, ba); closeBoth() }()
	wg.Wait()
}

func copyDeadlined(dst, src net.Conn, idle, writeLimit time.Duration, count *atomic.Int64) {
	buf := make([]byte, 32<<10)
	for {
		src.SetReadDeadline(time.Now().Add(idle))
		n, err := src.Read(buf)
		if n > 0 {
			dst.SetWriteDeadline(time.Now().Add(writeLimit))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			if count != nil {
				count.Add(int64(n))
			}
		}
		if err != nil {
			return
		}
	}
}
