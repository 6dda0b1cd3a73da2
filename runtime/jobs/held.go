package jobs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/ledger"
	"github.com/ensemblework/ensemble/runtime/problem"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

// What a run's browser tools capture or download is its evidence at once (spec 003), unless it
// shows one of the person's saved secrets or something shaped like a key: then it is held on
// this computer, in the run's held/ folder, which nothing serves, for the person's preview
// (spec 002 §8.16). The agent hears that it is held and never sees it.

// maxScanned is how much of a downloaded or uploaded file is looked through for secrets.
const maxScanned = 4 << 20

func (r *run) heldDir() string     { return filepath.Join(r.evidenceDir(), "held") }
func (r *run) incomingDir() string { return filepath.Join(r.evidenceDir(), "incoming") }

// shotTextPath is where the page text of a kept screenshot is, for capture_check.
func (r *run) shotTextPath(id string) string {
	return filepath.Join(r.evidenceDir(), "text", id+".txt")
}

// The person's rules for capturing a site (runtime/node keeps them, for nodes and runs alike).
const (
	SitePreview = "preview" // held for the person's preview
	SiteNever   = "never"   // not captured at all
)

// siteRule is the person's rule for capturing site, or "".
func (r *run) siteRule(site string) string {
	if r.s.opts.SiteRule == nil || site == "" {
		return ""
	}
	return r.s.opts.SiteRule(r.ctx, site)
}

// neverCaptured is a screenshot of a site the person never has captured: dropped unseen.
type neverCaptured string

func (n neverCaptured) Error() string {
	return fmt.Sprintf("the person never has %s captured, so no picture of it was kept; read the page with browser_snapshot", string(n))
}

// holdReason is why text is held from the agent and the run's evidence, or "".
func (r *run) holdReason(text string) string {
	switch {
	case r.hide(text) != text:
		return "shows one of the person's saved secrets"
	case secrets.KeyShaped(text):
		return "shows something shaped like a key"
	}
	return ""
}

// kept is a capture or a download as the run keeps it: its evidence, or held and why.
type kept struct {
	ev     Evidence
	held   bool
	why    string
	width  int
	height int
	err    error
}

func newEvidenceID() string {
	var b [8]byte
	rand.Read(b[:])
	return "evd_" + hex.EncodeToString(b[:])
}

// keepShot keeps a screenshot as the run's evidence with its page text beside it, or holds it.
func (r *run) keepShot(shot browser.Shot) kept {
	if len(shot.Image) == 0 {
		return kept{err: errors.New("the browser gave back no picture")}
	}
	ext := ".png"
	if shot.Mime == "image/jpeg" {
		ext = ".jpg"
	}
	site := siteName(shot.URL)
	rule := r.siteRule(site)
	if rule == SiteNever {
		return kept{err: neverCaptured(site)}
	}
	ev := Evidence{ID: newEvidenceID(), Kind: "screenshot", Name: "screenshot-" + time.Now().UTC().Format("20060102-150405") + ext,
		Size: int64(len(shot.Image)), Caption: Redact(trim(shot.Title, previewInput))}
	k := kept{ev: ev, width: shot.Width, height: shot.Height, why: r.holdReason(shot.Text)}
	if k.why == "" && rule == SitePreview {
		k.why = "is of " + site + ", whose captures the person sees first"
	}
	if k.held = k.why != ""; k.held {
		k.ev.Caption = ""
		k.err = r.holdBytes(ev, shot.Image, k.why)
		return k
	}
	if k.err = writeNew(filepath.Join(r.evidenceDir(), ev.ID+"-"+ev.Name), shot.Image); k.err != nil {
		return k
	}
	if err := writeNew(r.shotTextPath(ev.ID), []byte(shot.Text)); err != nil {
		r.s.log.Warn("jobs: keep a screenshot's page text", "job", r.job.ID, "err", err)
	}
	r.rec.add(KindEvidence, Trace{Text: ev.Caption, Input: ev.Name, Reason: ev.ID + " (" + ev.Kind + ")"}, nil)
	return k
}

// shotAnswer is the tool's answer for a kept or held screenshot.
func (r *run) shotAnswer(k kept) (*mcp.CallToolResult, any, error) {
	switch {
	case k.err != nil:
		return toolRefusal(fmt.Errorf("keep the screenshot: %w", k.err)), nil, nil
	case k.held:
		return toolText("The screenshot is held for the person's preview: it " + k.why + ", so it is not kept as this run's evidence and you do not see it."), nil, nil
	}
	return toolText(fmt.Sprintf("Kept the screenshot (%d×%d) as evidence %s; check it with capture_check and name it in report_result's checks.", k.width, k.height, k.ev.ID)), k.ev, nil
}

