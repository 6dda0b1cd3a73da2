//go:build !windows

package terminal

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// hostProcess is a shell held by a terminal host, reached over the host's socket: the process a
// Session runs when its Manager has HostOptions.
type hostProcess struct {
	conn    net.Conn
	wmu     sync.Mutex    // one frame written at a time
	exited  chan struct{} // closed once the shell's end is known, or the host is out of reach
	once    sync.Once     // closes exited
	code    int           // the exit code; set before exited is closed
	sawExit bool          // the host sent the exit code (not: the connection was lost)
	pending []byte        // output read and not yet returned; Read's alone
}

var _ process = (*hostProcess)(nil)

// errHostGone says no host listens on a session's socket: it has ended, or died.
var errHostGone = errors.New("the terminal's host is gone")

// startHost starts a host for spec and attaches to it. The host is a child of this process only
// until this process ends; it leads a session of its own, so neither a signal to the runtime's
// process group nor the runtime's death reaches it (and no parent-death signal is set on Linux).
func startHost(h *HostOptions, spec hostSpec) (*hostProcess, error) {
	spec.Dir = h.dir()
	if err := makeHostDir(spec.Dir); err != nil {
		return nil, err
	}
	spec.Token = newToken()
	in, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(h.Program, h.args()...)
	cmd.Env = spec.Env // the shell's environment, without the runtime's tokens and keys
	cmd.Dir = "/"      // a host holds no folder busy
	cmd.Stdin = bytes.NewReader(in)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the terminal's host: %w", err)
	}
	stuck := time.AfterFunc(hostAttachTimeout, func() { cmd.Process.Kill() }) // then the read ends
	line, _ := bufio.NewReader(io.LimitReader(out, 4096)).ReadString('\n')
	stuck.Stop()
	go cmd.Wait() // reaps the host should it end while this process runs
	if line != "ready\n" {
		msg := strings.TrimSpace(strings.TrimPrefix(line, "error: "))
		if msg == "" {
			msg = "it ended without a word"
		}
		return nil, fmt.Errorf("start the terminal's host: %s", msg)
	}
	p, _, _, replay, err := dialHost(spec.Dir, spec.ID, spec.Token)
	if err != nil {
		// A host nobody can reach would hold its shell until its age limit: it goes now, and the
		// shell with it (its PTY's last holder gone, the kernel hangs it up).
		cmd.Process.Kill()
		removeHostFiles(spec.Dir, spec.ID)
		return nil, err
	}
	// A new shell's first output (its prompt) is live output: what the emulator answers to it
	// goes to the shell, as it would on a PTY of this process's own.
	p.pending = replay
	return p, nil
}

// dialHost attaches to the host of session id: the host's size now and the output so far.
func dialHost(dir, id, token string) (p *hostProcess, cols, rows int, replay []byte, err error) {
	c, err := net.DialTimeout("unix", sockPath(dir, id), hostAttachTimeout)
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) && (errno == syscall.ENOENT || errno == syscall.ECONNREFUSED) {
			return nil, 0, 0, nil, fmt.Errorf("%w: %w", errHostGone, err)
		}
		return nil, 0, 0, nil, fmt.Errorf("reach the terminal's host: %w", err)
	}
	fail := func(err error) (*hostProcess, int, int, []byte, error) {
		c.Close()
		return nil, 0, 0, nil, err
	}
	c.SetDeadline(time.Now().Add(hostAttachTimeout))
	if err := writeFrame(c, frameHello, []byte(token)); err != nil {
		return fail(fmt.Errorf("reach the terminal's host: %w", err))
	}
	for replay == nil {
		typ, b, err := readFrame(c)
		if err != nil {
			return fail(fmt.Errorf("reach the terminal's host: %w", err))
		}
		switch typ {
		case frameError:
			return fail(errors.New(string(b)))
		case frameSize:
			cols, rows, _ = parseSize(b)
		case frameReplay:
			replay = b
		}
	}
	c.SetDeadline(time.Time{})
	return &hostProcess{conn: c, exited: make(chan struct{})}, cols, rows, replay, nil
}

func (p *hostProcess) Read(b []byte) (int, error) {
	for len(p.pending) == 0 {
		typ, payload, err := readFrame(p.conn)
		if err != nil {
			p.end(-1, false) // the host died, or this runtime let go of it (detach)
			return 0, err
		}
		switch typ {
		case frameOutput, frameReplay:
			p.pending = payload
		case frameExit:
			code, _ := parseExit(payload)
			p.end(code, true)
			return 0, io.EOF
		}
	}
	n := copy(b, p.pending)
	p.pending = p.pending[n:]
	return n, nil
}

func (p *hostProcess) end(code int, saw bool) {
	p.once.Do(func() {
		p.code, p.sawExit = code, saw
		close(p.exited)
	})
}

func (p *hostProcess) send(typ byte, b []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return writeFrame(p.conn, typ, b)
}

func (p *hostProcess) Write(b []byte) (int, error) {
	for off := 0; off < len(b); off += 32 << 10 {
		if err := p.send(frameInput, b[off:min(off+32<<10, len(b))]); err != nil {
			return off, err
		}
	}
	return len(b), nil
}

func (p *hostProcess) resize(cols, rows int) error { return p.send(frameSize, sizePayload(cols, rows)) }

// hangup asks the host to hang up the shell's process group (then kill it, as ptyProcess.hangup
// does). A host out of reach cannot be asked: the connection is closed, so the session ends here.
func (p *hostProcess) hangup() {
	if p.send(frameClose, nil) != nil {
		p.conn.Close()
	}
}

func (p *hostProcess) wait() (int, error) {
	<-p.exited
	return p.code, nil
}

// cleanup tells the host its exit code was seen, so it may go; after a detach it says nothing,
// and the host waits for the next runtime.
func (p *hostProcess) cleanup(readDone <-chan struct{}) {
	<-readDone
	if p.sawExit {
		p.send(frameDone, nil)
	}
	p.conn.Close()
}

// detach lets go of the host without ending its shell: the runtime is stopping, and the next one
// attaches again.
func (p *hostProcess) detach() { p.conn.Close() }

func newToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// removeHostFiles removes what a host that died left behind.
func removeHostFiles(dir, id string) {
	os.Remove(sockPath(dir, id))
	os.Remove(infoPath(dir, id))
}

// hostsWork says terminal hosts run here.
const hostsWork = true
