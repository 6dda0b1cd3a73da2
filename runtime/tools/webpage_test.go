package tools

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/ensemblework/ensemble/runtime/webfetch"
)

// testServer is a loopback HTTP server that counts its requests, so a test can tell a refused
// address was never reached.
type testServer struct {
	*httptest.Server
	hits atomic.Int32
}

func newTestServer(t *testing.T, h http.HandlerFunc) *testServer {
	t.Helper()
	s := &testServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *testServer) addr() netip.AddrPort {
	return netip.MustParseAddrPort(s.Listener.Addr().String())
}

// allowOnly lets the fetcher reach exactly ap, a test server on loopback, and judges every other
// address as the real policy does.
func allowOnly(ap netip.AddrPort) webfetch.Policy {
	return func(a netip.AddrPort) error {
		if a == ap {
			return nil
		}
		return webfetch.PublicOnly(a)
	}
}

// fakeDNS is a resolver whose only server, on loopback, answers every A question with answer
// and nothing else: a public-looking name that leads to a private address.
func fakeDNS(t *testing.T, answer netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true})
			b.StartQuestions()
			b.Question(q)
			b.StartAnswers()
			if q.Type == dnsmessage.TypeA {
				b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: answer.As4()})
			}
			out, err := b.Finish()
			if err == nil {
				pc.WriteTo(out, from)
			}
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

func readPage(t *testing.T, f *webfetch.Fetcher, url string) (Result, error) {
	t.Helper()
	tl := webPageTool(f)
	var reg Registry
	reg.tools = map[string]*Tool{}
	if err := reg.Register(tl); err != nil {
		t.Fatal(err)
	}
	in := raw(t, map[string]any{"url": url})
	if err := reg.Get(tl.Name).Validate(in); err != nil {
		t.Fatal(err)
	}
	return tl.Run(context.Background(), nil, in)
}

func TestReadWebPageRefuses(t *testing.T) {
	private := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret router page") })
	var allowed *testServer
	allowed = newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-private":
			http.Redirect(w, r, private.URL+"/admin", http.StatusFound)
		case "/to-mapped":
			http.Redirect(w, r, fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/admin", private.addr().Port()), http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Length", fmt.Sprint(2<<20))
			w.Write([]byte(strings.Repeat("x", 2<<20)))
		case "/big-chunked":
			w.Header().Set("Content-Type", "text/plain")
			for range 40 {
				w.Write([]byte(strings.Repeat("x", 64<<10)))
				w.(http.Flusher).Flush()
			}
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n"))
		case "/gone":
			http.NotFound(w, r)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
	})
	port := allowed.addr().Port()
	lenient := webfetch.New(webfetch.WithPolicy(allowOnly(allowed.addr())), webfetch.WithLimits(1<<20, 2*time.Second))
	for _, tc := range []struct {
		name string
		f    *webfetch.Fetcher
		url  string
		want string
	}{
		{"a loopback server", webfetch.New(), private.URL, "Refused: reading " + private.Listener.Addr().String() + " would connect to 127.0.0.1, which is a loopback address"},
		{"localhost", webfetch.New(), fmt.Sprintf("http://localhost:%d/", private.addr().Port()), "which is a loopback address"},
		{"a public-looking name that resolves to loopback", webfetch.New(webfetch.WithResolver(fakeDNS(t, netip.MustParseAddr("127.0.0.1")))),
			fmt.Sprintf("http://news.example-public.com:%d/", private.addr().Port()), "Refused: reading news.example-public.com:"},
		{"a redirect to a private address", lenient, allowed.URL + "/to-private", "Refused: reading " + private.Listener.Addr().String() + " would connect to 127.0.0.1"},
		{"a redirect to an IPv4-mapped address", lenient, allowed.URL + "/to-mapped", "which is a loopback address"},
		{"a redirect to a file", lenient, allowed.URL + "/to-file", "Only http and https addresses can be read, not file: ones."},
		{"endless redirects", lenient, allowed.URL + "/loop", "redirected more than 5 times"},
		{"another scheme", lenient, "ftp://example.com/x", "not ftp: ones"},
		{"no scheme", lenient, "example.com", "starting with https://"},
		{"a password", lenient, fmt.Sprintf("http://me:pw@127.0.0.1:%d/", port), "signs in nowhere"},
		{"too large", lenient, allowed.URL + "/big", "larger than 1 MB"},
		{"too large, no length given", lenient, allowed.URL + "/big-chunked", "larger than 1 MB"},
		{"not a page", lenient, allowed.URL + "/png", "serves image/png, which this tool does not read"},
		{"not found", lenient, allowed.URL + "/gone", "answered 404 Not Found"},
		{"too slow", webfetch.New(webfetch.WithPolicy(allowOnly(allowed.addr())), webfetch.WithLimits(1<<20, 300*time.Millisecond)), allowed.URL + "/slow", "did not answer within 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readPage(t, tc.f, tc.url)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	if n := private.hits.Load(); n != 0 {
		t.Fatalf("the private server was reached %d times", n)
	}

	// The fake resolver does lead to the server: allowed, the same name reads it.
	ok := webfetch.New(webfetch.WithPolicy(allowOnly(private.addr())), webfetch.WithResolver(fakeDNS(t, netip.MustParseAddr("127.0.0.1"))))
	r, err := readPage(t, ok, fmt.Sprintf("http://news.example-public.com:%d/", private.addr().Port()))
	if err != nil || !strings.Contains(r.Data.(map[string]any)["markdown"].(string), "secret router page") {
		t.Fatalf("through the fake resolver: %+v, %v", r, err)
	}
}

