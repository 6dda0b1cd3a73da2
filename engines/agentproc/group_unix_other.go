//go:build unix && !linux

package agentproc

import "syscall"

// dieWithParent has no kernel support outside Linux; there the agent sees its stdin close when the
// runtime dies, and ends its turn.
func dieWithParent(*syscall.SysProcAttr) {}
