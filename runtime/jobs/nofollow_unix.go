//go:build unix

package jobs

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// openNoFollow opens path for reading, refusing a link at its last element (O_NOFOLLOW).
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s: %w", path, errNotPlain)
	}
	return f, err
}
