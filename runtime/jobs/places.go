package jobs

import (
	"os"
	"path/filepath"

	"github.com/ensemblework/ensemble/runtime/judge"
)

// NewPlaces are the places the judge needs on this computer, for a run and for `ensemble judge`
// alike, so what one prints is what the other gets: the person's home, Ensemble's data folder
// and workspace, the agents' skill folders, the runtime's own address (runtimeURL, any URL of
// it; "" when no runtime runs) and program, and how to follow links, expand globs and read a
// repository's git config.
func NewPlaces(home, dataDir, runtimeURL string) Places {
	bin, err := os.Executable()
	if err == nil {
		bin, _ = resolvePath(bin)
	} else {
		bin = ""
	}
	return Places{
		Home:      home,
		DataDir:   dataDir,
		Workspace: filepath.Join(dataDir, "workspace"),
		Resolve:   resolvePath,
		Glob:      filepath.Glob,
		SkillDirs: SkillDirs(home, os.Getenv),
		Runtime:   judge.RuntimeAddr(runtimeURL),
		Binary:    bin,
		GitClean:  func(dir string) bool { return judge.GitConfigClean(gitConfigFiles(dir), os.ReadFile, home) },
	}
}

// SkillDirs are the agents' own skill folders (spec 003 §10, agentSkillRoots), where their
// settings move them (CLAUDE_CONFIG_DIR, CODEX_HOME, COPILOT_HOME, VIBE_HOME, KIMI_CODE_HOME),
// each also where its links lead.
func SkillDirs(home string, getenv func(string) string) []string {
	if home == "" {
		return nil
	}
	in := func(env, def string) string {
		if v := getenv(env); v != "" && filepath.IsAbs(v) {
			return v
		}
		return filepath.Join(home, def)
	}
	claude, codex, copilot := in("CLAUDE_CONFIG_DIR", ".claude"), in("CODEX_HOME", ".codex"), in("COPILOT_HOME", ".copilot")
	dirs := []string{
		filepath.Join(home, ".agents", "skills"),
		filepath.Join(claude, "skills"), filepath.Join(claude, "plugins", "marketplaces"), filepath.Join(claude, "plugins", "cache"),
		filepath.Join(codex, "skills"), filepath.Join(codex, "plugins", "cache"),
		filepath.Join(copilot, "skills"), filepath.Join(copilot, "installed-plugins"), filepath.Join(home, ".cache", "copilot", "pkg"),
		filepath.Join(home, ".cursor", "skills"), filepath.Join(home, ".cursor", "skills-cursor"),
		filepath.Join(home, ".gemini", "skills"), filepath.Join(home, ".gemini", "extensions"), filepath.Join(home, ".gemini", "antigravity", "skills"),
		filepath.Join(home, ".config", "opencode", "skill"), filepath.Join(home, ".config", "opencode", "skills"),
		filepath.Join(in("VIBE_HOME", ".vibe"), "skills"),
		filepath.Join(home, ".qwen", "skills"), filepath.Join(home, ".qwen", "extensions"),
		filepath.Join(in("KIMI_CODE_HOME", ".kimi-code"), "skills"),
	}
	out := dirs
	for _, d := range dirs {
		if real, err := resolvePath(d); err == nil && real != d {
			out = append(out, real)
		}
	}
	return out
}
