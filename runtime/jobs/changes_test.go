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

// TestRunChanges: what the person had changed and not committed before the run began is not
// listed as the run's; what the run changed is, even a file of theirs it changed again or put back.
func TestRunChanges(t *testing.T) {
	dir := t.TempDir()
	gitOK(t, dir, "init", "-q")
	for _, f := range []string{"a.txt", "b.txt", "c.txt", "gone.txt"} {
		os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"), 0o644)
	}
	gitOK(t, dir, "add", ".")
	gitOK(t, dir, "commit", "-qm", "base")
	base := headCommit(t.Context(), dir)
	// The person's own work in progress.
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("mine\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("mine too\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("and this\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("draft\n"), 0o644)
	os.Remove(filepath.Join(dir, "gone.txt"))
	before := treeState(t.Context(), dir, base)
	// The run: a new file, b.txt changed again, c.txt put back as it was.
	os.WriteFile(filepath.Join(dir, "new.go"), []byte("package x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("mine too\nand the run's\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "c.txt"), []byte("c.txt\n"), 0o644)
	got := runChanges(t.Context(), dir, base, before)
	want := []FileChange{{"b.txt", 2, 1}, {"new.go", 1, 0}, {"c.txt", 0, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := runChanges(t.Context(), dir, base, nil); len(got) != 5 {
		t.Errorf("with no state from the start, all since base: %+v", got)
	}
}

// TestCloneRunAndItsChanges clones a repository served over HTTP on loopback (git's dumb protocol,
// so no git server is needed), runs the stand-in agent in the clone, and lists what it changed.
func TestCloneRunAndItsChanges(t *testing.T) {
	srv := servedRepo(t, nil)

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

// servedRepo serves a repository of one commit (a README) over HTTP on loopback at /repo.git, with
// git's dumb protocol, so no git server is needed; plant changes the served bare repository first.
func servedRepo(t *testing.T, plant func(bare string)) *httptest.Server {
	t.Helper()
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
	if plant != nil {
		plant(bare)
	}
	gitOK(t, bare, "update-server-info")
	srv := httptest.NewServer(http.FileServer(http.Dir(served)))
	t.Cleanup(srv.Close)
	return srv
}
