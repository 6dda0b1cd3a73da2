// Package webfetch reads one web page for the tools that read the web, connecting only where its
// policy allows (by default the public internet), judged on the address each connection really
// goes to, redirects included, within the size and time limits of spec 000 §4.
package webfetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/html/charset"
)

// Fetcher fetches one web page for a tool that reads the web (the assistant's and a node's
// hub_read_web_page). Where it may connect is decided by its policy on the resolved address of
// every connection, redirects included.
type Fetcher struct {
	client   *http.Client
	maxBytes int64
	timeout  time.Duration
}

// config is what New's options set.
type config struct {
	policy       Policy
	resolver     *net.Resolver
	maxBytes     int64
	timeout      time.Duration
	maxRedirects int
}

// Option changes a Fetcher's defaults; tests use them to reach a server on loopback.
type Option func(*config)

// WithPolicy replaces PublicOnly.
func WithPolicy(p Policy) Option { return func(c *config) { c.policy = p } }

// WithResolver resolves names with r instead of the system's resolver.
func WithResolver(r *net.Resolver) Option { return func(c *config) { c.resolver = r } }

// WithLimits sets the largest body and the time one fetch may take, redirects and body included.
func WithLimits(maxBytes int64, timeout time.Duration) Option {
	return func(c *config) { c.maxBytes, c.timeout = maxBytes, timeout }
}

// The limits of spec 000 §4 ("Reading the web"), a Fetcher's defaults.
const (
	MaxBytes     = 10 << 20
	Timeout      = 20 * time.Second
	MaxRedirects = 5
)

// New returns a fetcher that reaches public addresses only, unless an option says
// otherwise.
func New(opts ...Option) *Fetcher {
	c := config{policy: PublicOnly, maxBytes: MaxBytes, timeout: Timeout, maxRedirects: MaxRedirects}
	for _, o := range opts {
		o(&c)
	}
	d := &net.Dialer{
		Timeout:  c.timeout,
		Resolver: c.resolver,
		// Control runs after the name is resolved and before the connection is made, once for
		// every address tried: the only place that sees where a connection really goes.
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("unexpected address %q: %w", address, err)
			}
			return c.policy(ap)
		},
	}
	tr := &http.Transport{
		// No proxy: through one, Control would judge the proxy's address instead of the page's.
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: c.timeout,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
	}
	client := &http.Client{
		Transport: tr,
		Timeout:   c.timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > c.maxRedirects {
				return &refusal{fmt.Sprintf("The page redirected more than %d times, so I stopped following it.", c.maxRedirects)}
			}
			if err := checkURL(req.URL); err != nil {
				return err
			}
			return nil
		},
	}
	return &Fetcher{client: client, maxBytes: c.maxBytes, timeout: c.timeout}
}

// refusal is a refusal or failure already worded for the person: its text is the sentence.
type refusal struct{ msg string }

func (e *refusal) Error() string { return e.msg }

// checkURL refuses what is not a plain http(s) address: other schemes reach files or other
// protocols, and a user name or password in the address would sign in somewhere.
func checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return &refusal{"Give the whole address, starting with https://."}
		}
		return &refusal{fmt.Sprintf("Only http and https addresses can be read, not %s: ones.", u.Scheme)}
	}
	if u.Hostname() == "" {
		return &refusal{"The address has no host name."}
	}
	if u.User != nil {
		return &refusal{"The address holds a user name or password; this tool signs in nowhere."}
	}
	return nil
}

// Page is a fetched page: where it ended up, its media type and its body as UTF-8.
type Page struct {
	URL       *url.URL
	MediaType string
	Body      []byte
}

// readableTypes are the media types a Fetcher reads.
var readableTypes = []string{"text/html", "application/xhtml+xml", "text/plain"}

// fetch gets raw, refusing what the policy, the limits or the media type do not allow. Its errors
// are sentences a person can act on.
func (f *Fetcher) Fetch(ctx context.Context, raw string) (Page, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return Page{}, &refusal{"That is not a web address."}
	}
	if err := checkURL(u); err != nil {
		return Page{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Page{}, &refusal{"That is not a web address."}
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; Ensemble page reader)")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1")
	resp, err := f.client.Do(req)
	if err != nil {
		return Page{}, f.explain(u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Page{}, &refusal{fmt.Sprintf("%s answered %s.", resp.Request.URL.Host, resp.Status)}
	}
	if resp.ContentLength > f.maxBytes {
		return Page{}, f.tooLarge()
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return Page{}, f.explain(u, err)
	}
	if int64(len(body)) > f.maxBytes {
		return Page{}, f.tooLarge()
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = http.DetectContentType(body)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || !slices.Contains(readableTypes, mt) {
		if mt == "" {
			mt = "an unknown kind of content"
		}
		return Page{}, &refusal{fmt.Sprintf("The address serves %s, which this tool does not read; it reads web pages (HTML) and plain text.", mt)}
	}
	r, err := charset.NewReader(bytes.NewReader(body), ct)
	if err == nil {
		if utf, err := io.ReadAll(r); err == nil {
			body = utf
		}
	}
	return Page{URL: resp.Request.URL, MediaType: mt, Body: body}, nil
}

func (f *Fetcher) tooLarge() error {
	return &refusal{fmt.Sprintf("The page is larger than %d MB, so it was not read.", f.maxBytes>>20)}
}

// explain words a failed request: a refused address, the time limit, or the network's error. It
// names the host of the request that failed, which after a redirect is not the one asked for.
func (f *Fetcher) explain(u *url.URL, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if at, perr := url.Parse(ue.URL); perr == nil && at.Hostname() != "" {
			u = at
		}
	}
	var fe *refusal
	var be *BlockedError
	switch {
	case errors.As(err, &fe):
		return fe
	case errors.As(err, &be):
		return &refusal{fmt.Sprintf("Refused: reading %s would connect to %s, which is %s, not the public internet; this tool reads public web pages only.", u.Host, be.Addr, be.Why)}
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return &refusal{fmt.Sprintf("%s did not answer within %s, so I stopped waiting.", u.Hostname(), f.timeout)}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return &refusal{fmt.Sprintf("There is no site named %s.", u.Hostname())}
	}
	return &refusal{fmt.Sprintf("Could not read %s: %s.", u.Hostname(), strings.TrimRight(strings.TrimSpace(fmt.Sprint(errors.Unwrap(err))), ".!?"))}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
