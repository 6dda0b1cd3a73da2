package computer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/engines/agentproc"
	"github.com/ensemblework/ensemble/engines/sandbox"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/ledger"
)

// RunRequest is one command line to run.
type RunRequest struct {
	NodeID  string
	Folder  string
	Command string
	// Write are the folders the sandbox lets it change (Decision.Write).
	Write []string
	// Env are extra variables for it alone (named secrets), never shown to the node.
	Env     map[string]string
	Timeout time.Duration // at most MaxRunTime; zero is MaxRunTime
	// Background returns at once; the command's end calls Ended.
	Background bool
	// Ended is called once when a command that went on in the background ends on its own
	// (not when it was stopped).
	Ended func(Result)
	// Finished is called once when the command ends, however it ends (in the foreground,
	// stopped, at its limit): what a sign-in's card settles on.
	Finished func(Result)
	// OnDeviceCode hears each sign-in code the command prints (spec 002 §8.16.4), as it prints
	// it, with the command's id (which may come before Run returns it). The hooks are the
	// caller's, per command, because only the caller knows whose conversation a command is in.
	OnDeviceCode func(cmdID string, dc DeviceCode)
	// OnBrowserURL hears each page the command asks a browser to open, through BROWSER or
	// xdg-open (browsershim.go), that OpenableURL lets open. Without it such a page is dropped.
	OnBrowserURL func(cmdID, url string)
	// Detach, closed, ends the foreground wait at once, the command going on in the background
	// (its owner was asked to sign in: the node hears so now, not in a minute).
	Detach <-chan struct{}
}

// Result is what a node hears of a command.
type Result struct {
	ID      string `json:"id"`
	Command string `json:"command"`
	Folder  string `json:"folder"`
	// Running: it goes on in the background; its end wakes the node.
	Running  bool   `json:"running"`
	ExitCode int    `json:"exitCode"`
	TimedOut bool   `json:"timedOut,omitempty"`
	Stopped  bool   `json:"stopped,omitempty"`
	Output   string `json:"output"`
	// More says how much output there is beyond what Output carries (computer_run_output).
	More    int     `json:"more,omitempty"`
	Seconds float64 `json:"seconds"`
}

// Command is a command a node started.
type Command struct {
	id, nodeID, line, folder string
	started                  time.Time
	cmd                      *exec.Cmd
	out                      *capped
	done                     chan struct{}
	ended                    time.Time
	code                     int
	timedOut, stopped        bool
	mu                       sync.Mutex
	background               bool
	onEnd                    func(Result)
	hooks                    hooks
}

// hooks are what watches a command besides its waiter: its browser helper, its sign-in codes,
// and who hears its end however it ends.
type hooks struct {
	id       string
	shim     *browserShim
	codes    *codeWatch
	finished func(Result)
}

// Run starts a command line through bash -c in the OS sandbox and waits for it up to the
// foreground wait: a command still going then goes on in the background.
func (c *Computer) Run(ctx context.Context, req RunRequest) (Result, error) {
	if strings.TrimSpace(req.Command) == "" {
		return Result{}, errors.New("Name a command to run.")
	}
	if req.Timeout <= 0 || req.Timeout > MaxRunTime {
		req.Timeout = MaxRunTime
	}
	if c.running(req.NodeID) >= maxRunningPerID {
		return Result{}, fmt.Errorf("You have %d commands going already; wait for one or stop it with computer_run_stop.", maxRunningPerID)
	}
	h := hooks{id: ledger.NewID("cmd_"), finished: req.Finished}
	shim, err := c.newBrowserShim(func(u string) {
		if req.OnBrowserURL == nil {
			c.o.Log.Info("computer: a command's page not opened", "command", h.id, "host", hostOf(u), "why", "no one to open it for")
			return
		}
		req.OnBrowserURL(h.id, u)
	})
	if err != nil {
		// A command runs without the helper rather than not at all; its pages then open nowhere.
		c.o.Log.Warn("computer: no browser helper", "err", err)
	}
	h.shim = shim
	if req.OnDeviceCode != nil {
		h.codes = &codeWatch{found: func(dc DeviceCode) { req.OnDeviceCode(h.id, dc) }}
	}
	cmd, err := c.command(req, shim)
	if err != nil {
		shim.close()
		return Result{}, err
	}
	k, err := c.start(req.NodeID, req.Command, req.Folder, cmd, req.Timeout, req.Background, req.Ended, h)
	if err != nil {
		shim.close()
		return Result{}, fmt.Errorf("The command could not start: %w.", err)
	}
	if !req.Background && c.waitForeground(ctx, k, req.Detach) {
		k.mu.Lock()
		k.background = k.ended.IsZero()
		k.mu.Unlock()
	}
	return c.result(k, 0), nil
}

