package bridge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Limits of a file carried in one answer.
const (
	FileAnswerMax = 20 << 20 // the original, in one answer
	ImageMax      = 5 << 20  // a picture as an image block
	TextMax       = 200_000  // a text or code file as text, in characters
)

var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// saveTarget checks where saveTo may write the original: inside root (the working folder), given
// relative to it or absolute, never with "..", never through or onto a symbolic link, and onto an
// existing file only with overwrite. It returns the absolute path to write.
func saveTarget(root, saveTo string, overwrite bool) (string, error) {
	if strings.TrimSpace(saveTo) == "" {
		return "", errors.New("saveTo is empty; give a path inside the working folder, like docs/spec.pdf.")
	}
	for _, part := range strings.FieldsFunc(saveTo, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return "", fmt.Errorf("saveTo %q has “..”; give a path inside the working folder.", saveTo)
		}
	}
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	// The working folder itself may sit behind a link (macOS's /tmp); what is inside it may not.
	if real, err := filepath.EvalSymlinks(rootAbs); err == nil {
		rootAbs = real
	}
	p := saveTo
	if !filepath.IsAbs(p) {
		p = filepath.Join(rootAbs, p)
	} else if real, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil && !strings.HasPrefix(filepath.Clean(p), rootAbs) {
		// An absolute path given through the root's link names the same place.
		p = filepath.Join(real, filepath.Base(p))
	}
	p = filepath.Clean(p)
	rel, err := filepath.Rel(rootAbs, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || rel == ".." || filepath.IsAbs(rel) {
		return "", fmt.Errorf("saveTo %q is outside the working folder %s.", saveTo, rootAbs)
	}
	cur := rootAbs
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			if i < len(parts)-1 {
				continue // folders still to make
			}
			return cur, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return "", fmt.Errorf("saveTo %q goes through a symbolic link (%s); Ensemble never writes through links.", saveTo, cur)
		}
		if i == len(parts)-1 {
			if fi.IsDir() {
				return "", fmt.Errorf("saveTo %q is a folder; name the file to write.", saveTo)
			}
			if !overwrite {
				return "", fmt.Errorf("%s already exists; pass overwrite: true to replace it.", saveTo)
			}
		} else if !fi.IsDir() {
			return "", fmt.Errorf("saveTo %q goes through %s, which is not a folder.", saveTo, cur)
		}
	}
	return cur, nil
}

// save writes r to target (checked by saveTarget): missing folders are made one by one, each
// checked again, and the file is written beside its target and renamed over it, so a link that
// appears meanwhile is replaced, never followed.
func save(root, target string, overwrite bool, r io.Reader) (int64, error) {
	rootAbs, _ := filepath.Abs(root)
	if real, err := filepath.EvalSymlinks(rootAbs); err == nil {
		rootAbs = real
	}
	rel, _ := filepath.Rel(rootAbs, filepath.Dir(target))
	cur := rootAbs
	if rel != "." {
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			cur = filepath.Join(cur, part)
			if err := os.Mkdir(cur, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				return 0, err
			}
			fi, err := os.Lstat(cur)
			if err != nil || !fi.IsDir() {
				return 0, fmt.Errorf("%s is not a folder Ensemble may write into.", cur)
			}
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), ".ensemble-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, r)
	if err != nil {
		tmp.Close()
		return n, err
	}
	if err := tmp.Close(); err != nil {
		return n, err
	}
	if !overwrite {
		// Link, not rename: it fails if something took the name meanwhile.
		if err := os.Link(tmp.Name(), target); err != nil {
			if errors.Is(err, os.ErrExist) {
				return 0, fmt.Errorf("%s already exists; pass overwrite: true to replace it.", target)
			}
			return 0, err
		}
		return n, nil
	}
	return n, os.Rename(tmp.Name(), target)
}
