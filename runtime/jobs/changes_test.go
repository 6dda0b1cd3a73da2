package jobs

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ensemblework/ensemble/engines"
)

func gitOK(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestChangedFiles(t *testing.T) {
	dir := t.TempDir()
	gitOK(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	gitOK(t, dir, "add", ".")
	gitOK(t, dir, "commit", "-qm", "base")
	base := headCommit(t.Context(), dir)
	// A committed change, an uncommitted one, a new file and a binary file.
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n2\nthree\nfour\n"), 0o644)
	gitOK(t, dir, "commit", "-qam", "edit")
	os.WriteFile(filepath.Join(dir, "new.go"), []byte("package x\n\nfunc F() {}"), 0o644)
	os.WriteFile(filepath.Join(dir, "blob.bin"), []byte{0, 1, 2}, 0o644)
	got := changedFiles(t.Context(), dir, base)
	want := []FileChange{{"a.txt", 2, 1}, {"blob.bin", -1, 0}, {"new.go", 3, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := changedFiles(t.Context(), t.TempDir(), ""); len(got) != 0 {
		t.Errorf("outside a repository: %+v", got)
	}
}

// TestCloneRunAndItsChanges clones a repository served over HTTP on loopback (git's dumb protocol,
// so no git server is needed), runs the stand-in agent in the clone, and lists what it changed.
func TestCloneRunAndItsChanges(t *testing.T) {
	src := t.TempDir()
	gitOK(t, src, "init", "-q")
	os.WriteFile(filepath.Join(src, "README.md"), []byte("# Hello\n"), 0o644)
	gitOK(t, src, "add", ".")
	gitOK(t, src, "commit", "-qm", "first")
	served := t.TempDir()
	bare := filepath.Join(served, "repo.git")
	if out, err := exec.Command("git", "clone", "-q", "--bare", src, bare).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	gitOK(t, bare, "update-server-info")
	srv := httptest.NewServer(http.FileServer(http.Dir(served)))
	defer srv.Close()

	var folder string
	e := newEnv(t, []step{
		{do: func(s engines.Spec) {
			folder = s.Folder
			os.WriteFile(filepath.Join(s.Folder, "README.md"), []byte("# Hello\n\nMore.\n"), 0o644)
		}},
		{result: &engines.Result{SessionID: "s", Summary: "edited"}},
	})
	e.service(true)
	j := e.waitEnded(e.assign(AssignRequest{RepoURL: srv.URL + "/repo.git", Brief: "edit the readme"}).ID, Done)
	if j.FolderKind != FolderClone || !strings.HasPrefix(folder, filepath.Join(e.data, "workspace")) {
		t.Errorf("kind %s, folder %s", j.FolderKind, folder)
	}
	if want := []FileChange{{"README.md", 2, 0}}; !reflect.DeepEqual(j.Changes, want) {
		t.Errorf("changes %+v, want %+v", j.Changes, want)
	}
}
