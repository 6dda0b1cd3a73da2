package bridge

import (
	"context"
	"os/exec"
	"strings"
	"time"
)

// checkout is the repository the editor works in, read from git in the working folder.
type checkout struct {
	Top    string // the top folder
	Remote string // origin's URL
	Branch string
}

// detect reads the checkout around dir; fields stay empty where git has no answer.
func detect(ctx context.Context, dir string) checkout {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	git := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	c := checkout{Top: git("rev-parse", "--show-toplevel")}
	if c.Top == "" {
		return c
	}
	c.Remote = git("remote", "get-url", "origin")
	c.Branch = git("rev-parse", "--abbrev-ref", "HEAD")
	if c.Branch == "HEAD" {
		c.Branch = ""
	}
	return c
}
