package computer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ensemblework/ensemble/internal/atomicfile"
)

// Path is where a relative path leads from folder; an absolute one stays itself.
func Path(folder, p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", errors.New("Name a path.")
	}
	if strings.HasPrefix(p, "~/") || p == "~" {
		return "", errors.New("Write the home folder out in full, or give a path relative to the folder.")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(folder, p)
	}
	return filepath.Clean(p), nil
}

// WriteFile writes content to path, making its folders: through a new file renamed into place,
// so a reader never sees half of it. It never writes through a link.
func WriteFile(path string, content []byte) error {
	if len(content) > MaxFileSize {
		return fmt.Errorf("The content is %d bytes; computer_files_write takes at most 1 MB.", len(content))
	}
	if err := noLink(path); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a folder.", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("The folder for %s could not be made: %w.", path, err)
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := atomicfile.Write(path, content, mode); err != nil {
		return fmt.Errorf("%s could not be written: %w.", path, err)
	}
	return nil
}

// MoveFile moves from to to; it never replaces what is there already.
func MoveFile(from, to string) error {
	if err := noLink(from); err != nil {
		return err
	}
	if err := noLink(to); err != nil {
		return err
	}
	if _, err := os.Lstat(from); err != nil {
		return fmt.Errorf("There is nothing at %s to move.", from)
	}
	if _, err := os.Lstat(to); err == nil {
		return fmt.Errorf("%s is there already; a move never replaces a file. Move it to another name, or delete that one first.", to)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("The folder for %s could not be made: %w.", to, err)
	}
	// A link would be raced in between: os.Link then Remove keeps "never over a file" for files.
	if fi, _ := os.Lstat(from); fi != nil && fi.Mode().IsRegular() {
		if err := os.Link(from, to); err == nil {
			return os.Remove(from)
		}
	}
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("%s could not be moved: %w.", from, err)
	}
	return nil
}

// DeletePath deletes a file, or a folder with what is in it when recursive; never a folder
// among roots (the node's own folder itself, or one the caller protects).
func DeletePath(path string, recursive bool, roots []string) error {
	for _, r := range roots {
		if path == filepath.Clean(r) {
			return fmt.Errorf("%s is a folder Ensemble keeps; delete what is in it instead.", path)
		}
	}
	if err := noLink(filepath.Dir(path)); err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("There is nothing at %s to delete.", path)
	}
	if fi.IsDir() && !recursive {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("%s is a folder with files in it; pass recursive to delete them too.", path)
		}
		return nil
	}
	if fi.IsDir() {
		return os.RemoveAll(path)
	}
	return os.Remove(path)
}

// noLink refuses a path that is, or passes through, a symbolic link: the decision order judged
// the path as written, not where a link would lead.
func noLink(path string) error {
	for p := path; p != "/" && p != "."; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 && (p == path || !isSystemLink(p)) {
			return fmt.Errorf("%s is a link; the file tools work only on real files and folders.", p)
		}
	}
	return nil
}

// isSystemLink are the links a system has above its users' folders (/var → private/var on
// macOS, /home → /usr/home on some systems); they are not a node's doing.
func isSystemLink(p string) bool {
	return strings.Count(p, "/") <= 1
}