// start runs cmd as one of a node's commands: its output kept, its end awaited (at most limit),
// onEnd called when it ends on its own after going to the background.
func (c *Computer) start(nodeID, line, folder string, cmd *exec.Cmd, limit time.Duration, background bool, onEnd func(Result), h hooks) (*Command, error) {
	if h.id == "" {
		h.id = ledger.NewID("cmd_")
	}
	k := &Command{id: h.id, nodeID: nodeID, line: line, folder: folder, started: c.o.Now(), cmd: cmd,
		out: &capped{max: KeptOutput}, done: make(chan struct{}), background: background, onEnd: onEnd, hooks: h}
	var out io.Writer = k.out
	if h.codes != nil {
		out = io.MultiWriter(k.out, h.codes)
	}
	// One writer for both, so the command's output and errors come through one pipe, in order.
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.cmds[k.id] = k
	c.mu.Unlock()
	go c.wait(k, limit)
	return k, nil
}

// waitForeground waits for k up to the foreground wait, the turn's end (the command goes on, and
// its end wakes the node) or interrupt. A command still going then runs on in the background. It
// reports whether interrupt came first.
func (c *Computer) waitForeground(ctx context.Context, k *Command, interrupt <-chan struct{}) bool {
	timer := time.NewTimer(c.o.ForegroundWait)
	defer timer.Stop()
	select {
	case <-k.done:
		return false
	case <-interrupt:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	k.mu.Lock()
	k.background = k.ended.IsZero()
	k.mu.Unlock()
	return false
}

// command is the process for req: bash -c inside the sandbox, in its folder, with a clean
// environment (none of the runtime's own tokens or model keys).
func (c *Computer) command(req RunRequest, shim *browserShim) (*exec.Cmd, error) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		if bash, err = exec.LookPath("sh"); err != nil {
			return nil, errors.New("This computer has neither bash nor sh to run a command with.")
		}
	}
	prog, args := bash, []string{"-c", req.Command}
	if c.sandboxed {
		prog, args, err = c.o.Sandbox.Command(c.sandboxFor(req), sandbox.Extra{}, req.Folder, bash, args)
		if err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(prog, args...)
	cmd.Dir = req.Folder
	fixed := map[string]string{"TERM": "dumb", "NO_COLOR": "1", "PAGER": "cat", "GIT_PAGER": "cat"}
	path := ""
	if shim != nil {
		fixed["BROWSER"], path = shim.env(os.Getenv("PATH"))
	}
	cmd.Env = agentproc.Env(os.Environ(), DropVar, c.o.Home, path, fixed, req.Env)
	cmd.Stdin = nil
	agentproc.OwnGroup(cmd)
	return cmd, nil
}

// sandboxFor is the OS sandbox of one command: it changes only the folders its decision named,
// and reads nothing the judge keeps from every run (keys, sign-ins, Ensemble's data).
func (c *Computer) sandboxFor(req RunRequest) engines.Sandbox {
	js := judgeSettings(Call{Folder: req.Folder}, c.Policy(nil, false))
	js.Writable = append(js.Writable, req.Write...)
	js.Mode = judge.ModeAsk // not unattended's whole home folder: only what the decision named
	p := judge.Sandbox(js, sandbox.OtherHomes(c.o.Home))
	return engines.Sandbox{On: true, Write: p.Write, DenyWrite: p.DenyWrite, DenyRead: p.DenyRead, AllowRead: p.AllowRead, Internet: true}
}

