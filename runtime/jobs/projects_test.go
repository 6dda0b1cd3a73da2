package jobs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
	"github.com/ensemblework/ensemble/runtime/records"
)

func TestWithBrief(t *testing.T) {
	block := briefStart + "\nBRIEF\n" + briefEnd + "\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty file", "", block},
		{"the folder's own text stays", "# Notes\nmine", "# Notes\nmine\n\n" + block},
		{"an old brief is replaced", "top\n" + briefStart + "\nOLD\n" + briefEnd + "\nbottom\n", "top\n" + block + "bottom\n"},
	} {
		if got := withBrief(tc.in, "BRIEF\n"); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{"Launch Site 2.0": "launch-site-2-0", "  ": "project", "Ünïcode!": "ünïcode"} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestProjectFolder: a project's tasks work in the project's own folder, which gets the brief in
// AGENTS.md (kept out of git), and a link planted there is replaced, never written through.
func TestProjectFolder(t *testing.T) {
	var folders []string
	e := newEnv(t, []step{{do: func(s engines.Spec) { folders = append(folders, s.Folder) }}, {result: &engines.Result{SessionID: "s", Summary: "ok"}}})
	e.service(true)
	ctx := context.Background()
	p, err := e.rec.Projects().Create(ctx, personActor, records.ProjectInput{Name: records.Some("Launch Site"), Summary: records.Some("The new website.")})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := e.rec.Tasks().Create(ctx, personActor, records.TaskInput{Title: records.Some("Write the copy"), ProjectID: records.Some(&p.ID)})
	second, _ := e.rec.Tasks().Create(ctx, personActor, records.TaskInput{Title: records.Some("Pick the fonts"), ProjectID: records.Some(&p.ID)})

	j := e.waitEnded(e.assign(AssignRequest{TaskID: first.ID}).ID, Done)
	dir := filepath.Join(e.data, "workspace", "projects", "launch-site")
	if j.FolderKind != FolderProject || j.WorkDir != dir {
		t.Fatalf("folder kind %s, work dir %s, want the project's folder %s", j.FolderKind, j.WorkDir, dir)
	}
	agents, _ := os.ReadFile(filepath.Join(dir, "AGENTS.md"))
	for _, want := range []string{briefStart, "# Project: Launch Site", "The new website.", "Write the copy (In progress)", briefEnd} {
		if !strings.Contains(string(agents), want) {
			t.Errorf("AGENTS.md lacks %q:\n%s", want, agents)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "CLAUDE.md")); string(b) != "@AGENTS.md\n" {
		t.Errorf("CLAUDE.md = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude")); !strings.Contains(string(b), "/AGENTS.md\n") {
		t.Errorf("exclude = %q", b)
	}

	// A run planted a link where AGENTS.md was; the next brief replaces the link.
	outside := filepath.Join(t.TempDir(), "elsewhere.md")
	os.WriteFile(outside, []byte("not Ensemble's"), 0o644)
	os.Remove(filepath.Join(dir, "AGENTS.md"))
	if err := os.Symlink(outside, filepath.Join(dir, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	e.rec.Projects().Update(ctx, personActor, p.ID, records.ProjectInput{Notes: records.Some("Use the brand colours.")})
	j2 := e.waitEnded(e.assign(AssignRequest{TaskID: second.ID}).ID, Done)
	if j2.WorkDir != dir || len(folders) != 2 || folders[1] != dir {
		t.Errorf("the project's second task worked in %s (%v)", j2.WorkDir, folders)
	}
	if b, _ := os.ReadFile(outside); string(b) != "not Ensemble's" {
		t.Errorf("the brief was written through a link: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "AGENTS.md")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("AGENTS.md is not a plain file again: %v %v", fi, err)
	}
}
