package records

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/store"
)

// File is one of the person's files: its details in the database, its bytes under the data folder,
// named by their SHA-256.
type File struct {
	ID        string     `json:"id"`
	SpaceID   string     `json:"spaceId"`
	Name      string     `json:"name"`
	MediaType string     `json:"mediaType"`
	Size      int64      `json:"size"`
	SHA256    string     `json:"sha256"`
	Summary   string     `json:"summary"`
	HasText   bool       `json:"hasText"` // Ensemble keeps a text of it (a text or code file)
	Tags      []string   `json:"tags"`
	Attached  []string   `json:"attached"` // handles of the records it is on
	Source    string     `json:"source"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	DeletedAt *time.Time `json:"deletedAt"`
}

// MaxFileSize is the largest file Ensemble keeps.
const MaxFileSize = 100 << 20

// maxFileText caps the text Ensemble keeps of a text file, in characters.
const maxFileText = 1_000_000

// fileInput is a new file's row; files are added through [Files.Add], never edited by a client.
type fileInput struct{ row ledger.Row }

var fileKind = &kind[File, fileInput]{
	name: "file", changes: fileChanges, table: "files", prefix: "fil_", order: "created_at DESC",
	decode: func(r ledger.Row) File {
		return File{ID: r.Str("id"), SpaceID: r.Str("space_id"), Name: r.Str("name"), MediaType: r.Str("media_type"),
			Size: int64(r.Float("size")), SHA256: r.Str("sha256"), Summary: r.Str("summary"), HasText: r.Str("text") != "",
			Tags: stringList(r.Str("tags")), Attached: stringList(r.Str("attached")), Source: r.Str("source"),
			CreatedAt: store.ReadTime(r.Str("created_at")), UpdatedAt: store.ReadTime(r.Str("updated_at")),
			DeletedAt: parseNullStamp(r, "deleted_at")}
	},
	title: func(f File) string { return f.Name },
	row: func(b *Batch, in fileInput, cur *File) (ledger.Row, error) {
		if cur != nil {
			return nil, problem.Invalid("A file's original cannot be changed; add a new file instead.")
		}
		return in.row, nil
	},
}

// Files keeps the person's files.
type Files struct {
	s   *Service
	dir string // <data>/files
}

// Files returns the file store whose bytes live under dir (the data folder's files/).
func (s *Service) Files(dir string) *Files { return &Files{s: s, dir: dir} }

// NewFile is a file to add.
type NewFile struct {
	Name      string
	MediaType string // empty: from the name, else from the bytes
	Data      []byte
	Summary   string
	Source    string   // upload (default), bridge, export…
	Attach    []string // handles of tasks, pages, projects, people or repositories to put it on
}

// Add keeps a file and, in the same Undo group, puts it on the records in Attach: it is tagged with
// each, and a task's or page's Markdown gets a line linking it.
func (fl *Files) Add(ctx context.Context, actor ledger.Actor, in NewFile) (File, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return File{}, problem.Invalid("A file needs a name without slashes, like notes.md.")
	}
	if n := utf8.RuneCountInString(name); n > 255 || !utf8.ValidString(name) {
		return File{}, problem.Invalid("A file name must be valid text of at most 255 characters.")
	}
	if len(in.Data) > MaxFileSize {
		return File{}, problem.Invalid("The file is %d MB; Ensemble keeps files up to %d MB.", len(in.Data)>>20, MaxFileSize>>20)
	}
	summary, err := text("summary", in.Summary, 2000, false)
	if err != nil {
		return File{}, err
	}
	mt := mediaType(name, in.MediaType, in.Data)
	sum := sha256.Sum256(in.Data)
	hash := hex.EncodeToString(sum[:])
	if err := fl.writeBlob(hash, in.Data); err != nil {
		return File{}, err
	}
	attach := dedupe(in.Attach)
	for _, h := range attach {
		k, id, ok := ParseHandle(h)
		if !ok || k == "file" {
			return File{}, problem.Invalid("%q is not a handle of a task, page, project, person or repository (like ensemble://task/tsk_…).", h)
		}
		if _, err := fl.s.Title(ctx, k, id); err != nil {
			return File{}, problem.Invalid("There is no %s with id %q to put the file on.", k, id)
		}
	}
	source := in.Source
	if source == "" {
		source = "upload"
	}
	row := ledger.Row{"name": name, "media_type": mt, "size": int64(len(in.Data)), "sha256": hash,
		"summary": summary, "text": fileText(mt, in.Data), "tags": listJSON(nil), "attached": listJSON(attach), "source": source}
	return do(ctx, fl.s, actor, func(b *Batch) (File, error) {
		f, err := fileKind.create(b, row)
		if err != nil {
			return f, err
		}
		for _, h := range attach {
			if err := b.linkFile(h, f); err != nil {
				return f, err
			}
		}
		return f, nil
	})
}

// linkFile adds a line linking f to the end of a task's or page's Markdown.
func (b *Batch) linkFile(handle string, f File) error {
	k, id, _ := ParseHandle(handle)
	line := fmt.Sprintf("[@%s](%s)", f.Name, Handle("file", f.ID))
	switch k {
	case "task":
		t, err := b.s.Tasks().UpdateIn(b, id, TaskInput{})
		if err != nil {
			return err
		}
		_, err = b.s.Tasks().UpdateIn(b, id, TaskInput{Page: Some(appendLine(t.Page, line))})
		return err
	case "page":
		p, err := b.s.Pages().UpdateIn(b, id, PageInput{})
		if err != nil {
			return err
		}
		_, err = b.s.Pages().UpdateIn(b, id, PageInput{Body: Some(appendLine(p.Body, line))})
		return err
	}
	return nil
}

func appendLine(md, line string) string {
	md = strings.TrimRight(md, "\n")
	if md == "" {
		return line + "\n"
	}
	return md + "\n\n" + line + "\n"
}

func (fl *Files) blobPath(hash string) string { return filepath.Join(fl.dir, hash[:2], hash) }

// writeBlob keeps the bytes once: a file that is already there under its hash is left alone.
func (fl *Files) writeBlob(hash string, data []byte) error {
	p := fl.blobPath(hash)
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("records: keep file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".blob-*")
	if err != nil {
		return fmt.Errorf("records: keep file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("records: keep file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("records: keep file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("records: keep file: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("records: keep file: %w", err)
	}
	return nil
}

// mediaType is the type given, else the one the name's extension says, else what the bytes look like.
func mediaType(name, given string, data []byte) string {
	if t, _, err := mime.ParseMediaType(given); err == nil && given != "" {
		return t
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".go", ".ts", ".tsx", ".py", ".rs", ".java", ".c", ".h", ".sh", ".toml", ".yaml", ".yml", ".sql", ".txt", ".log":
		return "text/plain"
	}
	if t := mime.TypeByExtension(filepath.Ext(name)); t != "" {
		if mt, _, err := mime.ParseMediaType(t); err == nil {
			return mt
		}
	}
	mt, _, _ := mime.ParseMediaType(http.DetectContentType(data))
	return mt
}

// IsTextType reports whether Ensemble reads files of the media type as text.
func IsTextType(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/x-yaml",
		"application/yaml", "application/toml", "application/x-sh", "image/svg+xml":
		return true
	}
	return false
}

// fileText is Ensemble's text of a file: the file itself when it is text, nothing otherwise (no OCR,
// no audio or video).
func fileText(mt string, data []byte) string {
	if !IsTextType(mt) || !utf8.Valid(data) {
		return ""
	}
	s := string(data)
	if utf8.RuneCountInString(s) > maxFileText {
		s = string([]rune(s)[:maxFileText])
	}
	return s
}

// FileFilter narrows List.
type FileFilter struct {
	Query  string // words in the name, summary or text
	On     string // a handle: the files on that record
	Limit  int    // 1 to 50
	Offset int
}

// List returns files newest first and how many match in all.
func (fl *Files) List(ctx context.Context, f FileFilter) ([]File, int, error) {
	where, args := "space_id = ? AND deleted_at IS NULL", []any{fl.s.space}
	for _, w := range words(f.Query) {
		where += " AND (instr(lower(name), ?) > 0 OR instr(lower(summary), ?) > 0 OR instr(lower(text), ?) > 0)"
		args = append(args, w, w, w)
	}
	if f.On != "" {
		if _, _, ok := ParseHandle(f.On); !ok {
			return nil, 0, problem.Invalid("%q is not a handle like ensemble://task/tsk_….", f.On)
		}
		where += " AND EXISTS (SELECT 1 FROM json_each(files.attached) WHERE value = ?)"
		args = append(args, f.On)
	}
	var total int
	if err := fl.s.db.QueryRowContext(ctx, "SELECT count(*) FROM files WHERE "+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("records: count files: %w", err)
	}
	limit := f.Limit
	if limit <= 0 || limit > 50 {
		limit = 50
	}
	list, err := fileKind.query(ctx, fl.s.db, where+" ORDER BY created_at DESC, id LIMIT ? OFFSET ?", append(args, limit, max(f.Offset, 0))...)
	return list, total, err
}

// Get returns one file not in Trash.
func (fl *Files) Get(ctx context.Context, id string) (File, error) {
	return fileKind.get(ctx, fl.s.db, fl.s.space, id, false)
}

// Text returns Ensemble's text of a file ("" when it keeps none).
func (fl *Files) Text(ctx context.Context, id string) (string, error) {
	if _, err := fl.Get(ctx, id); err != nil {
		return "", err
	}
	var t string
	err := fl.s.db.QueryRowContext(ctx, "SELECT text FROM files WHERE id = ?", id).Scan(&t)
	return t, err
}

// ErrBlobMissing says a file's bytes are not in the data folder (it was copied without files/).
var ErrBlobMissing = errors.New("records: the file's bytes are missing from the data folder")

// Open returns the file's bytes for reading.
func (fl *Files) Open(ctx context.Context, id string) (*os.File, File, error) {
	f, err := fl.Get(ctx, id)
	if err != nil {
		return nil, f, err
	}
	r, err := os.Open(fl.blobPath(f.SHA256))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, f, ErrBlobMissing
	}
	return r, f, err
}
