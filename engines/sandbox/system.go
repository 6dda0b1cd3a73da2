package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ensemblework/ensemble/engines"
)

// System is this computer as the sandboxes see it: its system, where its programs are, and
// whether bubblewrap can make its namespaces. [Local] is the real one.
type System struct {
	GOOS string
	// Look finds a program the sandbox needs, in the system's own folders first.
	Look func(name string) (string, error)
	// Try runs `true` inside bubblewrap at bwrap and returns what it printed when it fails.
	Try func(ctx context.Context, bwrap string) error
	// Sysctl reads a kernel setting ("kernel.apparmor_restrict_unprivileged_userns"), "" when
	// there is none.
	Sysctl func(name string) string
	// Exists reports whether a file is there (/dev/net/tun).
	Exists func(path string) bool
	// Root: this process runs as root, which makes namespaces whatever the settings say.
	Root bool
}

// Local is this computer.
func Local() System {
	return System{GOOS: runtime.GOOS, Look: lookSystem, Try: tryBwrap, Sysctl: sysctl,
		Exists: func(p string) bool { _, err := os.Stat(p); return err == nil }, Root: os.Geteuid() == 0}
}

// systemDirs are searched before PATH: a sandbox program is the system's, never one a run could
// have put in a folder on the PATH.
var systemDirs = []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"}

func lookSystem(name string) (string, error) {
	for _, d := range systemDirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(name)
}

func tryBwrap(ctx context.Context, bwrap string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	t, err := lookSystem("true")
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, bwrap, "--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/",
		"--dev", "/dev", "--proc", "/proc", "--", t).CombinedOutput()
	if err != nil {
		line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if line == "" {
			return err
		}
		return errors.New(line)
	}
	return nil
}

