package jobs

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ensemblework/ensemble/runtime/events"
	"github.com/ensemblework/ensemble/runtime/judge"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

// KindEvidence is a file the agent attached for the person to see (attach_evidence).
const KindEvidence events.Kind = "run.evidence"

// KindReport is the agent's own report (report_result).
const KindReport events.Kind = "run.report"

var evidenceKinds = []string{"screenshot", "image", "video", "trace", "report", "log", "file"}

const maxEvidence = 100 << 20

// Evidence is a file attached to a run, kept in the run's evidence folder.
type Evidence struct {
	ID            string `json:"id"`
	Kind          string `json:"kind"`
	Name          string `json:"name"`
	Size          int64  `json:"size"`
	Caption       string `json:"caption,omitempty"`
	RequirementID string `json:"requirementId,omitempty"`
}

// AttachInput is attach_evidence's input.
type AttachInput struct {
	Path          string `json:"path" jsonschema:"the file, relative to the run's folder or absolute"`
	Kind          string `json:"kind" jsonschema:"screenshot, image, video, trace, report, log or file"`
	Caption       string `json:"caption,omitempty" jsonschema:"a line saying what it shows"`
	RequirementID string `json:"requirementId,omitempty"`
}

// evidenceDir is where a run's evidence is kept.
func (r *run) evidenceDir() string { return filepath.Join(r.s.opts.DataDir, "evidence", r.job.ID) }

// hasEvidence reports whether id is evidence of this run.
func (r *run) hasEvidence(id string) bool {
	if !strings.HasPrefix(id, "evd_") || strings.ContainsAny(id, `/\.`) {
		return false
	}
	m, _ := filepath.Glob(filepath.Join(r.evidenceDir(), id+"-*"))
	return len(m) == 1
}

// attach copies a file into the run's evidence folder. A file outside the run's folder is read
// only if the run's rules let it read there; links are not followed. A file of keys by its name,
// or an archive holding one, is refused; one that shows a saved secret or something shaped like
// a key is held for the person's preview, as a capture would be.
func (r *run) attach(ctx context.Context, in AttachInput) (kept, error) {
	if !oneOf(in.Kind, evidenceKinds) {
		return kept{}, fmt.Errorf("kind %q is not one of %s", in.Kind, strings.Join(evidenceKinds, ", "))
	}
	path, fi, err := r.readable(in.Path)
	if err != nil {
		return kept{}, err
	}
	if why := secrets.KeyPath(path); why != "" {
		return kept{}, fmt.Errorf("not attached: %s, which a run never attaches", why)
	}
	if fi.Size() > maxEvidence {
		return kept{}, fmt.Errorf("%s is %d MB; evidence is at most %d MB", in.Path, fi.Size()>>20, maxEvidence>>20)
	}
	src, err := os.Open(path)
	if err != nil {
		return kept{}, fmt.Errorf("cannot read %s: %w", in.Path, err)
	}
	defer src.Close()
	if opened, err := src.Stat(); err != nil || !os.SameFile(fi, opened) {
		return kept{}, fmt.Errorf("%s changed while it was being attached", in.Path)
	}
	data, err := io.ReadAll(io.LimitReader(src, maxEvidence))
	if err != nil {
		return kept{}, fmt.Errorf("cannot read %s: %w", in.Path, err)
	}
	// An archive is read twice: for a file of keys inside (refused), then for an entry that shows a
	// secret (held).
	if why := secrets.ArchiveProblem(path, data, func([]byte) bool { return false }); why != "" {
		return kept{}, fmt.Errorf("not attached: %s, which a run never attaches", why)
	}
	k := kept{ev: Evidence{ID: newEvidenceID(), Kind: in.Kind, Name: safeName(filepath.Base(path), "file"), Size: int64(len(data)),
		Caption: Redact(trim(in.Caption, previewInput)), RequirementID: in.RequirementID}}
	k.why = r.bytesHoldReason(data)
	if k.why == "" && secrets.ArchiveProblem(path, data, func(b []byte) bool { return r.bytesHoldReason(b) != "" }) != "" {
		k.why = "holds a saved secret or something shaped like a key inside"
	}
	if k.held = k.why != ""; k.held {
		k.ev.Caption = ""
		return k, r.holdBytes(k.ev, data, k.why)
	}
	if err := writeNew(filepath.Join(r.evidenceDir(), k.ev.ID+"-"+k.ev.Name), data); err != nil {
		return kept{}, fmt.Errorf("cannot copy %s: %w", in.Path, err)
	}
	r.rec.add(KindEvidence, Trace{Text: k.ev.Caption, Input: k.ev.Name, Reason: k.ev.ID + " (" + k.ev.Kind + ")"}, nil)
	return k, nil
}

// readable is a file the run may read, resolved against its folder: a file outside it only
// where the run's rules let it read, a regular file, not a link.
func (r *run) readable(p string) (string, os.FileInfo, error) {
	path := p
	if !filepath.IsAbs(path) {
		path = filepath.Join(r.job.WorkDir, path)
	}
	path = filepath.Clean(path)
	if !within(r.job.WorkDir, path) {
		r.mu.Lock()
		kept := cloneKept(r.kept)
		r.mu.Unlock()
		v := judge.Decide(judge.Call{Tool: judge.ToolRead, Paths: []string{path}, Cwd: r.job.WorkDir},
			JudgeSettings(r.job.Settings, r.job.FolderKind, r.job.WorkDir, r.places, kept))
		if v.Decision != judge.Allow {
			return "", nil, fmt.Errorf("%s is outside the run's folder and this run may not read it there: %s", p, v.Reason)
		}
	}
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("there is no file %s", p)
	case fi.Mode()&os.ModeSymlink != 0:
		return "", nil, fmt.Errorf("%s is a link; name the file itself", p)
	case !fi.Mode().IsRegular():
		return "", nil, fmt.Errorf("%s is not a regular file", p)
	}
	return path, fi, nil
}

// within reports whether path is dir or inside it, after following links in both.
func within(dir, path string) bool {
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// EvidenceFile opens a run's evidence file by its id, for the person to look at; the error is
// os.ErrNotExist when the run has no such evidence.
func (s *Service) EvidenceFile(jobID, id string) (*os.File, string, error) {
	if !strings.HasPrefix(jobID, "job_") || strings.ContainsAny(jobID+id, `/\.`) || !strings.HasPrefix(id, "evd_") {
		return nil, "", os.ErrNotExist
	}
	m, _ := filepath.Glob(filepath.Join(s.opts.DataDir, "evidence", jobID, id+"-*"))
	if len(m) != 1 {
		return nil, "", os.ErrNotExist
	}
	f, err := os.Open(m[0])
	if err != nil {
		return nil, "", os.ErrNotExist
	}
	return f, strings.TrimPrefix(filepath.Base(m[0]), id+"-"), nil
}
