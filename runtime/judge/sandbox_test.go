package judge

import (
	"slices"
	"testing"
)

func TestSandboxPaths(t *testing.T) {
	base := Settings{Mode: ModeReview, Folder: "/home/me/.local/share/ensemble/workspace/runs/r1", Home: "/home/me",
		DataDir: "/home/me/.local/share/ensemble", Workspace: "/home/me/.local/share/ensemble/workspace",
		Writable: []string{"/tmp/ensemble-run-1"}, SkillDirs: []string{"/home/me/.claude/skills"}, Outside: OutsideRead,
		Kept: Kept{Folders: []string{"/home/me/notes"}}}
	type want struct {
		in, notIn map[string][]string // list name → paths
	}
	cases := []struct {
		name string
		mod  func(*Settings)
		want want
	}{
		{"review, read outside", func(*Settings) {}, want{
			in: map[string][]string{
				"write":     {base.Folder, "/tmp/ensemble-run-1", "/home/me/notes"},
				"denyRead":  {"/home/me/.ssh", "/home/me/.aws", "/etc/shadow", base.DataDir, "/home/other"},
				"denyWrite": {"/home/me/.bashrc", "/home/me/.gitconfig", base.Folder + "/.git/hooks", base.Folder + "/.git/config"},
				"allowRead": {"/home/me/.claude/skills", base.Folder},
			},
			notIn: map[string][]string{"write": {"/home/me", base.Workspace}, "denyRead": {"/home/me"}},
		}},
		{"unattended, read and write outside", func(s *Settings) { s.Mode, s.Outside = ModeUnattended, OutsideReadWrite }, want{
			in:    map[string][]string{"write": {"/home/me", base.Workspace}, "denyRead": {"/home/me/.ssh"}, "denyWrite": {"/home/me/.zshrc"}},
			notIn: map[string][]string{},
		}},
		{"review, read and write outside: only what was let in", func(s *Settings) { s.Outside = OutsideReadWrite }, want{
			notIn: map[string][]string{"write": {"/home/me"}},
		}},
		{"no access outside", func(s *Settings) { s.Outside = OutsideNone }, want{
			in: map[string][]string{"denyRead": {"/home/me", base.Workspace}, "allowRead": {"/home/me/.claude/skills", base.Folder, "/tmp/ensemble-run-1"}},
		}},
	}
	for _, c := range cases {
		s := base
		c.mod(&s)
		p := Sandbox(s, []string{"/home/other"})
		lists := map[string][]string{"write": p.Write, "denyRead": p.DenyRead, "denyWrite": p.DenyWrite, "allowRead": p.AllowRead}
		for name, paths := range c.want.in {
			for _, x := range paths {
				if !slices.Contains(lists[name], x) {
					t.Errorf("%s: %s lacks %s: %v", c.name, name, x, lists[name])
				}
			}
		}
		for name, paths := range c.want.notIn {
			for _, x := range paths {
				if slices.Contains(lists[name], x) {
					t.Errorf("%s: %s has %s", c.name, name, x)
				}
			}
		}
	}
}
