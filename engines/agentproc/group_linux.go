package agentproc

import "syscall"

// dieWithParent has the kernel kill the agent if the runtime dies (kill -9, a crash): an agent left
// running would go on working on a run the restarted runtime has marked interrupted.
func dieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
