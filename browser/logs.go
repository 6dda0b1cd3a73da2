package browser

import (
	"context"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
)

// logSize is how many console entries and network errors a tab keeps.
const logSize = 200

// ring keeps the last logSize entries.
type ring[T any] struct {
	items []T
	start int
}

func (r *ring[T]) add(v T) {
	if len(r.items) < logSize {
		r.items = append(r.items, v)
		return
	}
	r.items[r.start] = v
	r.start = (r.start + 1) % logSize
}

func (r *ring[T]) all() []T {
	out := make([]T, 0, len(r.items))
	out = append(out, r.items[r.start:]...)
	return append(out, r.items[:r.start]...)
}

// reqInfo is what a failed request's entry needs from its start.
type reqInfo struct {
	url, method string
	typ         network.ResourceType
}

// onEvent runs on the tab's event loop: it only records, and hands commands to goroutines.
func (b *Broker) onEvent(t *tab, tctx context.Context, ev any) {
	now := b.cfg.Now()
	switch ev := ev.(type) {
	case *fetch.EventRequestPaused:
		go b.onPaused(t, tctx, ev)
	case *runtime.EventConsoleAPICalled:
		t.mu.Lock()
		t.console.add(ConsoleEntry{At: now, Level: consoleLevel(ev.Type), Text: argsText(ev.Args)})
		t.mu.Unlock()
	case *runtime.EventExceptionThrown:
		if d := ev.ExceptionDetails; d != nil {
			text := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				text = d.Exception.Description
			}
			t.mu.Lock()
			t.console.add(ConsoleEntry{At: now, Level: "exception", Text: firstLine(text), URL: d.URL})
			t.mu.Unlock()
		}
	case *network.EventRequestWillBeSent:
		t.mu.Lock()
		t.reqs[string(ev.RequestID)] = reqInfo{url: ev.Request.URL, method: ev.Request.Method, typ: ev.Type}
		t.inflight[string(ev.RequestID)] = true
		t.lastNet = time.Now()
		t.mu.Unlock()
	case *network.EventResponseReceived:
		b.onResponse(t, now, ev)
	case *network.EventLoadingFinished:
		t.mu.Lock()
		delete(t.inflight, string(ev.RequestID))
		delete(t.reqs, string(ev.RequestID))
		t.lastNet = time.Now()
		t.mu.Unlock()
	case *network.EventLoadingFailed:
		t.mu.Lock()
		ri := t.reqs[string(ev.RequestID)]
		delete(t.inflight, string(ev.RequestID))
		delete(t.reqs, string(ev.RequestID))
		t.lastNet = time.Now()
		if !ev.Canceled || strings.HasPrefix(ev.ErrorText, "net::ERR_BLOCKED_BY_CLIENT") {
			t.neterrs.add(NetError{At: now, URL: ri.url, Method: ri.method, Error: ev.ErrorText, Type: string(ev.Type)})
		}
		t.mu.Unlock()
	case *page.EventFrameStartedLoading:
		if b.isMain(t, ev.FrameID) {
			t.mu.Lock()
			t.loading = true
			t.mu.Unlock()
		}
	case *page.EventFrameStoppedLoading:
		if b.isMain(t, ev.FrameID) {
			t.mu.Lock()
			t.loading = false
			t.mu.Unlock()
			t.signalLoad()
		}
	case *page.EventFrameNavigated:
		if ev.Frame != nil && ev.Frame.ParentID == "" {
			t.mu.Lock()
			t.url = ev.Frame.URL
			t.snap, t.nrefs = "", 0 // a new document: the old references name nothing
			t.mu.Unlock()
		}
	}
}

func (b *Broker) onResponse(t *tab, now time.Time, ev *network.EventResponseReceived) {
	r := ev.Response
	if r == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if ev.Type == network.ResourceTypeDocument && b.isMainLocked(t, ev.FrameID) {
		t.status = int(r.Status)
	}
	if r.Status >= 400 {
		ri := t.reqs[string(ev.RequestID)]
		t.neterrs.add(NetError{At: now, URL: r.URL, Method: ri.method, Status: int(r.Status), Type: string(ev.Type)})
	}
}

func (t *tab) signalLoad() {
	select {
	case t.loaded <- struct{}{}:
	default:
	}
}

// isMain: a page target's main frame has the target's id.
func (b *Broker) isMain(t *tab, f cdp.FrameID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return b.isMainLocked(t, f)
}

func (b *Broker) isMainLocked(t *tab, f cdp.FrameID) bool { return string(f) == string(t.targetID) }

func consoleLevel(t runtime.ConsoleAPICalledType) string {
	switch t {
	case runtime.ConsoleAPICalledTypeWarning:
		return "warning"
	case runtime.ConsoleAPICalledTypeError, runtime.ConsoleAPICalledTypeAssert:
		return "error"
	case runtime.ConsoleAPICalledTypeInfo:
		return "info"
	default:
		return "log"
	}
}

func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case a.Type == runtime.RemoteObjectTypeString:
			parts = append(parts, strings.Trim(string(a.Value), `"`))
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		case a.UnserializableValue != "":
			parts = append(parts, string(a.UnserializableValue))
		default:
			parts = append(parts, a.Description)
		}
	}
	s := strings.Join(parts, " ")
	if len(s) > 2000 {
		s = s[:2000]
	}
	return s
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// Console is the tab's console messages and uncaught exceptions, oldest first.
func (b *Broker) Console(w Work, id string) ([]ConsoleEntry, error) {
	t, err := b.use(w, id, false)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.console.all(), nil
}

// NetworkErrors is the tab's failed requests and 4xx/5xx answers, oldest first.
func (b *Broker) NetworkErrors(w Work, id string) ([]NetError, error) {
	t, err := b.use(w, id, false)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.neterrs.all(), nil
}
