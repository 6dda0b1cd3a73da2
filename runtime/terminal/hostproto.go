package terminal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The host protocol: a terminal host (host.go) holds one shell's PTY and speaks it to one
// client, the runtime, over a unix socket. Every frame is a type byte, a big-endian uint32
// length, and that many bytes; a length over maxFrame ends the connection, and a type a side
// does not know is skipped, so the protocol can grow.
//
// Attach: the client sends frameHello with the token from the session's json. A wrong token is
// answered with frameError and the connection is closed. Otherwise the host answers frameSize
// (the PTY's size now) and frameReplay (the output so far, the last replayBytes of it), and, if
// the shell has already exited, frameExit. A client attached before is disconnected: the newest
// one wins, as when a runtime restarts while the old one's socket has not yet timed out.
//
// Steady state: the host sends frameOutput as the shell writes and frameExit when it exits;
// the client sends frameInput (keys), frameSize (a resize) and frameClose (hang up the shell's
// process group). Once it has seen frameExit the client sends frameDone, and the host removes
// its files and exits; without one it waits hostGrace for the next attach.
const (
	frameHello  = 'h' // client: the token
	frameError  = 'e' // host: why the attach was refused, one sentence
	frameSize   = 's' // both: cols, rows as two big-endian uint16
	frameReplay = 'r' // host: the output so far
	frameOutput = 'o' // host: output
	frameInput  = 'i' // client: input
	frameExit   = 'x' // host: the shell's exit code, a big-endian int32
	frameClose  = 'c' // client: hang up the shell's process group
	frameDone   = 'd' // client: the exit was seen; the host may go

	// maxFrame bounds a frame's payload: the replay is the largest.
	maxFrame = replayBytes + 1024
)

var errFrameTooLong = errors.New("terminal host frame too long")

// writeFrame writes one frame. Callers hold their connection's write lock.
func writeFrame(w io.Writer, typ byte, payload []byte) error {
	if len(payload) > maxFrame {
		return errFrameTooLong
	}
	b := make([]byte, 5+len(payload))
	b[0] = typ
	binary.BigEndian.PutUint32(b[1:5], uint32(len(payload)))
	copy(b[5:], payload)
	_, err := w.Write(b)
	return err
}

// readFrame reads one frame.
func readFrame(r io.Reader) (typ byte, payload []byte, err error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("%w: %d bytes", errFrameTooLong, n)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	return h[0], payload, nil
}

func sizePayload(cols, rows int) []byte {
	var b [4]byte
	binary.BigEndian.PutUint16(b[0:], uint16(cols))
	binary.BigEndian.PutUint16(b[2:], uint16(rows))
	return b[:]
}

func parseSize(p []byte) (cols, rows int, ok bool) {
	if len(p) != 4 {
		return 0, 0, false
	}
	return int(binary.BigEndian.Uint16(p[0:])), int(binary.BigEndian.Uint16(p[2:])), true
}

func exitPayload(code int) []byte {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(int32(code)))
	return b[:]
}

func parseExit(p []byte) (int, bool) {
	if len(p) != 4 {
		return 0, false
	}
	return int(int32(binary.BigEndian.Uint32(p))), true
}
