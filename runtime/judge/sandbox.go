package judge

import "path/filepath"

// SandboxPaths are the lines a run's OS sandbox holds, drawn from the same zones the judge
// decides by, so what the judge lets through the sandbox still keeps to them.
type SandboxPaths struct {
	Write     []string // the run's folder, its writable and kept folders; in Run unattended with Read and write, the workspace and the home
	DenyWrite []string // start-up files, the agents' settings, Ensemble's code, the folder's git hooks and config
	DenyRead  []string // keys, sign-ins, browser data, Ensemble's data and helpers, other accounts; with No access, the home
	AllowRead []string // inside those: the skill folders, and the run's own folders
}

// Sandbox is the sandbox's lines for a run with settings s; otherHomes are the other accounts'
// home folders on this computer. Like [Decide], it is pure.
func Sandbox(s Settings, otherHomes []string) SandboxPaths {
	var p SandboxPaths
	add := func(list *[]string, paths ...string) {
		for _, x := range paths {
			if x == "" || !filepath.IsAbs(x) {
				continue
			}
			x = filepath.Clean(x)
			if !contains(*list, x) {
				*list = append(*list, x)
			}
		}
	}
	add(&p.Write, s.Folder)
	add(&p.Write, s.Writable...)
	add(&p.Write, s.Kept.Folders...)
	if s.Mode == ModeUnattended && s.Outside == OutsideReadWrite {
		add(&p.Write, s.Workspace, s.Home)
	}
	if s.Folder != "" {
		// A hook or a config a run plants would run outside the sandbox, at the person's next git.
		add(&p.DenyWrite, filepath.Join(s.Folder, ".git", "hooks"), filepath.Join(s.Folder, ".git", "config"))
	}
	if s.Home != "" {
		for _, rel := range homeStartup {
			add(&p.DenyWrite, filepath.Join(s.Home, rel))
		}
		for _, rel := range homeSecrets {
			add(&p.DenyRead, filepath.Join(s.Home, rel))
		}
	}
	add(&p.DenyWrite, s.CodeDirs...)
	add(&p.DenyRead, systemSecrets...)
	add(&p.DenyRead, s.DataDir)
	add(&p.DenyRead, s.Protected...)
	add(&p.DenyRead, otherHomes...)
	add(&p.AllowRead, s.SkillDirs...)
	// The run's own folders stay readable inside what is hidden around them (a run folder in
	// Ensemble's workspace, in its data folder).
	add(&p.AllowRead, p.Write...)
	if s.Outside == OutsideNone {
		add(&p.DenyRead, s.Home, s.Workspace)
	}
	return p
}
