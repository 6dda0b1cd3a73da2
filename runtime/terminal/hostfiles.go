package terminal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// Host limits.
const (
	// replayBytes is how much of a shell's output a host keeps for the client that attaches next:
	// enough to redraw a full screen and the scrollback of an ordinary session.
	replayBytes = 256 << 10
	// hostGrace is how long a host whose shell has exited keeps its exit code for a client that
	// has not seen it, before it removes its files and exits.
	hostGrace = 10 * time.Minute
	// hostAttachTimeout bounds an attach's handshake, and hostWriteTimeout one frame to a client
	// that does not read: the client is dropped, the shell goes on.
	hostAttachTimeout = 5 * time.Second
	hostWriteTimeout  = 10 * time.Second
	// hostCheckEvery is how often a host checks that its json is still there: a data folder
	// deleted under it (a test's, or one the person removed) takes its shell with it.
	hostCheckEvery = 30 * time.Second
)

// HostOptions say how a Manager starts its sessions in terminal hosts, processes of their own that
// hold the PTY and outlive the runtime (as tmux's server does), so that a long command is not lost
// when the runtime stops or is upgraded. See [HostMain].
type HostOptions struct {
	// Program is Ensemble's own program (os.Executable), run with Args to start a host.
	Program string
	// Args are the arguments that make Program a host; ["terminal-host"] when nil.
	Args []string
	// DataDir is Ensemble's data folder; the hosts' sockets and files are in its "terminals" folder.
	DataDir string
}

func (h *HostOptions) dir() string { return filepath.Join(h.DataDir, "terminals") }

func (h *HostOptions) args() []string {
	if h.Args == nil {
		return []string{"terminal-host"}
	}
	return h.Args
}

// hostSpec is what the runtime gives a new host on its stdin: never on its command line, where
// any process on the computer could read the token and the environment.
type hostSpec struct {
	ID      string        `json:"id"`
	Node    string        `json:"node,omitempty"`
	Folder  string        `json:"folder"`
	Command string        `json:"command,omitempty"`
	Shell   string        `json:"shell"`
	Args    []string      `json:"args"`
	Env     []string      `json:"env"`
	Cols    int           `json:"cols"`
	Rows    int           `json:"rows"`
	Dir     string        `json:"dir"` // where the socket and the json go
	Token   string        `json:"token"`
	MaxAge  time.Duration `json:"maxAge,omitempty"`
}

// hostInfo is a host's <id>.json, readable by its owner alone (0600): the token in it is what
// lets a client attach.
type hostInfo struct {
	ID      string    `json:"id"`
	Node    string    `json:"node,omitempty"`
	Folder  string    `json:"folder"`
	Command string    `json:"command,omitempty"`
	PID     int       `json:"pid"`   // the host's
	Shell   int       `json:"shell"` // the shell's, which leads its own session and process group
	Started time.Time `json:"started"`
	Token   string    `json:"token"`
}

// idRe is what a session id looks like (newID); a host is only ever given one, so an id never
// names a path outside the folder.
var idRe = regexp.MustCompile(`^ts[0-9a-f]{16}$`)

func sockPath(dir, id string) string { return filepath.Join(dir, id+".sock") }
func infoPath(dir, id string) string { return filepath.Join(dir, id+".json") }

// writeInfo writes the host's json whole or not at all: a runtime that lists the folder never reads
// half of one.
func writeInfo(dir string, in hostInfo) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, in.ID+".*.tmp")
	if err != nil {
		return fmt.Errorf("write the terminal's file: %w", err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("write the terminal's file: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write the terminal's file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write the terminal's file: %w", err)
	}
	if err := os.Rename(f.Name(), infoPath(dir, in.ID)); err != nil {
		return fmt.Errorf("write the terminal's file: %w", err)
	}
	return nil
}

// readInfos reads every host's json in dir, skipping what is not one.
func readInfos(dir string) ([]hostInfo, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []hostInfo
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var in hostInfo
		if json.Unmarshal(b, &in) != nil || !idRe.MatchString(in.ID) || infoPath(dir, in.ID) != p {
			continue
		}
		out = append(out, in)
	}
	return out, nil
}

// makeHostDir makes the hosts' folder, or makes it private again: its permissions are what keep
// other users from the sockets in it.
func makeHostDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("make the terminals folder: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("make the terminals folder private: %w", err)
	}
	return nil
}