func sysctl(name string) string {
	b, err := os.ReadFile(filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/")))
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

// packages are the Debian and Ubuntu packages that hold each program.
var packages = map[string]string{
	"bwrap": "bubblewrap", "socat": "socat", "slirp4netns": "slirp4netns", "iptables": "iptables",
	"unshare": "util-linux", "nsenter": "util-linux",
}

// Check says whether a sandbox that needs programs (bwrap, socat, …) can run here: nil when it
// can, else an [engines.NoSandbox] error whose text is one sentence naming what to
// install or to change, or to turn the sandbox off for the run. who names the sandbox in that
// sentence ("Claude Code's sandbox", "Ensemble's sandbox for OpenCode").
func (s System) Check(ctx context.Context, who string, programs ...string) error {
	off := "or turn the sandbox off for this run (Ensemble still judges every call the agent asks to make)"
	switch s.GOOS {
	case "linux":
	case "darwin":
		if _, err := s.Look("sandbox-exec"); err != nil {
			return engines.NoSandbox(fmt.Sprintf("%s needs sandbox-exec, which this Mac does not have; %s.", who, off))
		}
		return nil
	case "windows":
		return engines.NoSandbox(fmt.Sprintf("%s does not run on Windows itself: run Ensemble in WSL, %s.", who, off))
	default:
		return engines.NoSandbox(fmt.Sprintf("%s does not run on %s; %s.", who, s.GOOS, off))
	}
	var lack, pkgs []string
	bwrap := ""
	for _, p := range programs {
		path, err := s.Look(p)
		if err != nil {
			lack = append(lack, p)
			if pk := packages[p]; pk != "" && !slices.Contains(pkgs, pk) {
				pkgs = append(pkgs, pk)
			}
			continue
		}
		if p == "bwrap" {
			bwrap = path
		}
	}
	if len(lack) > 0 {
		return engines.NoSandbox(fmt.Sprintf("%s needs %s, which this computer does not have: install %s (`sudo apt install %s`), %s.",
			who, and(lack), and(pkgs), strings.Join(pkgs, " "), off))
	}
	if slices.Contains(programs, "slirp4netns") && !s.Exists("/dev/net/tun") {
		return engines.NoSandbox(fmt.Sprintf("%s needs /dev/net/tun, which this computer does not have; load the tun module (`sudo modprobe tun`), %s.", who, off))
	}
	if bwrap == "" {
		// A sandbox with its own bubblewrap (Codex's) needs the same namespaces; without a
		// bubblewrap here to try, the kernel's settings tell.
		if s.Root || !s.namespacesOff() {
			return nil
		}
		return engines.NoSandbox(s.whyNoNamespaces(who, errors.New("user namespaces are not allowed"), off))
	}
	if err := s.Try(ctx, bwrap); err != nil {
		return engines.NoSandbox(s.whyNoNamespaces(who, err, off))
	}
	return nil
}

// namespacesOff reports kernel settings that keep an unprivileged bubblewrap from starting.
func (s System) namespacesOff() bool {
	return s.Sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1" || s.Sysctl("user.max_user_namespaces") == "0" ||
		s.Sysctl("kernel.unprivileged_userns_clone") == "0"
}

// whyNoNamespaces is the sentence for a bubblewrap that cannot start: the commonest causes named
// with their fix.
func (s System) whyNoNamespaces(who string, err error, off string) string {
	switch {
	case s.Sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
		return who + " cannot start bubblewrap: AppArmor keeps programs from making the user namespaces it needs " +
			"(kernel.apparmor_restrict_unprivileged_userns is 1, as on Ubuntu 24.04); allow bubblewrap with an AppArmor profile " +
			"(`sudo apt install apparmor-profiles` puts one in /usr/share/apparmor/extra-profiles/bwrap-userns-restrict; copy it to /etc/apparmor.d/ and reload AppArmor), " + off + "."
	case s.Sysctl("user.max_user_namespaces") == "0":
		return who + " cannot start bubblewrap: user namespaces are turned off here (user.max_user_namespaces is 0); set it above 0 (`sudo sysctl user.max_user_namespaces=15000`), " + off + "."
	case s.Sysctl("kernel.unprivileged_userns_clone") == "0":
		return who + " cannot start bubblewrap: unprivileged user namespaces are turned off here (kernel.unprivileged_userns_clone is 0); set it to 1 (`sudo sysctl kernel.unprivileged_userns_clone=1`), " + off + "."
	}
	return who + " cannot start bubblewrap here (" + strings.TrimSuffix(err.Error(), ".") + "); " + off + "."
}

// Extra is what an agent needs inside Ensemble's sandbox beside the run's own folders.
type Extra struct {
	// Write are the agent's own state folders (sessions, logs, caches).
	Write []string
	// Scratch maps a folder the agent must be able to change while it runs (its settings folder)
	// to a copy of it made for the run: on Linux the agent sees the copy there and its changes go
	// with the copy; on macOS, which cannot show one folder in another's place, the folder is
	// writable but what is in it already is not.
	Scratch map[string]string
	// Terminal keeps the terminal the program runs on as its controlling one (no new session),
	// for a shell on a pseudo-terminal: job control and Ctrl+C work. What it could push into
	// that terminal's input runs in the same sandbox.
	Terminal bool
}

// Command is the program and arguments that run bin with args in folder inside Ensemble's own
// sandbox under sb and extra. Call [System.Check] first: Command does not start anything.
func (s System) Command(sb engines.Sandbox, extra Extra, folder, bin string, args []string) (string, []string, error) {
	argv := append([]string{bin}, args...)
	switch s.GOOS {
	case "linux":
		bwrap, err := s.Look("bwrap")
		if err != nil {
			return "", nil, engines.NoSandbox("Ensemble's sandbox needs bubblewrap, which is not installed.")
		}
		return bwrap, bwrapArgs(sb, extra, realPath(folder), argv, statKind, realPath), nil
	case "darwin":
		se, err := s.Look("sandbox-exec")
		if err != nil {
			return "", nil, engines.NoSandbox("Ensemble's sandbox needs sandbox-exec, which this Mac does not have.")
		}
		return se, append([]string{"-p", seatbeltProfile(sb, extra, realPath, existing)}, argv...), nil
	}
	return "", nil, engines.NoSandbox(fmt.Sprintf("Ensemble has no sandbox of its own on %s.", s.GOOS))
}

// existing lists what is in a folder now.
func existing(dir string) []string {
	es, _ := os.ReadDir(dir)
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}

// and joins words as a sentence does: "a", "a and b", "a, b and c".
func and(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// Off is the receipt of a run with the sandbox turned off.
var Off = engines.Enforcement{Note: "The sandbox is off for this run: nothing but the judge stands between its commands and your files."}

// Own is the receipt of a run whose agent's own sandbox confines its commands; title names it
// ("Claude Code").
func Own(by, title string) engines.Enforcement {
	return engines.Enforcement{By: by, Note: title + "'s own OS sandbox confines its commands to the run's folders, and the judge decides each call."}
}

// Whole is the receipt of a run inside Ensemble's own sandbox.
func Whole(title string) engines.Enforcement {
	return engines.Enforcement{By: "ensemble", Whole: true,
		Note: "Ensemble's OS sandbox confines " + title + " and everything it starts to the run's folders, and the judge decides each call."}
}

// Receipt is host with enf put on the run's started event: the driver's word on which sandbox
// confines the run, which the runtime puts on every tool step of its trace.
func Receipt(host engines.Host, enf engines.Enforcement) engines.Host {
	return receiptHost{host, enf}
}

type receiptHost struct {
	engines.Host
	enf engines.Enforcement
}

func (h receiptHost) Event(ev engines.Event) {
	if ev.Kind == engines.EventStarted && ev.Enforcement == nil {
		enf := h.enf
		ev.Enforcement = &enf
	}
	h.Host.Event(ev)
}
