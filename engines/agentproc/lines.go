package agentproc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// LineWriter writes JSON values to an agent's input one line each, the way
// both stdio protocols (claude's stream-json, codex's app-server) take them.
// Writes are serialised: a control answer from one goroutine never lands
// inside a request from another.
type LineWriter struct {
	name string
	mu   sync.Mutex // one line at a time
	w    io.Writer
}

// NewLineWriter writes to w; its errors start with name ("claude").
func NewLineWriter(name string, w io.Writer) *LineWriter {
	return &LineWriter{name: name, w: w}
}

// Send writes v as one line of JSON.
func (l *LineWriter) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: encode: %w", l.name, err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("%s: write: %w", l.name, err)
	}
	return nil
}

// ReadLines gives each line of r to line, in order, without its newline,
// until r ends; a line longer than max bytes (or 64 KiB, when max is less)
// ends the reading with an error.
// The slice line gets is only good until line returns. Only a read error (or
// a line too long) is returned; r ending is not an error.
func ReadLines(r io.Reader, max int, line func([]byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), max)
	for sc.Scan() {
		line(sc.Bytes())
	}
	return sc.Err()
}
