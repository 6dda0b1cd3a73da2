package judge

import (
	"io/fs"
	"testing"
)

func TestGitConfigClean(t *testing.T) {
	files := map[string]string{
		"/r/.git/config":     "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://x/y\n[branch \"main\"]\n\tremote = origin\n[alias]\n\tlg = !git log --graph\n",
		"/r/fsmon":           "[core]\n\tfsmonitor = ./hook.sh\n",
		"/r/fsmon-builtin":   "[core]\n\tfsmonitor = true\n",
		"/r/pager":           "[core]\npager = less -R\n",
		"/r/pagerfor":        "[pager]\n\tlog = cat ~/.ssh/id_rsa\n",
		"/r/textconv":        "[diff \"pdf\"]\n\ttextconv = pdftotext\n",
		"/r/filter":          "[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n",
		"/r/hooks":           "[core]\n\thooksPath = .githooks\n",
		"/r/worktree":        "[core]\n\tworktree = /home/me\n",
		"/r/include-clean":   "[include]\n\tpath = ../inc/clean.cfg\n",
		"/inc/clean.cfg":     "[user]\n\tname = me\n",
		"/r/include-dirty":   "[includeIf \"gitdir:/r/\"]\n\tpath = /inc/dirty.cfg\n",
		"/inc/dirty.cfg":     "[diff]\n\texternal = rm -rf ~\n",
		"/r/include-missing": "[include]\n\tpath = /nowhere.cfg\n",
		"/r/include-home":    "[include]\n\tpath = ~/inc.cfg\n",
		"/home/me/inc.cfg":   "[core]\n\teditor = vim\n",
		"/r/include-loop":    "[include]\n\tpath = /r/include-loop\n",
		"/r/case":            "[CORE]\n\tPager = less\n",
		"/r/continued":       "[core]\n\tsshCommand = ssh \\\n -i key\n",
		"/r/quoted":          "[core]\n\tpager = \"\" ; empty, comment\n",
		"/r/oldsub":          "[diff.pdf]\n\ttextconv = x\n",
		"/r/submodule":       "[submodule \"x\"]\n\tupdate = rebase\n",
		"/r/submodule-cmd":   "[submodule \"x\"]\n\tupdate = !rm -rf ~\n",
		"/r/bad":             "[core\n\tpager = x\n",
		"/r/bool":            "[core]\n\tfsmonitor\n",
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	for _, tt := range []struct {
		file string
		want bool
	}{
		{"/r/.git/config", true}, {"/r/fsmon", false}, {"/r/fsmon-builtin", true}, {"/r/pager", false}, {"/r/pagerfor", false},
		{"/r/textconv", false}, {"/r/filter", false}, {"/r/hooks", false}, {"/r/worktree", false}, {"/r/include-clean", true},
		{"/r/include-dirty", false}, {"/r/include-missing", true}, {"/r/include-home", false}, {"/r/include-loop", true},
		{"/r/case", false}, {"/r/continued", false}, {"/r/quoted", true}, {"/r/oldsub", false}, {"/r/submodule", true},
		{"/r/submodule-cmd", false}, {"/r/bad", false}, {"/r/bool", true}, {"/r/none", true},
	} {
		if got := GitConfigClean([]string{tt.file}, read, "/home/me"); got != tt.want {
			t.Errorf("%s: got clean %v, want %v", tt.file, got, tt.want)
		}
	}
	unreadable := func(string) ([]byte, error) { return nil, fs.ErrPermission }
	if GitConfigClean([]string{"/r/.git/config"}, unreadable, "/home/me") {
		t.Errorf("an unreadable config: got clean, want not")
	}
}
