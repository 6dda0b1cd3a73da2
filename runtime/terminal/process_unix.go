//go:build !windows

package terminal

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// ptyProcess is a shell on a PTY. pty.Start makes it a session leader (Setsid), so its process
// group's id is its pid and the PTY is its controlling terminal.
type ptyProcess struct {
	cmd    *exec.Cmd
	ptmx   *os.File
	once   sync.Once   // the hang-up happens once
	exited atomic.Bool // the shell has been waited for
}

func startProcess(shell string, args []string, folder string, env []string, cols, rows int) (process, error) {
	cmd := exec.Command(shell, args...)
	cmd.Dir = folder
	cmd.Env = env
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		return nil, err
	}
	return &ptyProcess{cmd: cmd, ptmx: ptmx}, nil
}

func (p *ptyProcess) Read(b []byte) (int, error)  { return p.ptmx.Read(b) }
func (p *ptyProcess) Write(b []byte) (int, error) { return p.ptmx.Write(b) }

func (p *ptyProcess) resize(cols, rows int) error {
	return pty.Setsize(p.ptmx, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
}

// hangup sends SIGHUP to the process group, as closing a terminal window does (an interactive
// shell passes it on to its jobs), and SIGKILL to the group if the shell is still there after
// hangupGrace.
func (p *ptyProcess) hangup() {
	p.once.Do(func() {
		pgid := p.cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGHUP)
		time.AfterFunc(hangupGrace, func() {
			if !p.exited.Load() {
				killSession(pgid, syscall.SIGKILL)
			}
		})
	})
}

func (p *ptyProcess) wait() (int, error) {
	err := p.cmd.Wait()
	p.exited.Store(true)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

// cleanup runs once the shell has exited: what it left running in its session is killed, the rest of
// its output is read, and the PTY is closed.
func (p *ptyProcess) cleanup(readDone <-chan struct{}) {
	killSession(p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-readDone: // the PTY said EOF: every process holding it is gone
	case <-time.After(2 * time.Second): // a process in another group still holds it
	}
	p.ptmx.Close()
}