// fileAnswer keeps a file the browser downloaded into the incoming folder as the run's
// evidence, or holds it, and says which.
func (r *run) fileAnswer(f browser.File, err error) (*mcp.CallToolResult, any, error) {
	if err != nil {
		return toolRefusal(runBrowserError(err)), nil, nil
	}
	k := r.keepFile(f)
	switch {
	case k.err != nil:
		return toolRefusal(fmt.Errorf("keep the download: %w", k.err)), nil, nil
	case k.held:
		return toolText(fmt.Sprintf("Downloaded %s (%d KB); it is held for the person's preview: it %s, so it is not kept as this run's evidence and you do not see it.",
			k.ev.Name, (k.ev.Size+1023)/1024, k.why)), nil, nil
	}
	return toolText(fmt.Sprintf("Downloaded %s (%d KB, %s) and kept it as evidence %s; name it in report_result.", k.ev.Name, (k.ev.Size+1023)/1024, f.Mime, k.ev.ID)), k.ev, nil
}

// keepFile moves a downloaded file into the run's evidence, or into held/.
func (r *run) keepFile(f browser.File) kept {
	defer os.Remove(f.Path)
	fi, err := os.Lstat(f.Path)
	switch {
	case err != nil:
		return kept{err: err}
	case !fi.Mode().IsRegular():
		return kept{err: errors.New("the download is not a regular file")}
	case fi.Size() > maxEvidence:
		return kept{err: fmt.Errorf("the download is %d MB; evidence is at most %d MB", fi.Size()>>20, maxEvidence>>20)}
	}
	name := safeName(f.Name, filepath.Base(f.Path))
	k := kept{ev: Evidence{ID: newEvidenceID(), Kind: evidenceKind(f.Mime), Name: name, Size: fi.Size(), Caption: Redact(trim(siteName(f.URL), previewInput))}}
	if secrets.KeyPath(name) != "" {
		k.why = "is a file of keys or sign-ins by its kind"
	} else {
		k.why = r.secretInFile(f.Path, fi.Size())
	}
	dst := filepath.Join(r.evidenceDir(), k.ev.ID+"-"+name)
	if k.held = k.why != ""; k.held {
		k.ev.Caption = ""
		dst = filepath.Join(r.heldDir(), k.ev.ID+"-"+name)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return kept{err: err}
	}
	if err := os.Rename(f.Path, dst); err != nil {
		return kept{err: err}
	}
	if k.held {
		r.noteHeld(k.ev, k.why)
		return k
	}
	r.rec.add(KindEvidence, Trace{Text: k.ev.Caption, Input: k.ev.Name, Reason: k.ev.ID + " (" + k.ev.Kind + ")"}, nil)
	return k
}

// secretInFile is why a file's first bytes hold a saved secret or a key, or "".
func (r *run) secretInFile(path string, size int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf, _ := io.ReadAll(io.LimitReader(f, maxScanned))
	return r.bytesHoldReason(buf)
}

// bytesHoldReason is why a file's bytes (the first maxScanned of them are read) hold a saved
// secret or a key, or "". A picture's or an archive's bytes are not words, unless they show a
// private key block.
func (r *run) bytesHoldReason(b []byte) string {
	b = b[:min(len(b), maxScanned)]
	if bytes.IndexByte(b, 0) >= 0 && !bytes.Contains(b, []byte("PRIVATE KEY")) {
		return ""
	}
	if why := r.holdReason(string(b)); why != "" {
		return strings.Replace(why, "shows", "holds", 1)
	}
	return ""
}

// holdBytes keeps data in the run's held folder and notes it in the trace.
func (r *run) holdBytes(ev Evidence, data []byte, why string) error {
	if err := writeNew(filepath.Join(r.heldDir(), ev.ID+"-"+ev.Name), data); err != nil {
		return err
	}
	r.noteHeld(ev, why)
	return nil
}

// noteHeld tells the person, in the run's trace, that a file waits for their preview.
func (r *run) noteHeld(ev Evidence, why string) {
	r.rec.add(KindNote, Trace{Text: fmt.Sprintf("Held %s for your preview: it %s. It stays on this computer and the agent does not see it.", ev.Name, why),
		Input: ev.Name, Reason: ev.ID + " (held)"}, nil)
}

// writeNew writes a new file (0600) in a folder it makes (0700).
func writeNew(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// evidenceKind is the evidence kind of a downloaded file by its type.
func evidenceKind(mime string) string {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return "image"
	case strings.HasPrefix(mime, "video/"):
		return "video"
	}
	return "file"
}

