package jobs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/secrets"
)

// The run's browser tools that move files and show pages (spec 002 §8.16, spec 003's browser
// and capture paragraph): browser_view, browser_fetch, browser_download, browser_upload and
// capture_check. What a run fetches or downloads is its evidence at once, named by id; what it
// uploads is a file it may read, never a key, a sign-in or a file holding a saved secret.

// Inputs of the run's file and view tools.
type (
	BrowserViewInput struct {
		URL string `json:"url,omitempty" jsonschema:"a page to open and look at; or name a tab"`
		Tab string `json:"tab,omitempty" jsonschema:"one of this run's tabs"`
	}
	BrowserFetchInput struct {
		URL string `json:"url" jsonschema:"the file (a PDF, an image, a CSV), http:// or https://"`
		Tab string `json:"tab,omitempty" jsonschema:"fetch with this tab's sign-ins"`
	}
	BrowserUploadInput struct {
		Tab  string `json:"tab"`
		Ref  string `json:"ref" jsonschema:"the file input's reference from the snapshot"`
		Path string `json:"path" jsonschema:"the file, relative to the run's folder or absolute"`
	}
	CaptureCheckInput struct {
		Evidence   string `json:"evidence" jsonschema:"the capture's evidence id (evd_…)"`
		ExpectText string `json:"expectText,omitempty" jsonschema:"text the page must have shown"`
	}
)

func (r *run) addBrowserFileTools(srv *mcp.Server, b Browser) {
	w := r.tabWork()
	addWeb(srv, "browser_view", "Look at a page in one call: open it (or take a tab), a screenshot kept as this run's evidence, and the page's text.",
		func(ctx context.Context, in BrowserViewInput) (*mcp.CallToolResult, any, error) {
			return r.view(ctx, b, in)
		})
	addWeb(srv, "browser_fetch", "Download a file (a PDF, an image, a CSV) with the browser's sign-ins; it is kept as this run's evidence, and the answer names its id.",
		func(ctx context.Context, in BrowserFetchInput) (*mcp.CallToolResult, any, error) {
			if err := r.mayOpen(in.URL); err != nil {
				return toolRefusal(err), nil, nil
			}
			f, err := b.Fetch(ctx, w, in.Tab, in.URL, r.incomingDir())
			return r.fileAnswer(f, err)
		})
	addWeb(srv, "browser_download", "Click a download link or button in a tab and keep the file as this run's evidence; the answer names its id.",
		func(ctx context.Context, in BrowserRefInput) (*mcp.CallToolResult, any, error) {
			if err := r.judgeClick(ctx, b, in.Tab, in.Ref); err != nil {
				return toolRefusal(err), nil, nil
			}
			f, err := b.Download(ctx, w, in.Tab, in.Ref, r.incomingDir())
			return r.fileAnswer(f, err)
		})
	addWeb(srv, "browser_upload", "Put a file into a tab's file input: one in the run's folder, or where the run may read. Never a key, a sign-in or a file holding a saved secret.",
		func(ctx context.Context, in BrowserUploadInput) (*mcp.CallToolResult, any, error) {
			path, err := r.uploadable(in.Path)
			if err != nil {
				return toolRefusal(err), nil, nil
			}
			p, err := b.Upload(ctx, w, in.Tab, in.Ref, []string{path})
			return r.pageAnswer(ctx, b, p, err)
		})
	addWeb(srv, "capture_check", "Check a screenshot this run kept before naming it in report_result: the picture is not blank, and the page showed the expected text.",
		func(ctx context.Context, in CaptureCheckInput) (*mcp.CallToolResult, any, error) {
			checks, err := r.captureCheck(in)
			if err != nil {
				return toolRefusal(err), nil, nil
			}
			return toolText(browser.CheckLines(checks)), map[string]any{"checks": checks}, nil
		})
}

// view opens the page (or takes the tab), keeps its screenshot and reads its text; a held
// screenshot's page text is not read either.
func (r *run) view(ctx context.Context, b Browser, in BrowserViewInput) (*mcp.CallToolResult, any, error) {
	w := r.tabWork()
	tab := in.Tab
	if tab == "" {
		if in.URL == "" {
			return toolRefusal(errors.New("name a url to look at, or one of this run's tabs")), nil, nil
		}
		if err := r.mayOpen(in.URL); err != nil {
			return toolRefusal(err), nil, nil
		}
		p, err := b.Open(ctx, browser.OpenOptions{Work: w, Owner: "owner", URL: in.URL, Network: r.network()})
		if err != nil {
			return toolRefusal(runBrowserError(err)), nil, nil
		}
		if p.SignIn != nil && !p.SignIn.HintOnly {
			return r.pageAnswer(ctx, b, p, nil)
		}
		tab = p.Tab
	}
	b.Wait(ctx, w, tab, browser.WaitOptions{Load: true, Timeout: 15 * time.Second})
	shot, err := b.Screenshot(ctx, w, tab, browser.ShotOptions{})
	if err != nil {
		return toolRefusal(runBrowserError(err)), nil, nil
	}
	k := r.keepShot(shot)
	res, data, _ := r.shotAnswer(k)
	said := ""
	var never neverCaptured
	switch {
	case errors.As(k.err, &never):
		said = "No picture was kept: the person never has " + string(never) + " captured."
	case k.err != nil || k.held:
		return res, data, nil
	default:
		said = res.Content[0].(*mcp.TextContent).Text
	}
	text := pageLine(shot.Page) + " " + said
	if sn, err := b.Snapshot(ctx, w, tab, browser.SnapshotOptions{}); err == nil {
		r.snaps.Keep(tab, sn.Text)
		text += "\n" + fencePage(r.hide(sn.Text))
	}
	return toolText(text), data, nil
}

// uploadable is the file a run may put into a page: one it may read (attach's rule), a regular
// file and not a link, never a secret by its kind nor one holding a saved secret's value.
func (r *run) uploadable(p string) (string, error) {
	path, fi, err := r.readable(p)
	if err != nil {
		return "", err
	}
	if why := secrets.KeyPath(path); why != "" {
		return "", fmt.Errorf("not uploaded: %s, which a run never uploads", why)
	}
	if fi.Size() > maxEvidence {
		return "", fmt.Errorf("%s is %d MB; a run uploads at most %d MB", p, fi.Size()>>20, maxEvidence>>20)
	}
	if hold := r.secretInFile(path, fi.Size()); hold != "" {
		return "", fmt.Errorf("%s %s, which a run never uploads", p, hold)
	}
	return path, nil
}

func (r *run) captureCheck(in CaptureCheckInput) ([]browser.Check, error) {
	if !r.hasEvidence(in.Evidence) {
		return nil, fmt.Errorf("this run kept no capture %s: name one a capture tool answered", in.Evidence)
	}
	m, _ := filepath.Glob(filepath.Join(r.evidenceDir(), in.Evidence+"-*"))
	f, err := os.Open(m[0])
	if err != nil {
		return nil, fmt.Errorf("read the capture %s: %w", in.Evidence, err)
	}
	defer f.Close()
	text, err := os.ReadFile(r.shotTextPath(in.Evidence))
	return browser.CheckCapture(f, string(text), err == nil, in.ExpectText), nil
}
