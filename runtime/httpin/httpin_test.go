package httpin

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHost(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:4000": "127.0.0.1", "localhost": "localhost", "[::1]:4000": "::1", "[::1]": "::1",
		"LOCALHOST:80": "LOCALHOST", "example.com:65535": "example.com",
		"127.0.0.1:4000x": "", "127.0.0.1:+80": "", "127.0.0.1:-1": "", "127.0.0.1:0x50": "", "127.0.0.1:": "",
		"127.0.0.1:65536": "", "127.0.0.1:0": "", "127.0.0.1: 80": "", "localhost:80:80": "", "::1": "", "": "",
		"user@127.0.0.1:80": "", "127.0.0.1/x:80": "", "[::1]:x": "",
	} {
		got, err := Host(in)
		if want == "" {
			if err == nil {
				t.Errorf("Host(%q) = %q, want an error", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("Host(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	const host = "127.0.0.1:4000"
	for origin, want := range map[string]bool{
		"http://127.0.0.1:4000": true, "HTTP://127.0.0.1:4000": true,
		"http://127.0.0.1:4001": false, "https://127.0.0.1:4000": false, "http://localhost:4000": false,
		"http://user@127.0.0.1:4000": false, "http://user:pw@127.0.0.1:4000": false, "http://evil@127.0.0.1:4000": false,
		"http://127.0.0.1:4000/": false, "http://127.0.0.1:4000/x": false, "http://127.0.0.1:4000?x": false,
		"http://127.0.0.1:4000#x": false, "http://127.0.0.1:4000x": false, "null": false, "": false,
		"127.0.0.1:4000": false, "//127.0.0.1:4000": false, "http:127.0.0.1:4000": false,
	} {
		if got := SameOrigin(origin, "http", host); got != want {
			t.Errorf("SameOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}

func TestBearer(t *testing.T) {
	for in, want := range map[string]string{
		"Bearer tok": "tok", "bearer tok": "tok", "BEARER tok": "tok", "BeArEr tok": "tok", "Bearer  tok": "tok",
		"Bearer": "", "Bearer ": "", "Basic tok": "", "Bearertok": "", "tok": "", "Bearer a b": "", "": "",
	} {
		h := http.Header{}
		if in != "" {
			h.Set("Authorization", in)
		}
		got, ok := Bearer(h)
		if ok != (want != "") || got != want {
			t.Errorf("Bearer(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestJSONMediaType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json": true, "Application/JSON": true, "application/json; charset=utf-8": true,
		"Application/JSON; charset=UTF-8": true, "APPLICATION/JSON;CHARSET=UTF-8": true,
		"application/jsonx": false, "application/json-patch+json": false, "text/plain": false,
		"application/json; charset=latin1": false, "application/json; charset": false, "": false,
	} {
		if got := JSONMediaType(ct); got != want {
			t.Errorf("JSONMediaType(%q) = %v, want %v", ct, got, want)
		}
	}
}

type inner struct {
	Depth int `json:"depth"`
}

type Embedded struct {
	Shared string `json:"shared"`
}

type body struct {
	Embedded
	Title    string            `json:"title"`
	Labels   []string          `json:"labels"`
	Settings *inner            `json:"settings"`
	Items    []inner           `json:"items"`
	Extra    map[string]inner  `json:"extra"`
	Raw      json.RawMessage   `json:"raw"`
	Any      any               `json:"any"`
	Named    Embedded          `json:"named"`
	Tags     map[string]string `json:"tags"`
	Untagged string
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     string // "" accepted; else a word the sentence holds
	}{
		{"plain", `{"title":"a","labels":["x"],"settings":{"depth":1}}`, ""},
		{"embedded field", `{"shared":"s"}`, ""},
		{"Go name without a tag", `{"Untagged":"u"}`, ""},
		{"map keys in any case", `{"extra":{"A":{"depth":1},"a":{"depth":2}},"tags":{"X":"1","x":"2"}}`, ""},
		{"raw and any take what they get", `{"raw":{"A":1,"a":{"B":2}},"any":{"K":1}}`, ""},
		{"a replacement character the body holds", `{"title":"a` + "\uFFFD" + `b \ufffd"}`, ""},
		{"a surrogate pair", `{"title":"\ud83d\ude00"}`, ""},

		{"duplicate", `{"title":"a","title":"b"}`, `"title" is given twice`},
		{"duplicate nested", `{"settings":{"depth":1,"depth":2}}`, `"settings.depth" is given twice`},
		{"duplicate in a list", `{"items":[{"depth":1},{"depth":1,"depth":2}]}`, `"items.depth" is given twice`},
		{"duplicate in raw", `{"raw":{"a":1,"a":2}}`, `"raw.a" is given twice`},
		{"duplicate map key", `{"tags":{"x":"1","x":"2"}}`, `"tags.x" is given twice`},
		{"another case", `{"Title":"a"}`, `"Title" must be written "title"`},
		{"another case nested", `{"settings":{"Depth":1}}`, `"settings.Depth" must be written "settings.depth"`},
		{"another case in a list", `{"items":[{"DEPTH":1}]}`, `"items.DEPTH" must be written "items.depth"`},
		{"another case of an embedded field", `{"SHARED":"s"}`, `must be written "shared"`},
		{"another case under a named struct", `{"named":{"Shared":"s"}}`, `must be written "named.shared"`},
		{"another case of a Go name", `{"untagged":"u"}`, `must be written "Untagged"`},
		{"NUL", `{"title":"a\u0000b"}`, `"title" holds a NUL`},
		{"NUL in a list", `{"labels":["ok","\u0000"]}`, `"labels" holds a NUL`},
		{"NUL in a key", `{"tags":{"a\u0000":"x"}}`, `field name in the body holds a NUL`},
		{"invalid UTF-8", "{\"title\":\"a\xffb\"}", "not valid UTF-8"},
		{"invalid UTF-8 in a key", "{\"ti\xc3tle\":\"a\"}", "not valid UTF-8"},
		{"lone surrogate", `{"title":"\ud800"}`, "surrogate"},
		{"reversed surrogates", `{"title":"\ude00\ud83d"}`, "surrogate"},
		{"unknown field", `{"nope":1}`, `Unknown field "nope"`},
		{"not an object", `[1]`, "must be a JSON object"},
		{"two values", `{} {}`, "nothing after it"},
		{"malformed", `{"title":`, "ends too soon"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var v body
			err := Decode([]byte(c.in), &v)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var he *Error
			if !errors.As(err, &he) || he.Status != http.StatusBadRequest {
				t.Fatalf("got %v, want a 400 saying %s", err, c.want)
			}
			if !strings.Contains(he.Msg, c.want) || !strings.HasSuffix(he.Msg, ".") {
				t.Errorf("%q, want a sentence with %s", he.Msg, c.want)
			}
		})
	}
}

func TestCheckJSON(t *testing.T) {
	for in, ok := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`:                true,
		`[{"a":1},{"a":1}]`:                                       true,
		`{"Method":"x","method":"y"}`:                             true, // no Go type: names are free
		`{"jsonrpc":"2.0","method":"ping","method":"tools/call"}`: false,
		`{"params":{"arguments":{"title":"a","title":"b"}}}`:      false,
		`{"params":{"arguments":{"title":"a\u0000"}}}`:            false,
		"{\"params\":\"\xfe\"}":                                   false,
		`{"params":"\udfff"}`:                                     false,
	} {
		if err := CheckJSON([]byte(in)); (err == nil) != ok {
			t.Errorf("CheckJSON(%q) = %v, want ok %v", in, err, ok)
		}
	}
}

func TestReadBody(t *testing.T) {
	for ct, status := range map[string]int{"": 0, "Application/JSON; charset=UTF-8": 0, "text/plain": 415, "application/x-www-form-urlencoded": 415} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(`{}`))
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		_, err := ReadBody(nil, r, 10)
		var he *Error
		switch {
		case status == 0 && err != nil:
			t.Errorf("%q: %v", ct, err)
		case status != 0 && (!errors.As(err, &he) || he.Status != status):
			t.Errorf("%q: %v, want %d", ct, err, status)
		}
	}
	r := httptest.NewRequest("POST", "/", strings.NewReader(`{"x":"`+strings.Repeat("x", 2048)+`"}`))
	if _, err := ReadBody(nil, r, 1024); err == nil || err.Error() != "The body is larger than 1 KB." {
		t.Errorf("oversized: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"title":"a"}`, `{"title":"a","title":"b"}`, `{"Title":"a"}`, `{"title":"\u0000"}`,
		"{\"title\":\"\xff\"}", `{"title":"\ud800"}`, `{"items":[{"depth":1}]}`, `{"extra":{"A":{"depth":1}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v body
		if Decode(raw, &v) != nil {
			return
		}
		// What was taken is what the body said, once: decoding it again strictly gives the same.
		for _, s := range append([]string{v.Title, v.Shared, v.Untagged}, v.Labels...) {
			if strings.IndexByte(s, 0) >= 0 {
				t.Fatalf("took a NUL from %q", raw)
			}
		}
	})
}
