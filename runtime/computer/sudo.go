package computer

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ensemblework/ensemble/engines/agentproc"
	"github.com/ensemblework/ensemble/runtime/judge"
)

// The askpass helper's environment: where it asks for the password and the one-time token it
// shows (spec 002 §8.13, as the administrator). Ensemble's own program is the helper: run with
// these set, it prints the password the runtime hands it once, and nothing else.
const (
	AskpassSocketVar = "ENSEMBLE_ASKPASS_SOCKET"
	AskpassTokenVar  = "ENSEMBLE_ASKPASS_TOKEN"
)

// SudoTries is how many passwords a sudo card takes.
const SudoTries = 3

// ErrWrongPassword is sudo refusing the password it was given; ErrPasswordNeeded sudo asking for
// one when none was given.
var (
	ErrWrongPassword  = errors.New("sudo did not take the password")
	ErrPasswordNeeded = errors.New("sudo asks for a password here")
)

// SudoHash is the name a sudo card's sealed box carries, and all the ledger keeps of the command:
// its SHA-256 in hex.
func SudoHash(command string) string {
	h := sha256.Sum256([]byte(command))
	return hex.EncodeToString(h[:])
}

// adminShells are programs that would open an administrator's shell, or read a script from
// anywhere, as the first program of a sudo command.
var adminShells = []string{"bash", "sh", "zsh", "fish", "dash", "ksh", "csh", "tcsh", "su", "sudo", "doas", "pkexec", "env", "script", "screen", "tmux"}

// SudoProblem is why a command may not run as the administrator, or "" (spec 002 §8.13's
// dangerous forms as the administrator): the floor, an open administrator's shell, a script from
// the internet run unseen, and reading keys, password hashes or another account's files.
func SudoProblem(command string, p Policy) string {
	command = strings.TrimSpace(command)
	switch {
	case command == "":
		return "Name the exact command to run as the administrator."
	case strings.HasPrefix(command, "sudo "):
		return "Give the command without sudo: computer_sudo runs it as the administrator."
	case len(command) > 4000:
		return "The command is longer than 4,000 characters; put it in a script in your folder, show your owner, then run the script."
	}
	v := judge.Decide(judge.Call{Tool: judge.ToolShell, Command: command, Cwd: p.Home}, judgeSettings(Call{Folder: p.Home}, p))
	switch {
	case v.Decision != judge.Refuse || v.Rule == "never":
		// What no run may do (services, packages) is the owner's choice on the card.
	case strings.HasPrefix(v.Rule, "floor"):
		return v.Reason + " Your owner can run it themselves in their own terminal."
	default:
		return errKeys
	}
	progs := v.Touches.Programs
	if len(progs) > 0 && slices.Contains(adminShells, filepath.Base(progs[0])) || slices.ContainsFunc(progs, func(s string) bool { return s == "sudo" || s == "su" }) {
		return "That opens a shell as the administrator; ask for one exact command instead, so your owner sees what runs."
	}
	fetches := slices.ContainsFunc(progs, func(s string) bool { return s == "curl" || s == "wget" })
	if fetches && slices.ContainsFunc(progs, func(s string) bool {
		return slices.Contains(adminShells, s) || s == "python3" || s == "python" || s == "perl"
	}) {
		return "That runs a script from the internet as the administrator, unseen: download it to your folder, show your owner what it does, then run the file."
	}
	for _, r := range append(v.Touches.Reads, v.Touches.Writes...) {
		if r == "/etc/shadow" || r == "/etc/gshadow" || within(r, "/root") || (within(r, "/home") && p.Home != "" && !within(r, p.Home)) || strings.Contains(r, "/.ssh/") {
			return errKeys
		}
	}
	return ""
}

const errKeys = "Keys, password hashes and other accounts' files never leave their files through a node, as the administrator or not."

// SudoRequest is one command to run as the administrator, as its card allowed.
type SudoRequest struct {
	NodeID, Folder, Command string
	// Password is what the owner typed, opened from its sealed box; nil runs sudo without one
	// (passwordless sudo). It is zeroed once sudo has read it.
	Password []byte
	Ended    func(Result)
}

