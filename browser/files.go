package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// maxFetch bounds a fetched file.
const maxFetch = 100 << 20

// Upload puts files into a file input (the runtime has judged the paths).
func (b *Broker) Upload(ctx context.Context, w Work, id, ref string, paths []string) (Page, error) {
	return b.action(ctx, w, id, false, func(c context.Context, t *tab) error {
		n, err := t.ref(c, ref)
		if err != nil {
			return err
		}
		_, err = chromedp.Call(c, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: paths, BackendNodeID: n})
		return err
	})
}

// Download clicks ref and waits for the file it downloads into dir.
func (b *Broker) Download(ctx context.Context, w Work, id, ref, dir string) (File, error) {
	t, err := b.use(w, id, false)
	if err != nil {
		return File{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return File{}, err
	}
	t.act.Lock()
	defer t.act.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var f File
	err = runUnder(ctx, t.context(), func(c context.Context) error {
		bcid := chromedp.FromContext(c).BrowserContextID
		if _, err := chromedp.CallBrowser(c, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
			Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, BrowserContextID: bcid, DownloadPath: dir, EventsEnabled: new(true),
		}); err != nil {
			return err
		}
		n, err := t.ref(c, ref)
		if err != nil {
			return err
		}
		begins := chromedp.BrowserEvents(c, cdpbrowser.DownloadWillBegin)
		progress := chromedp.BrowserEvents(c, cdpbrowser.DownloadProgress)
		x, y, err := center(c, n)
		if err != nil {
			return err
		}
		if err := mouseClick(c, x, y); err != nil {
			return err
		}
		var begin cdpbrowser.EventDownloadWillBegin
		for ev, err := range begins {
			if err != nil {
				return fmt.Errorf("no download began: %w", err)
			}
			begin = ev
			break
		}
		for ev, err := range progress {
			if err != nil {
				return fmt.Errorf("the download did not finish: %w", err)
			}
			if ev.GUID != begin.GUID {
				continue
			}
			switch ev.State {
			case cdpbrowser.DownloadProgressStateCompleted:
				f, err = finishDownload(dir, begin)
				return err
			case cdpbrowser.DownloadProgressStateCanceled:
				return errors.New("the download was canceled")
			}
		}
		return errors.New("the download did not finish")
	})
	return f, err
}

// finishDownload names the file Chromium saved under its guid.
func finishDownload(dir string, ev cdpbrowser.EventDownloadWillBegin) (File, error) {
	name := safeName(ev.SuggestedFilename)
	dst := uniquePath(dir, name)
	if err := os.Rename(filepath.Join(dir, ev.GUID), dst); err != nil {
		return File{}, err
	}
	return describe(dst, ev.URL)
}

// Fetch downloads u into dir with the cookies of w's profile (tab's when given), through the
// tab's address policy.
func (b *Broker) Fetch(ctx context.Context, w Work, id, u, dir string) (File, error) {
	t, err := b.fetchTab(w, id)
	if err != nil {
		return File{}, err
	}
	if err := b.allowed(ctx, t, u); err != nil {
		return File{}, err
	}
	var cookies []*network.Cookie
	err = runUnder(ctx, t.context(), func(c context.Context) error {
		res, err := chromedp.Call(c, network.GetCookies, network.GetCookiesParams{URLs: []string{u}})
		cookies = res.Cookies
		return err
	})
	if err != nil {
		return File{}, fmt.Errorf("reading the profile's cookies: %w", err)
	}
	t.mu.Lock()
	ua := ""
	if t.proc != nil {
		ua = t.proc.ua
	}
	t.mu.Unlock()
	return b.httpGet(ctx, t, u, dir, ua, cookies)
}

// fetchTab is the tab whose profile a fetch uses: the one named, else any of w's.
func (b *Broker) fetchTab(w Work, id string) (*tab, error) {
	if id != "" {
		return b.use(w, id, false)
	}
	for _, ti := range b.Tabs(w) {
		if !ti.Held {
			return b.use(w, ti.ID, false)
		}
	}
	return nil, fmt.Errorf("%w: open a tab first", ErrNoTab)
}

func (b *Broker) httpGet(ctx context.Context, t *tab, u, dir, ua string, cookies []*network.Cookie) (File, error) {
	client := &http.Client{
		Timeout:   2 * time.Minute,
		Transport: &http.Transport{DialContext: b.policyDialer(t).DialContext, Proxy: nil, TLSHandshakeTimeout: 15 * time.Second},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("too many redirects")
			}
			return b.allowed(req.Context(), t, req.URL.String())
		},
		Jar: nil,
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return File{}, err
	}
	if ua != "" {
		req.Header.Set("User-Agent", ua)
	}
	for _, c := range cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	resp, err := client.Do(req)
	if err != nil {
		return File{}, fmt.Errorf("fetching: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return File{}, fmt.Errorf("fetching: the server answered %s", resp.Status)
	}
	if resp.ContentLength > maxFetch {
		return File{}, errors.New("fetching: the file is larger than 100 MB")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return File{}, err
	}
	dst := uniquePath(dir, fileName(resp))
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return File{}, err
	}
	n, err := io.Copy(out, io.LimitReader(resp.Body, maxFetch+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxFetch {
		err = errors.New("the file is larger than 100 MB")
	}
	if err != nil {
		os.Remove(dst)
		return File{}, fmt.Errorf("fetching: %w", err)
	}
	return describe(dst, resp.Request.URL.String())
}

// policyDialer refuses connections the tab's network may not make, by the address dialled
// (a name that resolved elsewhere than it first did is caught here).
func (b *Broker) policyDialer(t *tab) *net.Dialer {
	return &net.Dialer{Timeout: 15 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		if t.network != LocalOnly {
			return nil
		}
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !isOwnAddr(a) {
			return fmt.Errorf("%w: the internet is off for this tab", ErrRefused)
		}
		return nil
	}}
}

// fileName is the name the server gives, else the path's last part.
func fileName(resp *http.Response) string {
	if _, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition")); err == nil && params["filename"] != "" {
		return safeName(params["filename"])
	}
	return safeName(path.Base(resp.Request.URL.Path))
}

// safeName keeps a file name inside its folder.
func safeName(s string) string {
	s = filepath.Base(strings.ReplaceAll(s, "\\", "/"))
	s = strings.Map(func(r rune) rune {
		if r < 32 || r == '/' || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if s == "" || s == "." || s == ".." || s == "/" {
		return "download"
	}
	return s
}

// uniquePath does not overwrite: name, name (1), …
func uniquePath(dir, name string) string {
	p := filepath.Join(dir, name)
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 1; ; i++ {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			return p
		}
		p = filepath.Join(dir, fmt.Sprintf("%s (%d)%s", base, i, ext))
	}
}

// describe sniffs a written file's type.
func describe(p, from string) (File, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return File{}, err
	}
	f, err := os.Open(p)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	typ := http.DetectContentType(head[:n])
	if byExt := mime.TypeByExtension(filepath.Ext(p)); byExt != "" && (strings.HasPrefix(typ, "text/plain") || typ == "application/octet-stream") {
		typ = byExt
	}
	if pu, err := url.Parse(from); err == nil {
		pu.User = nil
		from = pu.String()
	}
	return File{Path: p, Name: filepath.Base(p), Mime: typ, Size: fi.Size(), URL: from}, nil
}
