package terminal

import "bytes"

// ring keeps the last bytes written to it, up to its size: a host's output so far, replayed to
// the client that attaches next.
type ring struct {
	buf  []byte
	size int
	cut  bool // older bytes were dropped
}

func newRing(size int) *ring { return &ring{size: size} }

func (r *ring) Write(p []byte) {
	if len(p) >= r.size {
		r.buf = append(r.buf[:0], p[len(p)-r.size:]...)
		r.cut = true
		return
	}
	if over := len(r.buf) + len(p) - r.size; over > 0 {
		r.cut = true
		// Shift rather than wrap: output comes in PTY-read chunks (32 KB at most), and a copy of
		// the kept bytes per chunk is cheap next to the emulator that draws them.
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	r.buf = append(r.buf, p...)
}

// Bytes are the kept bytes, oldest first, from the start of a line once older ones were dropped:
// the cut may have fallen inside a character or an escape sequence, which would draw as
// garbage. The caller must not keep them past the next Write.
func (r *ring) Bytes() []byte {
	if r.cut {
		if i := bytes.IndexByte(r.buf, '\n'); i >= 0 {
			return r.buf[i+1:]
		}
	}
	return r.buf
}
