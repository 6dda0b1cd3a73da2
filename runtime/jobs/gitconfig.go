package jobs

import (
	"os"
	"path/filepath"
	"strings"
)

// gitConfigFiles are the config files of the git repository dir is in, which the judge reads
// for what read-only git would run: its config (the common one of a linked worktree) and its
// config.worktree. None outside a repository.
func gitConfigFiles(dir string) []string {
	for d := filepath.Clean(dir); ; {
		dot := filepath.Join(d, ".git")
		if fi, err := os.Lstat(dot); err == nil {
			gitDir := dot
			if !fi.IsDir() {
				// A linked worktree or submodule: .git says where its git folder is.
				b, err := os.ReadFile(dot)
				if err != nil {
					return []string{dot} // unreadable: GitConfigClean says not clean
				}
				line, _, _ := strings.Cut(string(b), "\n")
				p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
				if !ok {
					return []string{dot}
				}
				p = strings.TrimSpace(p)
				if !filepath.IsAbs(p) {
					p = filepath.Join(d, p)
				}
				gitDir = filepath.Clean(p)
			}
			common := gitDir
			if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
				c := strings.TrimSpace(string(b))
				if !filepath.IsAbs(c) {
					c = filepath.Join(gitDir, c)
				}
				common = filepath.Clean(c)
			}
			files := []string{filepath.Join(common, "config"), filepath.Join(gitDir, "config.worktree")}
			if common != gitDir {
				files = append(files, filepath.Join(common, "config.worktree"))
			}
			return files
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil
		}
		d = parent
	}
}
