package computer

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ensemblework/ensemble/internal/atomicfile"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

// Shared is a file a node brought into the chat (node_share_file, spec 002 §8.13), kept as its
// evidence in Ensemble's data folder.
type Shared struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Size    int64    `json:"size"`
	SHA256  string   `json:"sha256"`
	Type    string   `json:"type"`
	LeftOut []string `json:"leftOut,omitempty"` // what a zipped folder left out, and why
}

// skipDirs are the dependency and cache folders a zipped folder leaves out.
var skipDirs = []string{"node_modules", ".venv", "venv", "__pycache__", ".next", ".cache", ".git", ".hg", ".svn", ".tox", ".mypy_cache",
	".pytest_cache", ".gradle", ".terraform", "target", ".parcel-cache", ".turbo"}

// ShareProblem is why a path may not be shared, judged by its name and place (a link, a key, a
// certificate, .env, a history or sign-in file, a key folder's or git's, Ensemble's data, another
// account's), or "".
func ShareProblem(path string, p Policy) string {
	if why := secrets.KeyPath(path); why != "" {
		return "Not shared: " + why + "."
	}
	if p.DataDir != "" && within(path, p.DataDir) && !p.own(path) {
		return "Ensemble's own data is never shared."
	}
	v := judge.Decide(judge.Call{Tool: judge.ToolRead, Paths: []string{path}, Cwd: filepath.Dir(path)}, judgeSettings(Call{Folder: filepath.Dir(path)}, p))
	if v.Decision == judge.Refuse {
		return v.Reason
	}
	return ""
}

// Share copies path (a file, or a folder zipped into <folder>.zip) into the node's evidence,
// checked as ShareProblem says and, inside, for a saved secret's value. A folder's text files are
// redacted, and what it leaves out is named.
func (c *Computer) Share(path string, p Policy) (Shared, error) {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return Shared{}, fmt.Errorf("There is nothing at %s to share.", path)
	case fi.Mode()&fs.ModeSymlink != 0:
		return Shared{}, fmt.Errorf("%s is a link; share the file it leads to by its own path.", path)
	}
	if why := ShareProblem(path, p); why != "" {
		return Shared{}, errors.New(why)
	}
	dir := filepath.Join(c.o.DataDir, "node-files")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Shared{}, fmt.Errorf("computer: keep a shared file: %w", err)
	}
	id := ledger.NewID("nf_")
	sh := Shared{ID: id, Name: filepath.Base(path)}
	dst := filepath.Join(dir, id)
	if fi.IsDir() {
		sh.Name += ".zip"
		sh.LeftOut, err = c.zipFolder(path, dst, p)
	} else {
		err = c.copyChecked(path, dst, fi.Size())
	}
	if err != nil {
		os.Remove(dst)
		return Shared{}, err
	}
	sh.Type = mime.TypeByExtension(strings.ToLower(filepath.Ext(sh.Name)))
	if sh.Type == "" {
		sh.Type = "application/octet-stream"
	}
	f, err := os.Open(dst)
	if err != nil {
		return Shared{}, err
	}
	defer f.Close()
	h := sha256.New()
	sh.Size, _ = io.Copy(h, f)
	sh.SHA256 = hex.EncodeToString(h.Sum(nil))
	return sh, nil
}

// SharedFile opens a shared file's kept copy.
func (c *Computer) SharedFile(id string) (*os.File, error) {
	if !strings.HasPrefix(id, "nf_") || strings.ContainsAny(id, `/\.`) {
		return nil, fs.ErrNotExist
	}
	return os.Open(filepath.Join(c.o.DataDir, "node-files", id))
}

func (c *Computer) copyChecked(src, dst string, size int64) error {
	if size > MaxShareSize {
		return fmt.Errorf("%s is %d MB; a shared file is at most 100 MB.", filepath.Base(src), size>>20)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("%s could not be read: %w.", src, err)
	}
	if c.holdsSecret(b) {
		return fmt.Errorf("%s holds one of your owner's saved secrets, so it is not shared.", filepath.Base(src))
	}
	if why := secrets.ArchiveProblem(src, b, c.holdsSecret); why != "" {
		return errors.New("Not shared: " + why + ".")
	}
	return os.WriteFile(dst, b, 0o600)
}