const article = `<!doctype html><html><head><title>Release notes – Example</title>
<script>var tracker = "do not read me";</script><style>body{color:red}</style></head>
<body><nav><a href="/">Home</a> <a href="/shop">Shop</a> Menu items here</nav>
<article><h1>Release notes</h1>
<p>Version 2.0 brings a new engine for reading pages. It is faster, smaller and easier to use than the one before, and it reads far more kinds of page than it did.</p>
<h2>What changed</h2>
<p>The parser was rewritten from the ground up. See <a href="/docs/parser">the parser docs</a> for the details of every option it takes, and <em>why</em> each was added.</p>
<ul><li>Faster start</li><li>Half the memory</li></ul>
<p>Upgrading takes one command, and the old settings keep working as they did. Nothing you wrote before needs to change.</p>
</article><footer>Copyright footer text</footer></body></html>`

func TestReadWebPageMarkdown(t *testing.T) {
	long := "<html><head><title>Long</title></head><body><article><h1>Long</h1>"
	for i := range 40 {
		long += fmt.Sprintf("<h2>Part %d</h2><p>%s</p>", i, strings.Repeat("Words of this part go on. ", 12))
	}
	long += "</article></body></html>"
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/article":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, article)
		case "/latin1":
			w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
			w.Write([]byte("<html><head><title>Caf\xe9</title></head><body><p>Un caf\xe9 cr\xe8me.</p></body></html>"))
		case "/text":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "line one\n\n\n\n\nline two")
		case "/long":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, long)
		}
	})
	f := webfetch.New(webfetch.WithPolicy(allowOnly(srv.addr())))
	host := srv.Listener.Addr().String()
	for _, tc := range []struct {
		path, summary string
		has, hasNot   []string
		cut           bool
	}{
		{"/article", "Read the web page “Release notes – Example” (" + host + ").",
			[]string{"## What changed", "[the parser docs](http://" + host + "/docs/parser)", "- Faster start", "*why*"},
			[]string{"do not read me", "color:red", "Menu items", "Copyright footer"}, false},
		{"/latin1", "Read the web page “Café” (" + host + ").", []string{"Un café crème."}, nil, false},
		{"/text", "Read the web page at " + host + "/text.", []string{"line one\n\nline two"}, nil, false},
		{"/long", "Read the web page “Long” (" + host + ").", []string{"## Part 0"}, []string{"## Part 39"}, true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r, err := readPage(t, f, srv.URL+tc.path)
			if err != nil {
				t.Fatal(err)
			}
			d := r.Data.(map[string]any)
			md, _ := d["markdown"].(string)
			note, _ := d["note"].(string)
			if r.Summary != tc.summary {
				t.Errorf("summary %q, want %q", r.Summary, tc.summary)
			}
			for _, s := range tc.has {
				if !strings.Contains(md, s) {
					t.Errorf("markdown lacks %q:\n%s", s, md)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(md, s) {
					t.Errorf("markdown has %q:\n%s", s, md)
				}
			}
			if n := utf8.RuneCountInString(md) + utf8.RuneCountInString(note); n > webPageChars {
				t.Errorf("%d characters with the note, more than %d", n, webPageChars)
			}
			if tc.cut != (note != "") {
				t.Errorf("note %q, want cut=%v", note, tc.cut)
			}
			if tc.cut && (!strings.Contains(note, "Left out the last") || !strings.Contains(note, "“Part 39”") && !strings.Contains(note, "more")) {
				t.Errorf("note %q", note)
			}
		})
	}
}

func TestCutMarkdown(t *testing.T) {
	md := "# Title\n\n" + strings.Repeat("word ", 300) + "\n\n## Setup\n\n" + strings.Repeat("step ", 300) + "\n\n## FAQ\n\nq?"
	kept, note := cutMarkdown(md, 2000)
	if n := utf8.RuneCountInString(kept) + utf8.RuneCountInString(note); n > 2000 {
		t.Errorf("%d characters", n)
	}
	if !strings.HasPrefix(kept, "# Title") || !strings.Contains(note, "the sections “Setup” and “FAQ”") || !strings.Contains(note, fmt.Sprintf("of %d characters", len(md))) {
		t.Errorf("kept %d, note %q", len(kept), note)
	}
	if kept, note := cutMarkdown("short", 2000); kept != "short" || note != "" {
		t.Errorf("short: %q %q", kept, note)
	}
}
