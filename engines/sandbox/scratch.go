package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// scratchLimit is how much of a settings folder is copied for a run; past it, the rest is linked
// (read-only inside the sandbox, like the dependency folders always are).
const scratchLimit = 64 << 20

// scratchCopy copies the settings folder src into dst, for an agent that writes there while it
// runs inside Ensemble's sandbox: it sees the copy in src's place, and nothing it changes outlasts
// the run. Dependency folders (node_modules) and what lies past scratchLimit are links to the
// originals, which the sandbox keeps read-only. A src that does not exist gives an empty dst.
func scratchCopy(src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	budget := int64(scratchLimit)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == src {
				return fs.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case p == src:
			return nil
		case d.IsDir() && d.Name() == "node_modules":
			return linkOrSkip(p, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case !d.Type().IsRegular():
			return nil // sockets, pipes: nothing an agent reads settings from
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Size() > budget {
			return os.Symlink(p, to)
		}
		budget -= fi.Size()
		return copyFile(p, to, fi.Mode().Perm())
	})
	if err != nil {
		return fmt.Errorf("copy %s for the run: %w", src, err)
	}
	return nil
}

func linkOrSkip(p, to string) error {
	if err := os.Symlink(p, to); err != nil {
		return err
	}
	return filepath.SkipDir
}

func copyFile(from, to string, perm fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