// holdsSecret reports whether b shows a saved secret's value, in any form the redactor knows.
func (c *Computer) holdsSecret(b []byte) bool {
	s := string(b)
	return c.o.Hide(s) != s
}

// zipFolder zips folder into dst, each file checked as a shared file is and its text redacted,
// leaving out links, what may not be shared, and dependency and cache folders.
func (c *Computer) zipFolder(folder, dst string, p Policy) ([]string, error) {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	var left []string
	var total int64
	err = filepath.WalkDir(folder, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(folder, path)
		switch {
		case path == folder:
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			left = append(left, rel+" (a link)")
			return nil
		case d.IsDir() && slices.Contains(skipDirs, d.Name()):
			left = append(left, rel+"/ (dependencies or a cache)")
			return fs.SkipDir
		}
		if why := ShareProblem(path, p); why != "" {
			left = append(left, rel+" (never shared)")
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if total += fi.Size(); total > MaxShareSize {
			return fmt.Errorf("%s holds more than 100 MB; share a smaller folder.", filepath.Base(folder))
		}
		b, err := os.ReadFile(path)
		if err != nil {
			left = append(left, rel+" (unreadable)")
			return nil
		}
		if utf8.Valid(b) {
			b = []byte(c.o.Hide(string(b)))
		} else if c.holdsSecret(b) || secrets.ArchiveProblem(path, b, c.holdsSecret) != "" {
			left = append(left, rel+" (holds a saved secret or a key)")
			return nil
		}
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	return left, zw.Close()
}

// Keep stores a file the owner attached in the chat, at most MaxShareSize, as Share keeps a node's.
func (c *Computer) Keep(name string, r io.Reader) (Shared, error) {
	name = filepath.Base(strings.TrimSpace(name))
	if name == "" || name == "." || name == "/" || strings.ContainsAny(name, "\x00") {
		return Shared{}, errors.New("Name the file: ?name=report.pdf.")
	}
	dir := filepath.Join(c.o.DataDir, "node-files")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Shared{}, fmt.Errorf("computer: keep an attached file: %w", err)
	}
	sh := Shared{ID: ledger.NewID("nf_"), Name: name}
	f, err := os.OpenFile(filepath.Join(dir, sh.ID), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Shared{}, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r, MaxShareSize+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		os.Remove(f.Name())
		return Shared{}, fmt.Errorf("The file did not arrive whole: %w.", err)
	case n > MaxShareSize:
		os.Remove(f.Name())
		return Shared{}, errors.New("An attached file is at most 100 MB.")
	}
	sh.Size, sh.SHA256 = n, hex.EncodeToString(h.Sum(nil))
	if sh.Type = mime.TypeByExtension(strings.ToLower(filepath.Ext(name))); sh.Type == "" {
		sh.Type = "application/octet-stream"
	}
	return sh, nil
}

// SaveAttachment writes a kept file to path on the computer, checked against its size and
// SHA-256; a file already there is replaced only with overwrite.
func (c *Computer) SaveAttachment(sh Shared, path string, overwrite bool) error {
	if err := noLink(path); err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a folder; name the file, or end the path with / to save it inside.", path)
		}
		if !overwrite {
			return fmt.Errorf("%s is there already; pass overwrite to replace it.", path)
		}
	}
	b, err := os.ReadFile(filepath.Join(c.o.DataDir, "node-files", sh.ID))
	if err != nil {
		return fmt.Errorf("The attached file %s is no longer kept.", sh.Name)
	}
	sum := sha256.Sum256(b)
	if int64(len(b)) != sh.Size || hex.EncodeToString(sum[:]) != sh.SHA256 {
		return fmt.Errorf("The attached file %s changed since it was attached, so it is not saved.", sh.Name)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("The folder for %s could not be made: %w.", path, err)
	}
	return atomicfile.Write(path, b, 0o644)
}

// DropShared deletes a kept file (a held capture its owner discarded); one already gone is fine.
func (c *Computer) DropShared(id string) error {
	if !strings.HasPrefix(id, "nf_") || strings.ContainsAny(id, `/\.`) {
		return fs.ErrNotExist
	}
	if err := os.Remove(filepath.Join(c.o.DataDir, "node-files", id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("computer: delete a kept file: %w", err)
	}
	return nil
}
