package enginetest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// EnvNetns marks a test binary re-executed by [InLoopbackNamespace]; its
// value is the name of the test that runs inside.
const EnvNetns = "ENGINETEST_NETNS"

// InLoopbackNamespace runs the calling test inside a network namespace that
// has nothing but a loopback interface, so a real agent CLI under test can
// reach the scripted model on 127.0.0.1 and nothing else.
//
// Called from the test process, it re-executes the test binary for just
// this test under `unshare -n` (root; `ip link set lo up` first), streams
// the inner run's output to t.Log, fails t if the inner run failed, and
// returns false: the caller returns. Inside the namespace it checks that
// only loopback is up and returns true: the caller goes on with the test.
//
//	func TestRealCLI(t *testing.T) {
//		bin := enginetest.InstallNPM(t, "@anthropic-ai/claude-code", "2.1.197", "claude") // outside: network
//		if !enginetest.InLoopbackNamespace(t) {
//			return
//		}
//		s := enginetest.NewServer(t) // 127.0.0.1 inside the namespace
//		…
//	}
//
// Work that needs the network (installing the CLI) goes before the call: it
// runs in both processes, so it must be reusable (see [InstallNPM]).
//
// When the namespace cannot be made (not Linux, not root, no unshare or ip)
// the test is skipped with the reason, unless the environment has CI=true:
// then it fails, so a CI run cannot pass without having run it.
func InLoopbackNamespace(t *testing.T) bool {
	t.Helper()
	return inNamespace(t, nil)
}

// InLoopbackNamespaceWithout is [InLoopbackNamespace] on a computer without the programs named
// (bwrap, socat): inside, a mount namespace of its own has /dev/null over each, wherever it is,
// so a test sees what a person without them sees.
func InLoopbackNamespaceWithout(t *testing.T, programs ...string) bool {
	t.Helper()
	var hide []string
	for _, p := range programs {
		for _, d := range []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"} {
			if fi, err := os.Stat(d + "/" + p); err == nil && !fi.IsDir() {
				if real, err := filepath.EvalSymlinks(d + "/" + p); err == nil && !slices.Contains(hide, real) {
					hide = append(hide, real)
				}
			}
		}
		if found, err := exec.LookPath(p); err == nil {
			if real, err := filepath.EvalSymlinks(found); err == nil && !slices.Contains(hide, real) {
				hide = append(hide, real)
			}
		}
	}
	return inNamespace(t, hide)
}

func inNamespace(t *testing.T, hide []string) bool {
	t.Helper()
	if os.Getenv(EnvNetns) == t.Name() {
		for _, p := range hide {
			if _, err := exec.LookPath(filepath.Base(p)); err == nil {
				if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
					t.Fatalf("enginetest: %s is still there inside the namespace", p)
				}
			}
		}
		checkLoopbackOnly(t)
		return true
	}
	if os.Getenv(EnvNetns) != "" {
		t.Fatalf("enginetest: %s runs inside the namespace made for %s; call InLoopbackNamespace from the top test only", t.Name(), os.Getenv(EnvNetns))
	}
	switch {
	case runtime.GOOS != "linux":
		CannotRun(t, "a loopback-only network namespace needs Linux (unshare -n)")
	case os.Geteuid() != 0:
		CannotRun(t, "a loopback-only network namespace needs root (unshare -n); run the tests as root, e.g. in the project's container")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		CannotRun(t, "unshare (util-linux) is not installed; it makes the loopback-only network namespace")
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		CannotRun(t, "ip (iproute2) is not installed; it brings loopback up in the namespace")
	}
	script := `"$0" link set lo up`
	flags := []string{"-n"}
	for _, p := range hide {
		script += ` && mount --bind /dev/null '` + p + `'`
	}
	if len(hide) > 0 {
		flags = append(flags, "-m")
	}
	args := append(flags, "--", "/bin/sh", "-c", script+` && exec "$@"`,
		ip, os.Args[0], "-test.run="+runPattern(t.Name()), "-test.count=1", "-test.v")
	cmd := exec.Command(unshare, args...)
	if d, ok := t.Deadline(); ok {
		cmd.Args = append(cmd.Args, "-test.timeout="+fmt.Sprint(timeUntil(d)))
	}
	cmd.Env = append(os.Environ(), EnvNetns+"="+t.Name())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("enginetest: unshare -n: %v", err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		t.Log(sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("enginetest: %s failed inside the loopback-only namespace: %v", t.Name(), err)
	}
	return false
}

// CannotRun skips t with reason, or fails it when CI=true.
func CannotRun(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("cannot run in CI: %s", reason)
	}
	t.Skipf("skipped: %s (with CI=true this fails)", reason)
}

// runPattern is a -test.run pattern matching exactly the test named name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// checkLoopbackOnly fails t unless loopback is the only interface up.
func checkLoopbackOnly(t *testing.T) {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatalf("enginetest: list interfaces: %v", err)
	}
	lo := false
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 {
			continue
		}
		if i.Flags&net.FlagLoopback == 0 {
			t.Fatalf("enginetest: interface %s is up inside the namespace; refusing to run a real CLI with a way out", i.Name)
		}
		lo = true
	}
	if !lo {
		t.Fatal("enginetest: loopback is not up inside the namespace")
	}
}
