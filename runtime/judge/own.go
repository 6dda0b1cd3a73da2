package judge

import (
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// A run never drives Ensemble itself: it may not answer its own Needs me, add tasks, start runs
// or change anything else through Ensemble's client commands, nor call the runtime's own address
// (where its API and the runs' MCP servers are) with any program. What the run needs from Ensemble
// it has as its MCP tools, which the agent reaches itself, not through a command.

// ensembleQuiet are Ensemble's own commands that change nothing and read nothing of the runtime.
var ensembleQuiet = set("judge", "help", "--help", "-h", "--version", "version", "completion")

// whyOwnRuntime finishes a refusal of a command that drives Ensemble.
const whyOwnRuntime = "a run may never drive Ensemble itself (answer its own Needs me, add tasks, start runs); ask the person with ask_person instead."

// isEnsemble reports a command that runs Ensemble's own program.
func (j *judgement) isEnsemble(c *command) bool {
	if c.prog == "ensemble" {
		return true
	}
	b := j.s.Binary
	if b == "" || len(c.args) == 0 || !c.args[0].known {
		return false
	}
	v := c.args[0].val
	if !strings.Contains(v, "/") {
		return false
	}
	p := resolve(c.cwd, v)
	if p == "" {
		return false
	}
	return p == b || j.real(p) == j.real(b) || j.copies[p]
}

// ownRuntime refuses Ensemble's client commands and any call to the runtime's own address.
func (j *judgement) ownRuntime(c *command, src string) {
	if j.isEnsemble(c) {
		sub := ""
		for i := 1; i < len(c.args); i++ {
			v := c.args[i].val
			if v == "--data" {
				i++
				continue
			}
			if strings.HasPrefix(v, "--data=") {
				continue
			}
			sub = v
			if !c.args[i].known {
				sub = unknown
			}
			break
		}
		if !hasKey(ensembleQuiet, sub) {
			j.refuse(rankNever, "own-runtime", src+" runs Ensemble's own commands; "+whyOwnRuntime)
		}
	}
	port := j.runtimePort()
	if port == "" {
		return
	}
	words := make([]word, 0, len(c.args)+len(c.inline)+len(c.redirs)+len(c.envs))
	words = append(words, c.args...)
	words = append(words, c.inline...)
	for _, r := range c.redirs {
		words = append(words, r.target)
	}
	for _, w := range c.envs {
		words = append(words, w)
	}
	loop, bare, unknownPort := false, false, false
	for _, w := range words {
		v := w.val
		if portAfterColon(v, port) || devTCP(v, port) {
			j.refuse(rankNever, "own-runtime", src+" reaches Ensemble's own address ("+j.s.Runtime+"); "+whyOwnRuntime)
			return
		}
		if mentionsLoopback(v) {
			loop = true
			if loopbackUnknownPort(v) {
				unknownPort = true
			}
		}
		if standalonePort(v, port) || portInRange(v, port) {
			bare = true
		}
	}
	if loop && bare {
		j.refuse(rankNever, "own-runtime", src+" reaches Ensemble's own address ("+j.s.Runtime+"); "+whyOwnRuntime)
		return
	}
	if unknownPort {
		j.ask("own-runtime", src+" reaches a port on this computer Ensemble cannot tell before it runs, which could be Ensemble's own, so it waits for your answer.", "")
	}
}

// runtimePort is the port of Settings.Runtime.
func (j *judgement) runtimePort() string {
	if j.s.Runtime == "" {
		return ""
	}
	_, port, err := net.SplitHostPort(j.s.Runtime)
	if err != nil || !allDigits(port) {
		return ""
	}
	return strings.TrimLeft(port, "0")
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// portAt reports the port as a whole number at v[i:] (leading zeros allowed).
func portAt(v string, i int, port string) bool {
	k := i
	for k < len(v) && v[k] == '0' {
		k++
	}
	if !strings.HasPrefix(v[k:], port) {
		return false
	}
	end := k + len(port)
	return end >= len(v) || !isDigit(v[end])
}

// portAfterColon reports :PORT (host:port, a URL, socat's TCP:host:port).
func portAfterColon(v, port string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] == ':' && i+1 < len(v) && isDigit(v[i+1]) && portAt(v, i+1, port) {
			return true
		}
	}
	return false
}

var devTCPRe = regexp.MustCompile(`/dev/(tcp|udp)/[^/\s]*/0*([0-9]+)`)

// devTCP reports bash's /dev/tcp/HOST/PORT.
func devTCP(v, port string) bool {
	for _, m := range devTCPRe.FindAllStringSubmatch(v, -1) {
		if strings.TrimLeft(m[2], "0") == port {
			return true
		}
	}
	return false
}

// standalonePort reports the port as a number of its own in v (nc 127.0.0.1 PORT, ("::1", PORT)).
func standalonePort(v, port string) bool {
	for i := 0; i < len(v); i++ {
		if isDigit(v[i]) && (i == 0 || !isDigit(v[i-1]) && v[i-1] != '.') && portAt(v, i, port) {
			k := i
			for k < len(v) && isDigit(v[k]) {
				k++
			}
			if k < len(v) && v[k] == '.' && k+1 < len(v) && isDigit(v[k+1]) {
				continue // a version or an address, not a port
			}
			return true
		}
	}
	return false
}

var loopbackRe = regexp.MustCompile(`(?i)(localhost|\b127\.[0-9.]+|\b0\.0\.0\.0\b|\[?::1\]?|\[::\]|\b0x7f[0-9a-f.x]*|\b2130706433\b|\b0177\.|ip6-localhost|ip6-loopback|\bloopback\b)`)

// mentionsLoopback reports a word naming this computer's own addresses in any of their spellings.
func mentionsLoopback(v string) bool { return loopbackRe.MatchString(v) }

var loopbackPortRe = regexp.MustCompile(`(?i)(localhost|127\.[0-9.]+|0\.0\.0\.0|\[::1?\]):[0-9]*` + "\x00")

var portRangeRe = regexp.MustCompile(`^([0-9]+)-([0-9]+)$`)

// portInRange reports a port range (nc -z host 47000-48000) that holds the port.
func portInRange(v, port string) bool {
	m := portRangeRe.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	lo, err1 := strconv.Atoi(m[1])
	hi, err2 := strconv.Atoi(m[2])
	p, err3 := strconv.Atoi(port)
	return err1 == nil && err2 == nil && err3 == nil && lo <= p && p <= hi
}

// loopbackUnknownPort reports localhost:$PORT: a port on this computer only known when it runs.
func loopbackUnknownPort(v string) bool { return loopbackPortRe.MatchString(v) }

// RuntimeAddr is the host:port of a runtime URL ("http://127.0.0.1:4000/mcp/run" → 127.0.0.1:4000),
// for Settings.Runtime; "" when it has none.
func RuntimeAddr(url string) string {
	rest := url
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	if _, port, err := net.SplitHostPort(rest); err != nil || port == "" {
		return ""
	}
	return rest
}

// binaryPath cleans Settings.Binary for comparing.
func binaryPath(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}
