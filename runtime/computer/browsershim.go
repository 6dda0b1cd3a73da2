package computer

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// The browser helper (spec 002 §8.16.4): a command a node runs gets BROWSER, and on Linux the
// usual openers first on its PATH (xdg-open, sensible-browser, x-www-browser, www-browser and
// gio; open on macOS), pointing at a small sh script in a folder of its own under the commands'
// temporary folder. Given one http(s) address (gio: "gio open URL") the script writes it to a
// file in that folder and exits 0, without the network; anything else goes to the real program
// found on PATH after the helper's folder. The computer reads the folder and hands each address
// it may open to the command's OnBrowserURL. A shell script rather than Ensemble's own program
// (as the sudo askpass helper is): it runs inside the command's OS sandbox, where only the
// temporary folders are sure to be there, and needs no second copy of the runtime started per
// opened page.

// shimPoll is how often the helper's folder is read while its command runs.
const shimPoll = 200 * time.Millisecond

// shimNames are the openers a command may call by name, besides $BROWSER.
func shimNames() []string {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd":
		return []string{"xdg-open", "sensible-browser", "x-www-browser", "www-browser", "gio"}
	case "darwin":
		return []string{"open"}
	}
	return nil
}

// shimScript is the helper; %s is its folder, shell-quoted. Its name says how it was called: as
// $BROWSER (ensemble-browser) it takes only an address, as gio only "gio open URL", as an opener
// one address; any other call is the real program's.
const shimScript = `#!/bin/sh
# Ensemble's browser helper: hands an http(s) address to the runtime; anything else goes on.
dir=%s
name=$(basename "$0")
url=
case "$name" in
gio) [ "$#" -eq 2 ] && [ "$1" = open ] && url=$2 ;;
*) [ "$#" -eq 1 ] && url=$1 ;;
esac
case "$url" in
http://*|https://*|HTTP://*|HTTPS://*)
	f=$(mktemp "$dir/.u.XXXXXX") || exit 1
	printf '%%s\n' "$url" >"$f" && mv "$f" "$f.url" && exit 0
	exit 1 ;;
esac
[ "$name" = ensemble-browser ] && { echo "ensemble-browser: only a web address (http or https) can be opened" >&2; exit 1; }
IFS=:
for p in $PATH; do
	[ "$p" = "$dir" ] && continue
	[ -x "$p/$name" ] && { unset IFS; exec "$p/$name" "$@"; }
done
echo "$name: not found" >&2
exit 127
`

// browserShim is one command's helper folder, read until close.
type browserShim struct {
	dir   string
	onURL func(string)
	log   func(msg string, args ...any)
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// newBrowserShim makes the helper's folder under the first temporary folder and starts reading
// it; onURL hears each address the policy lets open (OpenableURL), in the order they came.
func (c *Computer) newBrowserShim(onURL func(string)) (*browserShim, error) {
	names := shimNames()
	if names == nil || len(c.o.Temp) == 0 {
		return nil, nil // Windows commands keep their own browser
	}
	if err := os.MkdirAll(c.o.Temp[0], 0o777); err != nil {
		return nil, fmt.Errorf("computer: the browser helper's folder: %w", err)
	}
	dir, err := os.MkdirTemp(c.o.Temp[0], "ensemble-browser-")
	if err != nil {
		return nil, fmt.Errorf("computer: the browser helper's folder: %w", err)
	}
	script := filepath.Join(dir, "ensemble-browser")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(shimScript, shellQuote(dir))), 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("computer: the browser helper: %w", err)
	}
	for _, n := range names {
		if err := os.Symlink("ensemble-browser", filepath.Join(dir, n)); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("computer: the browser helper: %w", err)
		}
	}
	b := &browserShim{dir: dir, onURL: onURL, log: c.o.Log.Info, stop: make(chan struct{}), done: make(chan struct{})}
	go b.watch()
	return b, nil
}

// env is what the command's environment gets: BROWSER, and PATH with the helper's folder first.
func (b *browserShim) env(path string) (browser, newPath string) {
	return filepath.Join(b.dir, "ensemble-browser"), b.dir + string(os.PathListSeparator) + path
}

func (b *browserShim) watch() {
	defer close(b.done)
	t := time.NewTicker(shimPoll)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			b.sweep() // what the command handed over as it ended
			return
		case <-t.C:
			b.sweep()
		}
	}
}

// sweep reads and removes each address file, oldest first.
func (b *browserShim) sweep() {
	ents, err := os.ReadDir(b.dir)
	if err != nil {
		return
	}
	type file struct {
		path string
		at   time.Time
	}
	var files []file
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".url") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		files = append(files, file{filepath.Join(b.dir, e.Name()), info.ModTime()})
	}
	slices.SortStableFunc(files, func(a, b file) int { return a.at.Compare(b.at) })
	for _, f := range files {
		raw, err := os.ReadFile(f.path)
		os.Remove(f.path)
		if err != nil || len(raw) > 8<<10 {
			continue
		}
		u := strings.TrimSpace(string(raw))
		if why := OpenableURL(u); why != "" {
			// Only where it points, never its query (a sign-in's state and codes).
			b.log("computer: a command's page not opened", "host", hostOf(u), "why", why)
			continue
		}
		b.onURL(u)
	}
}

// close stops reading, after one last read, and removes the folder.
func (b *browserShim) close() {
	if b == nil {
		return
	}
	b.once.Do(func() {
		close(b.stop)
		<-b.done
		os.RemoveAll(b.dir)
	})
}

// BrowserShim makes a browser helper for a process the computer does not start itself (a node's
// terminal): the variables to add to its environment (BROWSER=…, PATH=… before path), and stop,
// which reads the last addresses and removes the helper. onURL hears each address it may open.
func (c *Computer) BrowserShim(path string, onURL func(url string)) (env []string, stop func(), err error) {
	b, err := c.newBrowserShim(onURL)
	if err != nil || b == nil {
		return nil, func() {}, err
	}
	br, p := b.env(path)
	return []string{"BROWSER=" + br, "PATH=" + p}, b.close, nil
}

// OpenableURL is why a command's page may not open in the node's browser, or "": only pages on
// the public web over https, or this computer's own addresses (loopback, http or https).
func OpenableURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "not a web address"
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	loop := host == "localhost" || strings.HasSuffix(host, ".localhost")
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		switch {
		case a.IsLoopback():
			loop = true
		case a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified() || a.IsMulticast() || !a.IsGlobalUnicast() || cgnat.Contains(a):
			return "an address on a private network"
		}
	}
	switch {
	case loop && (u.Scheme == "http" || u.Scheme == "https"):
		return ""
	case u.Scheme != "https":
		return "not https"
	case !strings.Contains(host, ".") || privateSuffix(host):
		return "a name on a private network"
	}
	return ""
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

func privateSuffix(host string) bool {
	for _, s := range []string{".local", ".lan", ".internal", ".intranet", ".corp", ".home", ".home.arpa", ".localdomain"} {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// hostOf is the host of an address, for a log line.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return ""
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
