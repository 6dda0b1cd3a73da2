//go:build !unix

package jobs

import (
	"fmt"
	"os"
)

// openNoFollow opens path for reading, refusing a link at its last element. Without O_NOFOLLOW
// it checks first and compares after opening.
func openNoFollow(path string) (*os.File, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if before.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: %w", path, errNotPlain)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if after, err := f.Stat(); err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was opened: %w", path, errNotPlain)
	}
	return f, nil
}
