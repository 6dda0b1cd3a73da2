//go:build !windows

package terminal

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// HostMain is a terminal host's whole life (`ensemble terminal-host`): it reads its settings as
// JSON from stdin, starts the shell on a PTY, listens on <dir>/<id>.sock, writes <id>.json, says
// "ready" on stdout and closes it, then serves the host protocol (hostproto.go) until the shell
// has exited and a client has seen its exit code, or hostGrace has passed. It returns the process's
// exit code.
//
// The runtime starts it in a session of its own (Setsid) and without a parent-death signal, so
// it outlives the runtime and its process group. A client is let in by the random token in the
// json, which only the person can read (0600, in a 0700 folder): the folder's permissions alone
// would keep other users out, and the token keeps out a process that reaches the socket some
// other way, as a sandboxed one given the folder, or a copy of the folder with looser modes.
func HostMain(stdin io.Reader, stdout io.Writer) int {
	// Nobody's terminal is this process's: a hang-up is not for it, and a write to a client that
	// went away is an error to handle, not a signal to die of.
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	var spec hostSpec
	if err := json.NewDecoder(io.LimitReader(stdin, 4<<20)).Decode(&spec); err != nil {
		fmt.Fprintf(stdout, "error: read the terminal's settings: %v\n", err)
		return 1
	}
	h, err := newHost(spec)
	if err != nil {
		fmt.Fprintf(stdout, "error: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "ready")
	if c, ok := stdout.(io.Closer); ok {
		c.Close() // the runtime reads to here; it may be gone before this host is
	}
	if c, ok := stdin.(io.Closer); ok {
		c.Close()
	}
	return h.serve()
}

// host is one shell on a PTY and the client attached to it.
type host struct {
	spec   hostSpec
	ln     *net.UnixListener
	proc   *ptyProcess
	finish chan struct{} // closed when the host may go
	once   sync.Once     // closes finish

	mu         sync.Mutex // guards the following fields
	out        *ring
	client     net.Conn
	cols, rows int
	ended      bool
	code       int
}

func newHost(spec hostSpec) (*host, error) {
	if !idRe.MatchString(spec.ID) || spec.Token == "" || spec.Dir == "" {
		return nil, fmt.Errorf("the terminal's settings are incomplete")
	}
	if err := makeHostDir(spec.Dir); err != nil {
		return nil, err
	}
	sock := sockPath(spec.Dir, spec.ID)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen for the runtime: %w", err)
	}
	os.Chmod(sock, 0o600)
	cols, rows := clampSize(spec.Cols, spec.Rows)
	p, err := startProcess(spec.Shell, spec.Args, spec.Folder, spec.Env, cols, rows)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("start %s: %w", spec.Shell, err)
	}
	proc := p.(*ptyProcess)
	in := hostInfo{ID: spec.ID, Node: spec.Node, Folder: spec.Folder, Command: spec.Command, PID: os.Getpid(),
		Shell: proc.cmd.Process.Pid, Started: time.Now().UTC(), Token: spec.Token}
	if err := writeInfo(spec.Dir, in); err != nil {
		proc.hangup()
		proc.wait()
		ln.Close()
		return nil, err
	}
	return &host{spec: spec, ln: ln, proc: proc, finish: make(chan struct{}),
		out: newRing(replayBytes), cols: cols, rows: rows}, nil
}

func (h *host) serve() int {
	defer os.Remove(infoPath(h.spec.Dir, h.spec.ID))
	defer h.ln.Close() // removes the socket
	readDone := make(chan struct{})
	go h.pumpOutput(readDone)
	go h.accept()
	go h.watchFile()
	if h.spec.MaxAge > 0 {
		// The runtime keeps a node's terminal to its age limit; this host keeps it there too when
		// no runtime comes back.
		time.AfterFunc(h.spec.MaxAge, h.proc.hangup)
	}
	code, _ := h.proc.wait()
	h.proc.cleanup(readDone)
	h.mu.Lock()
	h.ended, h.code = true, code
	if h.client != nil {
		h.sendLocked(frameExit, exitPayload(code))
	}
	h.mu.Unlock()
	select {
	case <-h.finish:
	case <-time.After(hostGrace):
	}
	h.mu.Lock()
	if h.client != nil {
		h.client.Close()
	}
	h.mu.Unlock()
	return 0
}

