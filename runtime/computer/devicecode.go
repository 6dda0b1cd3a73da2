package computer

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// DeviceCode is a sign-in code a command printed for its owner to enter on a page (spec 002
// §8.16.4): az login --use-device-code, gh auth login, aws sso login, a Google sign-in. Code is
// empty for a page that gives the owner a code to bring back (Google's "Enter verification code").
type DeviceCode struct {
	URL  string `json:"url"`
	Code string `json:"code,omitempty"`
	// ExpiresIn is how long the code holds when the command says; zero when it does not.
	ExpiresIn time.Duration `json:"expiresIn,omitempty"`
}

// ParseDeviceCode finds the first sign-in code and its page in a command's output.
func ParseDeviceCode(text string) (DeviceCode, bool) {
	var s codeScanner
	if dc, ok := s.feed(text); ok {
		return dc, true
	}
	return s.flush()
}

var (
	urlRe = regexp.MustCompile(`https?://[^\s'"<>()\[\]]+`)
	// A code is capitals and digits, in groups a dash may join: ABCD12345, ABCD-1234, ABCD-EFGH.
	code = `([A-Z0-9]{4,12}(?:-[A-Z0-9]{3,8}){0,3})`
	// "enter the code ABCD12345", "one-time code: ABCD-1234", "user code: …", "code XXXX-XXXX".
	codeSaid = regexp.MustCompile(`(?i:enter (?:the |this |your )?(?:user |one-time |verification |device )?code|one-time code|user code|device code|verification code)\s*[:=]?\s*` + code + `\b`)
	// "Then enter the code:" with the code on a line of its own after it (AWS SSO).
	codeNext = regexp.MustCompile(`(?i)(?:enter|type|input) (?:the |this |your )?(?:user |one-time |verification |device )?code\s*:?\s*$`)
	// Google's out-of-band sign-in: a link to open, then a prompt for the code the page gives.
	googleAsk   = regexp.MustCompile(`(?i)go to the following link|enter (?:the )?(?:authorization|verification) code:?\s*$`)
	loneCode    = regexp.MustCompile(`^\s*` + code + `\s*$`)
	expiresSaid = regexp.MustCompile(`(?i)(?:expires?|valid|within) (?:in |for )?(\d{1,4}) ?(seconds?|secs?|minutes?|mins?|hours?)`)
)

// codeNearLines is how far apart a page and its code may be printed and still go together.
const codeNearLines = 8

// codeScanner reads a command's output as it comes, in chunks cut anywhere, and remembers the
// last page and code it saw, so a code and its page printed on different lines (or the page
// first, or the code first) make one DeviceCode. Each pair is reported once.
type codeScanner struct {
	partial  string // the output after the last newline
	line     int    // lines read
	url      string // the last address seen, and on which line
	urlLine  int
	code     string // a code seen without its page yet
	codeLine int
	wantCode bool // the last line asked for a code on the next one
	google   bool // a Google link-and-prompt sign-in was seen
	expires  time.Duration
	told     map[string]bool
}

// feed reads one chunk and reports a page and code seen together for the first time.
func (s *codeScanner) feed(chunk string) (DeviceCode, bool) {
	text := s.partial + chunk
	lines := strings.Split(text, "\n")
	s.partial = lines[len(lines)-1]
	var found DeviceCode
	var ok bool
	for _, l := range lines[:len(lines)-1] {
		if dc, yes := s.readLine(l); yes && !ok {
			found, ok = dc, true
		}
	}
	// A prompt waits for its answer without a newline: "Enter verification code: ".
	if !ok && googleAsk.MatchString(clean(s.partial)) {
		p := s.partial
		s.partial = ""
		found, ok = s.readLine(p)
	}
	return found, ok
}

// flush reads what is left after the command's last newline.
func (s *codeScanner) flush() (DeviceCode, bool) {
	p := s.partial
	s.partial = ""
	if p == "" {
		return DeviceCode{}, false
	}
	return s.readLine(p)
}

// clean is a line without colour codes and carriage returns.
func clean(l string) string {
	return strings.TrimSpace(strings.ReplaceAll(ansi.Strip(l), "\r", ""))
}

func (s *codeScanner) readLine(raw string) (DeviceCode, bool) {
	l := clean(raw)
	s.line++
	if l == "" {
		return DeviceCode{}, false
	}
	if m := expiresSaid.FindStringSubmatch(l); m != nil {
		n, _ := strconv.Atoi(m[1])
		unit := time.Minute
		switch strings.ToLower(m[2][:1]) {
		case "s":
			unit = time.Second
		case "h":
			unit = time.Hour
		}
		s.expires = time.Duration(n) * unit
	}
	if u := urlRe.FindString(l); u != "" {
		s.url, s.urlLine = strings.TrimRight(u, ".,;:!?"), s.line
	}
	switch m := codeSaid.FindStringSubmatch(l); {
	case m != nil:
		s.code, s.codeLine, s.wantCode = m[1], s.line, false
	case s.wantCode && loneCode.MatchString(l):
		s.code, s.codeLine, s.wantCode = strings.TrimSpace(l), s.line, false
	case codeNext.MatchString(l):
		s.wantCode = true
	}
	if googleAsk.MatchString(l) {
		if strings.Contains(strings.ToLower(l), "following link") {
			s.google = true
		} else if s.google && s.url != "" && s.code == "" {
			return s.tell(DeviceCode{URL: s.url})
		}
	}
	if s.code == "" || s.url == "" || abs(s.codeLine-s.urlLine) > codeNearLines {
		return DeviceCode{}, false
	}
	return s.tell(DeviceCode{URL: s.url, Code: s.code})
}

func (s *codeScanner) tell(dc DeviceCode) (DeviceCode, bool) {
	dc.ExpiresIn = s.expires
	key := dc.URL + " " + dc.Code
	if s.told[key] {
		return DeviceCode{}, false
	}
	if s.told == nil {
		s.told = map[string]bool{}
	}
	s.told[key] = true
	s.code = ""
	return dc, true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// codeWatch is a command's output writer that calls found with each sign-in code it prints.
type codeWatch struct {
	mu    sync.Mutex
	s     codeScanner
	found func(DeviceCode)
}

func (w *codeWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	dc, ok := w.s.feed(string(p))
	w.mu.Unlock()
	if ok {
		w.found(dc)
	}
	return len(p), nil
}

// close reads the output's last line, which had no newline.
func (w *codeWatch) close() {
	w.mu.Lock()
	dc, ok := w.s.flush()
	w.mu.Unlock()
	if ok {
		w.found(dc)
	}
}
