package node

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// The watchdog's files changed outside a run's folder (spec 002 §8.11) come from two places: the
// agent's own edits to a path outside it (its trace), and, while the run lives, fsnotify on the
// folder's parent, where a command writing a sibling of the folder shows. Only what changes while
// the run lives counts; the list is kept for the watchdog's window after it ends.

// maxOutside is how many outside paths a run keeps: one is enough to raise the finding.
const maxOutside = 20

// outsideWatches holds one watcher per live node run.
type outsideWatches struct {
	mu   sync.Mutex
	runs map[string]*outsideWatch // by job id
}

type outsideWatch struct {
	folder string
	w      *fsnotify.Watcher
	mu     sync.Mutex
	paths  []string
	ended  time.Time
}

// start watches the parent of folder for the job while it runs; a second start does nothing.
func (o *outsideWatches) start(jobID, folder string) {
	if folder == "" || filepath.Dir(folder) == folder {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.runs == nil {
		o.runs = map[string]*outsideWatch{}
	}
	if _, ok := o.runs[jobID]; ok {
		return
	}
	ow := &outsideWatch{folder: filepath.Clean(folder)}
	o.runs[jobID] = ow
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return // the trace's edits still count
	}
	if err := w.Add(filepath.Dir(ow.folder)); err != nil {
		w.Close()
		return
	}
	ow.w = w
	go ow.follow()
}

func (ow *outsideWatch) follow() {
	for {
		select {
		case ev, ok := <-ow.w.Events:
			if !ok {
				return
			}
			if ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Remove|fsnotify.Rename) != 0 && filepath.Clean(ev.Name) != ow.folder {
				ow.add(ev.Name)
			}
		case _, ok := <-ow.w.Errors:
			if !ok {
				return
			}
		}
	}
}

func (ow *outsideWatch) add(p string) {
	ow.mu.Lock()
	defer ow.mu.Unlock()
	for _, q := range ow.paths {
		if q == p {
			return
		}
	}
	if len(ow.paths) < maxOutside {
		ow.paths = append(ow.paths, p)
	}
}

// end stops watching a run that ended; what it saw stays for the watchdog's window.
func (o *outsideWatches) end(jobID string, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ow := o.runs[jobID]; ow != nil && ow.ended.IsZero() {
		ow.ended = at
		if ow.w != nil {
			ow.w.Close()
		}
	}
}

// seen is what the run changed outside its folder so far, as the watcher saw it.
func (o *outsideWatches) seen(jobID string) []string {
	o.mu.Lock()
	ow := o.runs[jobID]
	o.mu.Unlock()
	if ow == nil {
		return nil
	}
	ow.mu.Lock()
	defer ow.mu.Unlock()
	return append([]string(nil), ow.paths...)
}

// forget drops the runs that ended before cutoff, and closes every watcher at the service's end
// (cutoff zero).
func (o *outsideWatches) forget(cutoff time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, ow := range o.runs {
		if cutoff.IsZero() || !ow.ended.IsZero() && ow.ended.Before(cutoff) {
			if ow.w != nil && ow.ended.IsZero() {
				ow.w.Close()
			}
			delete(o.runs, id)
		}
	}
}

// editTool is an agent tool that writes a file it names.
var editTool = regexp.MustCompile(`(?i)(edit|write|patch|create|notebook)`)

// editedPath is the file an edit tool call names in its input, "" for another call.
func editedPath(tool, input string) string {
	if !editTool.MatchString(tool) || !strings.HasPrefix(strings.TrimSpace(input), "{") {
		return ""
	}
	var in map[string]any
	if json.Unmarshal([]byte(input), &in) != nil {
		return ""
	}
	for _, k := range []string{"file_path", "filePath", "notebook_path", "path"} {
		if p, ok := in[k].(string); ok && p != "" {
			return p
		}
	}
	return ""
}
