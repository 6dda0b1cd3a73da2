package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ensemblework/ensemble/browser"
	"github.com/ensemblework/ensemble/runtime/tools"
)

// The capture tools (spec 002 §8.16): a page's screenshot at a viewport in a private tab of its
// own, the checks before a capture is sent (not blank, the expected text), and what this
// computer can capture.
const (
	ToolCaptureScreenshot = "capture_screenshot"
	ToolCaptureCheck      = "capture_check"
	ToolCaptureStatus     = "capture_status"
)

// Devices capture_screenshot emulates by their viewport.
var captureDevices = map[string][2]int{"phone": {390, 844}, "desktop": {1280, 800}}

type captureShotIn struct {
	URL      string `json:"url" jsonschema:"the page or localhost app" check:"minLength=1,maxLength=4000"`
	Width    int    `json:"width,omitempty" check:"minimum=0,maximum=4000"`
	Height   int    `json:"height,omitempty" check:"minimum=0,maximum=4000"`
	Device   string `json:"device,omitempty" jsonschema:"phone (390×844) or desktop (1280×800)" check:"enum=phone|desktop"`
	FullPage bool   `json:"fullPage,omitempty"`
}
type captureCheckIn struct {
	Evidence   string `json:"evidence" jsonschema:"the capture's evidence id (nf_…)" check:"minLength=1,maxLength=100"`
	ExpectText string `json:"expectText,omitempty" jsonschema:"text the page must have shown" check:"maxLength=500"`
}

// CaptureCheck is one check of capture_check, for a step's report.
type CaptureCheck = browser.Check

func captureToolDefs(def func(name, desc string) tools.Tool) []tools.Tool {
	return []tools.Tool{
		tools.Define(def(ToolCaptureScreenshot, "A screenshot of a web page or a localhost app at a viewport (device phone or desktop, or width and height), in a private tab closed after. It appears with your reply and is kept as evidence."),
			browserRun(ToolCaptureScreenshot, func(in captureShotIn) (string, string) { return "", siteOf(in.URL) }, func(ctx context.Context, c *turnCtx, in captureShotIn) (tools.Result, error) {
				return c.s.captureScreenshot(ctx, c, in)
			})),
		tools.Define(def(ToolCaptureCheck, "Check a capture before sending it: the image is not blank, and the page showed the expected text. Each is a check for a step's report."),
			browserRun(ToolCaptureCheck, nil, func(ctx context.Context, c *turnCtx, in captureCheckIn) (tools.Result, error) {
				checks, err := c.s.captureCheck(c.node, in)
				if err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Summary: browser.CheckLines(checks), Data: checks}, nil
			})),
		tools.Define(def(ToolCaptureStatus, "What this computer can browse and capture with, and what to install when it cannot."),
			browserRun(ToolCaptureStatus, nil, func(ctx context.Context, c *turnCtx, _ struct{}) (tools.Result, error) {
				st := c.s.cfg.Browser.Status(ctx)
				raw, _ := json.Marshal(st)
				return tools.Result{Summary: string(raw), Data: st}, nil
			})),
	}
}

func (s *Service) captureScreenshot(ctx context.Context, c *turnCtx, in captureShotIn) (tools.Result, error) {
	if err := s.decideBrowse(ctx, c, ToolCaptureScreenshot, in.URL); err != nil {
		return parkedOr(err)
	}
	w, h := in.Width, in.Height
	if d, ok := captureDevices[in.Device]; ok && w == 0 && h == 0 {
		w, h = d[0], d[1]
	}
	work := nodeWork(c.node.ID)
	p, err := s.cfg.Browser.Open(ctx, browser.OpenOptions{Work: work, Private: true, URL: in.URL, Network: s.network(ctx), Width: w, Height: h})
	if err != nil {
		return tools.Result{}, err
	}
	defer s.cfg.Browser.CloseTab(context.WithoutCancel(ctx), work, p.Tab)
	s.cfg.Browser.Wait(ctx, work, p.Tab, browser.WaitOptions{Load: true})
	shot, err := s.cfg.Browser.Screenshot(ctx, work, p.Tab, browser.ShotOptions{Width: w, Height: h, FullPage: in.FullPage})
	if err != nil {
		return tools.Result{}, err
	}
	k, err := s.keepShot(ctx, c, shot, "Capture of "+siteOf(in.URL))
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Summary: fmt.Sprintf("Captured %s at %d×%d. %s", siteOf(shot.URL), shot.Width, shot.Height, k.summary()), Data: k}, nil
}

// captureCheck checks a kept capture: its picture is not blank, and the text kept beside it has
// what was expected.
func (s *Service) captureCheck(n Node, in captureCheckIn) ([]CaptureCheck, error) {
	if s.cfg.Computer == nil {
		return nil, errNoComputer
	}
	f, err := s.cfg.Computer.SharedFile(in.Evidence)
	if err != nil {
		return nil, fmt.Errorf("There is no capture %s: name one a capture tool answered.", in.Evidence)
	}
	defer f.Close()
	text, err := s.shotText(n, in.Evidence)
	return browser.CheckCapture(f, text, err == nil, in.ExpectText), nil
}

// shotTextPath is where the page text of a capture shown is kept, beside the node's screenshots:
// never for a held one.
func (s *Service) shotTextPath(n Node, id string) (string, error) {
	if s.cfg.Computer == nil {
		return "", errNoComputer
	}
	if !strings.HasPrefix(id, "nf_") || strings.ContainsAny(id, `/\.`) {
		return "", errors.New("not a capture's id")
	}
	own, err := s.cfg.Computer.NodeFolder(n.Slug)
	if err != nil {
		return "", err
	}
	return filepath.Join(own, "screenshots", id+".txt"), nil
}

func (s *Service) keepShotText(n Node, id, text string) error {
	path, err := s.shotTextPath(n, id)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o600)
}

func (s *Service) shotText(n Node, id string) (string, error) {
	path, err := s.shotTextPath(n, id)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	return string(b), err
}