// safeName is a file name fit for the evidence folder: its last element, no leading dots, no
// control characters; fallback when nothing is left.
func safeName(name, fallback string) string {
	clean := func(s string) string {
		s = filepath.Base(strings.ReplaceAll(s, `\`, "/"))
		s = strings.Map(func(c rune) rune {
			if c < 0x20 || c == 0x7f || c == '/' {
				return -1
			}
			return c
		}, s)
		return strings.TrimLeft(strings.TrimSpace(s), ".")
	}
	if s := clean(name); s != "" {
		return trim(s, 120)
	}
	if s := clean(fallback); s != "" {
		return trim(s, 120)
	}
	return "download"
}

// siteName is a URL's host, for a caption: never its path or query.
func siteName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// Held is a file a run's browser tools held for the person's preview.
type Held struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// ErrNoHeld is a held file that is not there (released, discarded, or never held).
var ErrNoHeld = problem.New(problem.KindNotFound, "This run holds no such file: it was released or discarded, or never held.")

// heldPath is where a run's held file is, by its id; "" when it is not there.
func (s *Service) heldPath(jobID, id string) string {
	if !strings.HasPrefix(jobID, "job_") || !strings.HasPrefix(id, "evd_") || strings.ContainsAny(jobID+id, `/\.*?[`) {
		return ""
	}
	m, _ := filepath.Glob(filepath.Join(s.opts.DataDir, "evidence", jobID, "held", id+"-*"))
	if len(m) != 1 {
		return ""
	}
	return m[0]
}

// HeldFiles lists what a run holds for the person's preview, oldest first.
func (s *Service) HeldFiles(ctx context.Context, jobID string) ([]Held, error) {
	if _, err := s.Get(ctx, jobID); err != nil {
		return nil, err
	}
	des, err := os.ReadDir(filepath.Join(s.opts.DataDir, "evidence", jobID, "held"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	out := []Held{}
	for _, de := range des {
		id, name, ok := strings.Cut(de.Name(), "-")
		fi, err := de.Info()
		if !ok || !strings.HasPrefix(id, "evd_") || err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, Held{ID: id, Name: name, Size: fi.Size()})
	}
	return out, nil
}

// HeldFile opens a held file for the person's own preview.
func (s *Service) HeldFile(jobID, id string) (*os.File, string, error) {
	p := s.heldPath(jobID, id)
	if p == "" {
		return nil, "", ErrNoHeld
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, "", ErrNoHeld
	}
	return f, strings.TrimPrefix(filepath.Base(p), id+"-"), nil
}

// ReleaseHeld makes a held file the run's evidence, under the same id: the person looked and
// let it go. The run's trace says so.
func (s *Service) ReleaseHeld(ctx context.Context, jobID, id string) (Evidence, error) {
	p := s.heldPath(jobID, id)
	if p == "" {
		return Evidence{}, ErrNoHeld
	}
	name := strings.TrimPrefix(filepath.Base(p), id+"-")
	fi, err := os.Stat(p)
	if err != nil {
		return Evidence{}, ErrNoHeld
	}
	kind := "file"
	if strings.HasPrefix(name, "screenshot-") {
		kind = "screenshot"
	}
	ev := Evidence{ID: id, Kind: kind, Name: name, Size: fi.Size()}
	if err := os.Rename(p, filepath.Join(s.opts.DataDir, "evidence", jobID, id+"-"+name)); err != nil {
		return Evidence{}, fmt.Errorf("jobs: release a held file: %w", err)
	}
	return ev, s.emitRun(ctx, jobID, KindEvidence, Trace{Text: "Released by the person after their preview.", Input: name, Reason: id + " (" + kind + ")"})
}

// DiscardHeld deletes a held file unseen by anyone but the person.
func (s *Service) DiscardHeld(ctx context.Context, jobID, id string) error {
	p := s.heldPath(jobID, id)
	if p == "" {
		return ErrNoHeld
	}
	name := strings.TrimPrefix(filepath.Base(p), id+"-")
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("jobs: discard a held file: %w", err)
	}
	return s.emitRun(ctx, jobID, KindNote, Trace{Text: "Discarded " + name + ", held for your preview.", Input: name, Reason: id + " (discarded)"})
}

// emitRun adds one record to a run's trace from outside its run (which may have ended).
func (s *Service) emitRun(ctx context.Context, jobID string, kind events.Kind, tr Trace) error {
	tr.RunID = jobID
	tr = tr.hidden(s.hide)
	return s.opts.Writer.Exec(ctx, func(t *ledger.Tx) error { return t.Emit(kind, jobID, tr) })
}