// Sudo runs the command with sudo -A -k: sudo asks the askpass helper, which gets the password
// from this process once, over a socket only it is told of. A second ask means sudo refused the
// password: the command is ended and ErrWrongPassword returned. The password is never an
// argument, an environment value, a file or output.
func (c *Computer) Sudo(ctx context.Context, req SudoRequest) (Result, error) {
	defer clear(req.Password)
	passwordless := req.Password == nil
	sudo, err := exec.LookPath(cmp.Or(c.o.SudoProgram, "sudo"))
	if err != nil {
		return Result{}, errors.New("This computer has no sudo.")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return Result{}, errors.New("This computer has no bash to run the command with.")
	}
	ask, err := c.askpass(req.Password)
	if err != nil {
		return Result{}, err
	}
	defer ask.close()
	cmd := exec.Command(sudo, "-A", "-k", "--", bash, "-c", req.Command)
	cmd.Dir = req.Folder
	cmd.Env = agentproc.Env(os.Environ(), DropVar, c.o.Home, "", map[string]string{
		"SUDO_ASKPASS": c.askpassProgram(), AskpassSocketVar: ask.path, AskpassTokenVar: ask.token, "TERM": "dumb", "NO_COLOR": "1"})
	agentproc.OwnGroup(cmd)
	k, err := c.start(req.NodeID, req.Command, req.Folder, cmd, MaxRunTime, false, req.Ended, hooks{})
	if err != nil {
		return Result{}, fmt.Errorf("sudo could not start: %w.", err)
	}
	if c.waitForeground(ctx, k, ask.refused) {
		agentproc.SignalGroup(cmd, true)
		<-k.done
		if passwordless {
			return Result{}, ErrPasswordNeeded
		}
		return Result{}, ErrWrongPassword
	}
	r := c.result(k, 0)
	if !r.Running && r.ExitCode != 0 && ask.asks() > 1 {
		return Result{}, ErrWrongPassword
	}
	return r, nil
}

func (c *Computer) askpassProgram() string { return cmp.Or(c.o.Askpass, c.o.Binary) }

// askServer hands the password to the first askpass that shows its token, and says so when sudo
// asks again (it refused the password).
type askServer struct {
	path, token string
	ln          net.Listener
	dir         string
	refused     chan struct{}
	mu          sync.Mutex
	n           int
}

func (c *Computer) askpass(password []byte) (*askServer, error) {
	dir, err := os.MkdirTemp("", "ensemble-askpass-")
	if err != nil {
		return nil, fmt.Errorf("computer: askpass: %w", err)
	}
	os.Chmod(dir, 0o700)
	a := &askServer{path: filepath.Join(dir, "s"), dir: dir, refused: make(chan struct{})}
	tok := make([]byte, 32)
	rand.Read(tok)
	a.token = hex.EncodeToString(tok)
	if a.ln, err = net.Listen("unix", a.path); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("computer: askpass: %w", err)
	}
	pw := slices.Clone(password)
	go func() {
		defer clear(pw)
		for {
			conn, err := a.ln.Accept()
			if err != nil {
				return
			}
			a.serve(conn, pw)
		}
	}()
	return a, nil
}

func (a *askServer) serve(conn net.Conn, pw []byte) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(line)), []byte(a.token)) != 1 {
		return
	}
	a.mu.Lock()
	a.n++
	n := a.n
	a.mu.Unlock()
	if n == 1 && pw != nil {
		conn.Write(append(slices.Clone(pw), '\n'))
		return
	}
	if n == 2 || pw == nil {
		close(a.refused) // sudo asked again, or asked for a password none was given for
	}
}

func (a *askServer) asks() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

func (a *askServer) close() {
	a.ln.Close()
	os.RemoveAll(a.dir)
}

// Askpass is the askpass helper's whole work, for Ensemble's own program run by sudo: it shows
// the token on the socket it was told of and prints what comes back. It returns the exit code.
func Askpass() int {
	path, token := os.Getenv(AskpassSocketVar), os.Getenv(AskpassTokenVar)
	if path == "" || token == "" {
		fmt.Fprintln(os.Stderr, "ensemble: this askpass runs only for a sudo card Ensemble started.")
		return 1
	}
	conn, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return 1
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintln(conn, token)
	b := make([]byte, 4096)
	n, _ := conn.Read(b)
	defer clear(b)
	if n == 0 {
		return 1
	}
	os.Stdout.Write(b[:n])
	return 0
}