func (h *host) done() { h.once.Do(func() { close(h.finish) }) }

// pumpOutput reads the PTY into the replay ring and to the client, under one lock, so an attach
// gets every byte once: in its replay or after it.
func (h *host) pumpOutput(readDone chan<- struct{}) {
	defer close(readDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := h.proc.Read(buf)
		if n > 0 {
			h.mu.Lock()
			h.out.Write(buf[:n])
			if h.client != nil {
				h.sendLocked(frameOutput, buf[:n])
			}
			h.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// sendLocked sends a frame to the client, dropping a client that does not take it in time.
func (h *host) sendLocked(typ byte, p []byte) {
	c := h.client
	c.SetWriteDeadline(time.Now().Add(hostWriteTimeout))
	if err := writeFrame(c, typ, p); err != nil {
		c.Close()
		h.client = nil
	}
}

func (h *host) accept() {
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		go h.attach(c)
	}
}

// attach lets a client in with the right token, replays the output so far to it, and serves it.
// A client attached before is let go: the newest one is the runtime now.
func (h *host) attach(c net.Conn) {
	c.SetDeadline(time.Now().Add(hostAttachTimeout))
	typ, p, err := readFrame(c)
	if err != nil || typ != frameHello || subtle.ConstantTimeCompare(p, []byte(h.spec.Token)) != 1 {
		writeFrame(c, frameError, []byte("The terminal refused the connection: its token is not this terminal's."))
		c.Close()
		return
	}
	c.SetDeadline(time.Time{})
	h.mu.Lock()
	if old := h.client; old != nil {
		// Half-closed, not closed: the old client reads the end and lets go, and what it typed
		// before (in the socket still) is read and typed, not thrown away with the socket.
		old.(*net.UnixConn).CloseWrite()
		old.SetReadDeadline(time.Now().Add(hostAttachTimeout))
	}
	h.client = c
	h.sendLocked(frameSize, sizePayload(h.cols, h.rows))
	if h.client != nil {
		h.sendLocked(frameReplay, h.out.Bytes())
	}
	if h.client != nil && h.ended {
		h.sendLocked(frameExit, exitPayload(h.code))
	}
	h.mu.Unlock()
	h.serveClient(c)
}

func (h *host) serveClient(c net.Conn) {
	defer func() {
		h.mu.Lock()
		if h.client == c {
			h.client = nil
		}
		h.mu.Unlock()
		c.Close()
	}()
	for {
		typ, p, err := readFrame(c)
		if err != nil {
			return
		}
		switch typ {
		case frameInput:
			h.proc.Write(p) // after the shell's end the PTY is closed: nothing to type into
		case frameSize:
			if cols, rows, ok := parseSize(p); ok {
				cols, rows = clampSize(cols, rows)
				if h.proc.resize(cols, rows) == nil {
					h.mu.Lock()
					h.cols, h.rows = cols, rows
					h.mu.Unlock()
				}
			}
		case frameClose:
			h.proc.hangup()
		case frameDone:
			// A client answers the exit frame, which is sent under mu once ended is set.
			h.mu.Lock()
			ended := h.ended
			h.mu.Unlock()
			if ended {
				h.done()
				return
			}
		}
	}
}

// watchFile ends the shell, and the host, once its json is gone: the data folder it belongs to
// was removed, and no runtime will attach again.
func (h *host) watchFile() {
	t := time.NewTicker(hostCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-h.finish:
			return
		case <-t.C:
			if _, err := os.Stat(infoPath(h.spec.Dir, h.spec.ID)); os.IsNotExist(err) {
				h.proc.hangup()
				h.done()
				return
			}
		}
	}
}
