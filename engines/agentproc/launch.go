package agentproc

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ensemblework/ensemble/engines"
)

// Locate checks what every driver's Start needs before it starts its agent: a
// host, and a work folder (spec.Folder) that is an absolute path and exists.
// It returns the person's home folder and the program to run, from program
// (given home and the work folder; see [Program]). name ("claude") starts the
// errors.
func Locate(name string, spec engines.Spec, host engines.Host, program func(home, folder string) (string, error)) (home, bin string, err error) {
	if host == nil {
		return "", "", fmt.Errorf("%s: start: no host", name)
	}
	if spec.Folder == "" || !filepath.IsAbs(spec.Folder) {
		return "", "", fmt.Errorf("%s: start: the work folder must be an absolute path (got %q)", name, spec.Folder)
	}
	if fi, err := os.Stat(spec.Folder); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("%s: start: the work folder %s does not exist", name, spec.Folder)
	}
	home, _ = os.UserHomeDir()
	bin, err = program(home, spec.Folder)
	if err != nil {
		return "", "", err
	}
	return home, bin, nil
}

// Program is an agent's program: bin when the person chose one (it must be an
// executable file, else the error wraps [engines.ErrNotInstalled] and says
// hint), else what find finds on the trusted path given home (never inside
// folder).
func Program(bin, hint, home, folder string, find func(home, folder string) (string, error)) (string, error) {
	if bin == "" {
		return find(home, folder)
	}
	if !Executable(bin) {
		return "", fmt.Errorf("%w: %s is not an executable file; %s", engines.ErrNotInstalled, bin, hint)
	}
	return bin, nil
}
