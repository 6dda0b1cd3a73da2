package computer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// HTTPRequest is one computer_http call.
type HTTPRequest struct {
	URL     string            `json:"url" jsonschema:"an address on this computer, such as http://127.0.0.1:3000/api/health" check:"minLength=1,maxLength=2000"`
	Method  string            `json:"method,omitempty" jsonschema:"GET (default), HEAD, POST, PUT, PATCH or DELETE" check:"enum=GET|HEAD|POST|PUT|PATCH|DELETE"`
	Headers map[string]string `json:"headers,omitempty" jsonschema:"request headers"`
	Body    string            `json:"body,omitempty" jsonschema:"the request body" check:"maxLength=65536"`
}

// HTTPAnswer is what the server answered, its body redacted and at most MaxHTTPAnswer.
type HTTPAnswer struct {
	Status    int               `json:"status"`
	Headers   map[string]string `json:"headers"`
	Body      string            `json:"body"`
	Truncated bool              `json:"truncated,omitempty"`
}

// HTTP sends req to one of this computer's own servers. Every redirect is decided again, as if
// it were a call of its own (allow decides it); a redirect that would be asked or refused ends
// the call with the redirect as the answer.
func (c *Computer) HTTP(ctx context.Context, req HTTPRequest, allow func(u *url.URL) error) (HTTPAnswer, error) {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	hr, err := http.NewRequestWithContext(ctx, method, req.URL, strings.NewReader(req.Body))
	if err != nil {
		return HTTPAnswer{}, fmt.Errorf("%q is not an address computer_http can request.", req.URL)
	}
	if len(req.Headers) > 30 {
		return HTTPAnswer{}, errors.New("computer_http takes at most 30 headers.")
	}
	for k, v := range req.Headers {
		if strings.EqualFold(k, "Host") {
			return HTTPAnswer{}, errors.New("computer_http sets the Host header itself.")
		}
		hr.Header.Set(k, v)
	}
	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{DialContext: loopbackDialer().DialContext, Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(next *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("more than 5 redirects")
			}
			if err := allow(next.URL); err != nil {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	resp, err := client.Do(hr)
	if err != nil {
		return HTTPAnswer{}, fmt.Errorf("%s did not answer: %s.", req.URL, strings.TrimSuffix(err.Error(), "."))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxHTTPAnswer+1))
	a := HTTPAnswer{Status: resp.StatusCode, Headers: map[string]string{}}
	if len(body) > MaxHTTPAnswer {
		body, a.Truncated = body[:MaxHTTPAnswer], true
	}
	a.Body = c.o.Hide(string(bytes.ToValidUTF8(body, []byte("�"))))
	for _, k := range []string{"Content-Type", "Content-Length", "Location", "Cache-Control", "Server"} {
		if v := resp.Header.Get(k); v != "" {
			a.Headers[k] = c.o.Hide(v)
		}
	}
	return a, nil
}

// loopbackDialer connects only to a loopback address, whatever a name resolves to.
func loopbackDialer() *net.Dialer {
	return &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("%s is not on this computer", address)
		}
		return nil
	}}
}
