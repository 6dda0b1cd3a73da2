package terminal

// ring keeps the last bytes written to it, up to its size: a host's output so far, replayed to
// the client that attaches next.
type ring struct {
	buf  []byte
	size int
}

func newRing(size int) *ring { return &ring{size: size} }

func (r *ring) Write(p []byte) {
	if len(p) >= r.size {
		r.buf = append(r.buf[:0], p[len(p)-r.size:]...)
		return
	}
	if over := len(r.buf) + len(p) - r.size; over > 0 {
		// Shift rather than wrap: output comes in PTY-read chunks (32 KB at most), and a copy of
		// the kept bytes per chunk is cheap next to the emulator that draws them.
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	r.buf = append(r.buf, p...)
}

// Bytes are the kept bytes, oldest first; the caller must not keep them past the next Write.
func (r *ring) Bytes() []byte { return r.buf }
