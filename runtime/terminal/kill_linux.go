package terminal

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// killSession kills every process in the session sid: the shell's process group and the groups its
// job control made for background jobs, which a signal to one group would miss.
func killSession(sid int, sig syscall.Signal) {
	syscall.Kill(-sid, sig)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session …; comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 3 && f[3] == strconv.Itoa(sid) {
			syscall.Kill(pid, sig)
		}
	}
}
