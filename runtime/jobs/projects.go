package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"

	"github.com/ensemblework/ensemble/internal/atomicfile"
	"github.com/ensemblework/ensemble/runtime/records"
)

// A project's task that would otherwise get a fresh folder works in its project's folder,
// <workspace>/projects/<name>: a git repository the project's runs share (one at a time), where
// the agent keeps its sessions. Before each run the project's brief is written into AGENTS.md
// between Ensemble's markers (the rest of the file is the folder's own), with CLAUDE.md and
// GEMINI.md importing it; only when the brief changed. Runs in the folder can replace those files
// with links, so they are read only as plain files and written as a new file renamed over the old.
// Which folder is which project's, and the brief each last got, is kept in
// projects/.ensemble-projects.json, outside every project folder, so nothing a run writes can point
// Ensemble at another project.

// FolderProject is a project's own folder.
const FolderProject FolderKind = "project"

const (
	briefStart = "<!-- ensemble:brief -->"
	briefEnd   = "<!-- /ensemble:brief -->"
)

// projectEntry is one project's folder and the hash of the brief last written there.
type projectEntry struct {
	Folder string `json:"folder"`
	Hash   string `json:"hash"`
}

// projectsMu guards the registry file: runs of different projects prepare their folders at once.
var projectsMu sync.Mutex

func (s *Service) projectsDir() string { return filepath.Join(s.opts.DataDir, "workspace", "projects") }

// projectFolder is the folder of project p, made up (and registered) the first time.
func (s *Service) projectFolder(p records.Project) (string, error) {
	projectsMu.Lock()
	defer projectsMu.Unlock()
	reg, err := s.readProjects()
	if err != nil {
		return "", err
	}
	if e, ok := reg[p.ID]; ok {
		return filepath.Join(s.projectsDir(), e.Folder), nil
	}
	name := slug(p.Name)
	for _, e := range reg {
		if e.Folder == name {
			name += "-" + strings.TrimPrefix(p.ID, "prj_")[:6]
			break
		}
	}
	reg[p.ID] = projectEntry{Folder: name}
	if err := s.writeProjects(reg); err != nil {
		return "", err
	}
	return filepath.Join(s.projectsDir(), name), nil
}

func (s *Service) readProjects() (map[string]projectEntry, error) {
	reg := map[string]projectEntry{}
	b, err := readPlain(filepath.Join(s.projectsDir(), ".ensemble-projects.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return reg, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &reg); err != nil {
		return nil, fmt.Errorf("the project folders' list %s is damaged: %w", filepath.Join(s.projectsDir(), ".ensemble-projects.json"), err)
	}
	return reg, nil
}

func (s *Service) writeProjects(reg map[string]projectEntry) error {
	if err := os.MkdirAll(s.projectsDir(), 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(reg, "", "  ")
	return writeReplacing(filepath.Join(s.projectsDir(), ".ensemble-projects.json"), b)
}

// slug is a project's name as a folder name.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if r := []rune(out); len(r) > 60 {
		out = strings.Trim(string(r[:60]), "-")
	}
	if out == "" {
		out = "project"
	}
	return out
}

// projectBrief is the project as Markdown for its agents: name, summary, notes, its open tasks.
func (s *Service) projectBrief(ctx context.Context, p records.Project) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Project: %s\n", p.Name)
	if p.Summary != "" {
		fmt.Fprintf(&b, "\n%s\n", p.Summary)
	}
	if p.Notes != "" {
		fmt.Fprintf(&b, "\n## Notes\n\n%s\n", p.Notes)
	}
	if tasks, err := s.rec.ListTasks(ctx, records.TaskFilter{ProjectID: p.ID}); err == nil && len(tasks) > 0 {
		b.WriteString("\n## Tasks\n\n")
		for i, t := range tasks {
			if i == 50 {
				fmt.Fprintf(&b, "- … and %d more\n", len(tasks)-50)
				break
			}
			fmt.Fprintf(&b, "- %s (%s)\n", t.Title, t.Status.Label())
		}
	}
	b.WriteString("\nThis folder is the project's own: keep files only one task needs in a folder named for that task.\n")
	return b.String()
}

