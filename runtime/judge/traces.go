package judge

import "strings"

// Debuggers and tracers that attach to a running process read its memory and environment: the
// keys and sign-ins of whatever runs on this computer, Ensemble's among them. Tracing a program the
// command starts itself (strace ./x, gdb --args ./x) is the program's own business and follows the
// mode; attaching to another is refused, like reading /proc/<pid>/mem.

// attachers are programs that attach to other processes, with the options that do it; "*" means
// the program attaches whatever it is given.
var attachers = map[string][]string{
	"strace": {"-p", "--attach"}, "ltrace": {"-p"}, "gdb": {"-p", "--pid", "-pid"},
	"lldb": {"-p", "--attach-pid", "-n", "--attach-name", "-w", "--wait-for"}, "gcore": {"*"}, "reptyr": {"*"},
	"pyrasite": {"*"}, "criu": {"*"}, "gdbserver": {"--attach"}, "dtruss": {"-p"}, "dtrace": {"-p"},
	"perf": {"-p", "--pid", "-t", "--tid"}, "bpftrace": {"-p"}, "py-spy": {"-p", "--pid", "dump"},
	"rbspy": {"-p", "--pid", "snapshot"}, "frida": {"-p", "--attach-pid", "-n", "--attach-name", "-N"},
	"frida-trace": {"-p", "-n", "-N"}, "memdump": {"*"}, "procdump": {"*"}, "pmap": {"*"}, "pstack": {"*"},
	"eu-stack": {"-p", "--pid"}, "ptrace": {"*"}, "scanmem": {"*"}, "gdb-multiarch": {"-p", "--pid"},
	"sample": {"*"}, "spindump": {"*"}, "heap": {"*"}, "vmmap": {"*"}, "leaks": {"*"}, "malloc_history": {"*"},
}

// traces refuses attaching to another process, and ps printing processes' environments
// (ps e, ps eww, ps -E on macOS).
func (j *judgement) traces(c *command, src string) {
	if c.prog == "ps" {
		for _, a := range c.args[1:] {
			if a.val == "-E" || !strings.HasPrefix(a.val, "-") && strings.IndexByte(a.val, 'e') >= 0 && strings.Trim(a.val, "auxwefjlsvmrTSHcnhp") == "" {
				j.refuse(rankZone, "other-process", src+" "+whyProc)
				return
			}
		}
	}
	opts, ok := attachers[c.prog]
	if !ok {
		return
	}
	if len(opts) == 1 && opts[0] == "*" {
		j.refuse(rankZone, "other-process", src+" "+whyProc)
		return
	}
	if pa := c.opts(); pa != nil && pa.has(opts...) {
		j.refuse(rankZone, "other-process", src+" "+whyProc)
		return
	}
	for _, a := range c.args[1:] {
		v := a.val
		for _, o := range opts {
			if v == o || strings.HasPrefix(v, o+"=") || len(o) == 2 && o[0] == '-' && strings.HasPrefix(v, o) && len(v) > 2 && isDigit(v[2]) {
				j.refuse(rankZone, "other-process", src+" "+whyProc)
				return
			}
		}
	}
	// gdb PROGRAM PID, and attaching from gdb's or lldb's own commands.
	if c.prog == "gdb" || c.prog == "gdb-multiarch" {
		ops := 0
		for _, a := range c.args[1:] {
			if !strings.HasPrefix(a.val, "-") {
				ops++
				if ops == 2 && allDigits(a.val) {
					j.refuse(rankZone, "other-process", src+" "+whyProc)
					return
				}
			}
		}
	}
	for _, code := range c.inline {
		if strings.Contains(code.val, "attach") {
			j.refuse(rankZone, "other-process", src+" "+whyProc)
			return
		}
	}
}