// DropVar keeps the runtime's own tokens and the model keys it was started with out of a
// node's commands and shells.
func DropVar(name string) bool {
	if agentproc.HostSession(name) || strings.HasPrefix(name, "ENSEMBLE_") {
		return true
	}
	for _, s := range []string{"_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

func (c *Computer) wait(k *Command, limit time.Duration) {
	timer := time.AfterFunc(limit, func() {
		k.mu.Lock()
		k.timedOut = true
		k.mu.Unlock()
		agentproc.SignalGroup(k.cmd, true)
	})
	err := k.cmd.Wait()
	timer.Stop()
	code := 0
	if err != nil {
		code = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
	}
	// What it left running in its group ends with it.
	agentproc.SignalGroup(k.cmd, true)
	// Its last line and the last page it handed over are heard before its end is.
	if k.hooks.codes != nil {
		k.hooks.codes.close()
	}
	k.hooks.shim.close()
	k.mu.Lock()
	k.code, k.ended = code, c.o.Now()
	bg, stopped, onEnd := k.background, k.stopped, k.onEnd
	k.mu.Unlock()
	close(k.done)
	if k.hooks.finished != nil {
		k.hooks.finished(c.result(k, 0))
	}
	if bg && !stopped && onEnd != nil {
		onEnd(c.result(k, 0))
	}
}

// result is the command's state, with its output from offset (redacted, at most ReturnedOutput).
func (c *Computer) result(k *Command, offset int) Result {
	k.mu.Lock()
	defer k.mu.Unlock()
	r := Result{ID: k.id, Command: k.line, Folder: k.folder, Running: k.ended.IsZero(), ExitCode: k.code, TimedOut: k.timedOut, Stopped: k.stopped}
	end := k.ended
	if end.IsZero() {
		end = c.o.Now()
	}
	r.Seconds = end.Sub(k.started).Round(10 * time.Millisecond).Seconds()
	text := c.o.Hide(k.out.String())
	if offset > len(text) {
		offset = len(text)
	}
	text = text[offset:]
	if len(text) > ReturnedOutput {
		cut := ReturnedOutput
		for cut > 0 && !utf8Start(text[cut]) {
			cut--
		}
		r.More = len(text) - cut
		text = text[:cut]
	}
	if k.out.dropped > 0 && offset == 0 {
		text = fmt.Sprintf("[the first %d bytes were not kept]\n", k.out.dropped) + text
	}
	r.Output = text
	return r
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// Output reads a command's output from offset.
func (c *Computer) Output(nodeID, id string, offset int) (Result, error) {
	k, err := c.find(nodeID, id)
	if err != nil {
		return Result{}, err
	}
	if offset < 0 {
		return Result{}, errors.New("The offset is a byte count from the start, 0 or more.")
	}
	return c.result(k, offset), nil
}

// Stop ends a command and everything it started; its end wakes no one.
func (c *Computer) Stop(nodeID, id string) (Result, error) {
	k, err := c.find(nodeID, id)
	if err != nil {
		return Result{}, err
	}
	k.mu.Lock()
	running := k.ended.IsZero()
	if running {
		k.stopped = true
	}
	k.mu.Unlock()
	if running {
		agentproc.SignalGroup(k.cmd, false)
		select {
		case <-k.done:
		case <-time.After(3 * time.Second):
			agentproc.SignalGroup(k.cmd, true)
			<-k.done
		}
	}
	return c.result(k, 0), nil
}

// find is a node's own command; ended ones are kept OutputKeptFor.
func (c *Computer) find(nodeID, id string) (*Command, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.o.Now()
	for key, k := range c.cmds {
		k.mu.Lock()
		old := !k.ended.IsZero() && now.Sub(k.ended) > OutputKeptFor
		k.mu.Unlock()
		if old {
			delete(c.cmds, key)
		}
	}
	k := c.cmds[id]
	if k == nil || k.nodeID != nodeID {
		return nil, fmt.Errorf("You have no command %q (its id starts with cmd_; output is kept %s after it ends).", id, OutputKeptFor)
	}
	return k, nil
}

func (c *Computer) running(nodeID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.cmds {
		k.mu.Lock()
		if k.nodeID == nodeID && k.ended.IsZero() {
			n++
		}
		k.mu.Unlock()
	}
	return n
}

// Close stops every command still going.
func (c *Computer) Close() {
	c.mu.Lock()
	var all []*Command
	for _, k := range c.cmds {
		all = append(all, k)
	}
	c.mu.Unlock()
	for _, k := range all {
		k.mu.Lock()
		k.stopped = k.stopped || k.ended.IsZero()
		k.mu.Unlock()
		agentproc.SignalGroup(k.cmd, true)
	}
}

// capped keeps the last max bytes written to it.
type capped struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int
}

func (w *capped) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if over := len(w.buf) - w.max; over > 0 {
		w.buf = append(w.buf[:0:0], w.buf[over:]...)
		w.dropped += over
	}
	return len(p), nil
}

func (w *capped) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

// Running lists a node's commands still going, oldest first.
func (c *Computer) Running(nodeID string) []Result {
	c.mu.Lock()
	var ks []*Command
	for _, k := range c.cmds {
		k.mu.Lock()
		if k.nodeID == nodeID && k.ended.IsZero() {
			ks = append(ks, k)
		}
		k.mu.Unlock()
	}
	c.mu.Unlock()
	slices.SortFunc(ks, func(a, b *Command) int { return a.started.Compare(b.started) })
	out := make([]Result, 0, len(ks))
	for _, k := range ks {
		r := c.result(k, 0)
		r.Output, r.More = "", 0 // what is going, not what it said
		out = append(out, r)
	}
	return out
}