// bringProject writes the project's brief into its folder when it changed since the last run there.
func (s *Service) bringProject(ctx context.Context, dir, projectID string) error {
	p, err := s.rec.Projects().Get(ctx, projectID)
	if err != nil {
		return nil // the project went away; the folder is still the run's
	}
	brief := s.projectBrief(ctx, p)
	sum := sha256.Sum256([]byte(brief))
	hash := hex.EncodeToString(sum[:])
	projectsMu.Lock()
	defer projectsMu.Unlock()
	reg, err := s.readProjects()
	if err != nil {
		return err
	}
	e := reg[projectID]
	if e.Hash == hash {
		return nil
	}
	// A link or other non-file put where AGENTS.md was is not read, and the new file replaces it.
	agents, err := readPlain(filepath.Join(dir, "AGENTS.md"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errNotPlain) {
		return fmt.Errorf("AGENTS.md in the project's folder cannot be read: %w", err)
	}
	if err := writeReplacing(filepath.Join(dir, "AGENTS.md"), []byte(withBrief(string(agents), brief))); err != nil {
		return err
	}
	for _, f := range []string{"CLAUDE.md", "GEMINI.md"} {
		if err := writeReplacing(filepath.Join(dir, f), []byte("@AGENTS.md\n")); err != nil {
			return err
		}
	}
	if err := excludeFromGit(dir, "/AGENTS.md", "/CLAUDE.md", "/GEMINI.md"); err != nil {
		return err
	}
	e.Hash = hash
	reg[projectID] = e
	return s.writeProjects(reg)
}

// withBrief puts brief between Ensemble's markers in text, keeping the rest of the file.
func withBrief(text, brief string) string {
	block := briefStart + "\n" + brief + briefEnd + "\n"
	i, j := strings.Index(text, briefStart), strings.Index(text, briefEnd)
	if i >= 0 && j > i {
		return text[:i] + block + strings.TrimPrefix(text[j+len(briefEnd):], "\n")
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if text != "" {
		text += "\n"
	}
	return text + block
}

// errNotPlain: a file Ensemble reads only as a plain file is a link or something else.
var errNotPlain = errors.New("not a plain file (a link is not followed)")

// readPlain reads a regular file without following a link at its last element.
func readPlain(path string) ([]byte, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, errNotPlain)
	}
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

// writeReplacing writes a new file beside path and renames it over path: a link at path is
// replaced, never written through.
func writeReplacing(path string, b []byte) error { return atomicfile.Write(path, b, 0o644) }

// excludeFromGit lists patterns in the repository's .git/info/exclude, once each.
func excludeFromGit(dir string, patterns ...string) error {
	info := filepath.Join(dir, ".git", "info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		return err
	}
	path := filepath.Join(info, "exclude")
	cur, err := readPlain(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errNotPlain) {
		return err
	}
	text := string(cur)
	for _, p := range patterns {
		if !strings.Contains("\n"+text, "\n"+p+"\n") {
			if text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			text += p + "\n"
		}
	}
	return writeReplacing(path, []byte(text))
}

// taskProject is the live project of a task, if it has one.
func (s *Service) taskProject(taskID string) (records.Project, bool) {
	if taskID == "" {
		return records.Project{}, false
	}
	t, err := s.rec.Tasks().Get(s.ctx, taskID)
	if err != nil || t.ProjectID == nil || t.DeletedAt != nil {
		return records.Project{}, false
	}
	p, err := s.rec.Projects().Get(s.ctx, *t.ProjectID)
	if err != nil || p.DeletedAt != nil {
		return records.Project{}, false
	}
	return p, true
}
