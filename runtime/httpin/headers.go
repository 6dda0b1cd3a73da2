package httpin

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Host returns the name in a Host header, without its port. A port, when there is one, must be a
// number from 1 to 65535 written in digits only: "127.0.0.1:4000x" or "localhost:+80" is not this
// server, whatever a lenient parser would make of it.
func Host(host string) (string, error) {
	bad := errors.New("the Host header is not a host name with a numeric port")
	if host == "" {
		return "", bad
	}
	name, port := host, ""
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !(strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]")) {
		h, p, err := net.SplitHostPort(host)
		if err != nil {
			return "", bad
		}
		name, port = h, p
		if !digits(port) {
			return "", bad
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", bad
		}
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if name == "" || strings.ContainsAny(name, "/@?#\\ ") {
		return "", bad
	}
	return name, nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// SameOrigin reports whether an Origin header names exactly scheme://host, host being the Host the
// request was sent to (another port is another origin, and another program). An origin is a
// scheme, a host and a port: one with a user, a password, a path (even "/"), a query or a fragment
// is not one a browser sends, so it is refused rather than read for the part that matches.
func SameOrigin(origin, scheme, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.User != nil || u.Path != "" || u.RawPath != "" || u.Opaque != "" ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(origin, "@?#") {
		return false
	}
	if _, err := Host(u.Host); err != nil {
		return false
	}
	return strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(u.Host, host)
}

// Bearer returns the credential of an "Authorization: Bearer <token>" header. The scheme's name is
// matched in any case ("bearer", "BEARER"), as HTTP's authentication schemes are (RFC 9110 §11.1);
// the token never is.
func Bearer(h http.Header) (string, bool) {
	v := h.Get("Authorization")
	scheme, tok, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimLeft(tok, " ")
	if tok == "" || strings.ContainsAny(tok, " \t") {
		return "", false
	}
	return tok, true
}
