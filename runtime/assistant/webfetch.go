package assistant

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

// webFetcher fetches one public web page for hub_read_web_page. Where it may connect is decided by
// its policy on the resolved address of every connection, redirects included.
type webFetcher struct {
	client   *http.Client
	maxBytes int64
	timeout  time.Duration
}

// webConfig is what newWebFetcher's options set.
type webConfig struct {
	policy       addrPolicy
	resolver     *net.Resolver
	maxBytes     int64
	timeout      time.Duration
	maxRedirects int
}

// webOption changes a webFetcher's defaults; tests use them to reach a server on loopback.
type webOption func(*webConfig)

// withPolicy replaces publicOnly.
func withPolicy(p addrPolicy) webOption { return func(c *webConfig) { c.policy = p } }

// withResolver resolves names with r instead of the system's resolver.
func withResolver(r *net.Resolver) webOption { return func(c *webConfig) { c.resolver = r } }

// withLimits sets the largest body and the time one fetch may take, redirects and body included.
func withLimits(maxBytes int64, timeout time.Duration) webOption {
	return func(c *webConfig) { c.maxBytes, c.timeout = maxBytes, timeout }
}

// The limits of spec 000 §4 ("Reading the web").
const (
	webMaxBytes     = 10 << 20
	webTimeout      = 20 * time.Second
	webMaxRedirects = 5
)

// newWebFetcher returns a fetcher that reaches public addresses only, unless an option says
// otherwise.
func newWebFetcher(opts ...webOption) *webFetcher {
	c := webConfig{policy: publicOnly, maxBytes: webMaxBytes, timeout: webTimeout, maxRedirects: webMaxRedirects}
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
				return &fetchError{fmt.Sprintf("The page redirected more than %d times, so I stopped following it.", c.maxRedirects)}
			}
			if err := checkWebURL(req.URL); err != nil {
				return err
			}
			return nil
		},
	}
	return &webFetcher{client: client, maxBytes: c.maxBytes, timeout: c.timeout}
}

// fetchError is a refusal or failure already worded for the person.
type fetchError struct{ msg string }

func (e *fetchError) Error() string { return e.msg }

// checkWebURL refuses what is not a plain http(s) address: other schemes reach files or other
// protocols, and a user name or password in the address would sign in somewhere.
func checkWebURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return &fetchError{"Give the whole address, starting with https://."}
		}
		return &fetchError{fmt.Sprintf("Only http and https addresses can be read, not %s: ones.", u.Scheme)}
	}
	if u.Hostname() == "" {
		return &fetchError{"The address has no host name."}
	}
	if u.User != nil {
		return &fetchError{"The address holds a user name or password; this tool signs in nowhere."}
	}
	return nil
}

// webPage is a fetched page: where it ended up, its media type and its body as UTF-8.
type webPage struct {
	URL       *url.URL
	MediaType string
	Body      []byte
}

// readableTypes are the media types hub_read_web_page reads.
var readableTypes = []string{"text/html", "application/xhtml+xml", "text/plain"}

// fetch gets raw, refusing what the policy, the limits or the media type do not allow. Its errors
// are sentences a person can act on.
func (f *webFetcher) fetch(ctx context.Context, raw string) (webPage, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return webPage{}, &fetchError{"That is not a web address."}
	}
	if err := checkWebURL(u); err != nil {
		return webPage{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return webPage{}, &fetchError{"That is not a web address."}
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; Ensemble page reader)")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1")
	resp, err := f.client.Do(req)
	if err != nil {
		return webPage{}, f.explain(u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return webPage{}, &fetchError{fmt.Sprintf("%s answered %s.", resp.Request.URL.Host, resp.Status)}
	}
	if resp.ContentLength > f.maxBytes {
		return webPage{}, f.tooLarge()
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return webPage{}, f.explain(u, err)
	}
	if int64(len(body)) > f.maxBytes {
		return webPage{}, f.tooLarge()
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
		return webPage{}, &fetchError{fmt.Sprintf("The address serves %s, which this tool does not read; it reads web pages (HTML) and plain text.", mt)}
	}
	r, err := charset.NewReader(bytes.NewReader(body), ct)
	if err == nil {
		if utf, err := io.ReadAll(r); err == nil {
			body = utf
		}
	}
	return webPage{URL: resp.Request.URL, MediaType: mt, Body: body}, nil
}

func (f *webFetcher) tooLarge() error {
	return &fetchError{fmt.Sprintf("The page is larger than %d MB, so it was not read.", f.maxBytes>>20)}
}

// explain words a failed request: a refused address, the time limit, or the network's error. It
// names the host of the request that failed, which after a redirect is not the one asked for.
func (f *webFetcher) explain(u *url.URL, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if at, perr := url.Parse(ue.URL); perr == nil && at.Hostname() != "" {
			u = at
		}
	}
	var fe *fetchError
	var be *blockedError
	switch {
	case errors.As(err, &fe):
		return fe
	case errors.As(err, &be):
		return &fetchError{fmt.Sprintf("Refused: reading %s would connect to %s, which is %s, not the public internet; this tool reads public web pages only.", u.Host, be.addr, be.why)}
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return &fetchError{fmt.Sprintf("%s did not answer within %s, so I stopped waiting.", u.Hostname(), f.timeout)}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return &fetchError{fmt.Sprintf("There is no site named %s.", u.Hostname())}
	}
	return &fetchError{fmt.Sprintf("Could not read %s: %s.", u.Hostname(), clause(fmt.Sprint(errors.Unwrap(err))))}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
