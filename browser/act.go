package browser

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// keyNames are the keys Press takes by name; a single character is itself.
var keyNames = map[string]string{
	"enter": kb.Enter, "return": kb.Enter, "tab": kb.Tab, "escape": kb.Escape, "esc": kb.Escape,
	"backspace": kb.Backspace, "delete": kb.Delete, "space": " ",
	"arrowdown": kb.ArrowDown, "arrowup": kb.ArrowUp, "arrowleft": kb.ArrowLeft, "arrowright": kb.ArrowRight,
	"down": kb.ArrowDown, "up": kb.ArrowUp, "left": kb.ArrowLeft, "right": kb.ArrowRight,
	"pagedown": kb.PageDown, "pageup": kb.PageUp, "home": kb.Home, "end": kb.End,
	"f1": kb.F1, "f2": kb.F2, "f3": kb.F3, "f4": kb.F4, "f5": kb.F5, "f6": kb.F6, "f7": kb.F7, "f8": kb.F8, "f9": kb.F9, "f10": kb.F10, "f11": kb.F11, "f12": kb.F12,
}

// parseKey reads "ctrl+a", "Shift+Tab", "Enter": the key's runes and the modifiers held.
func parseKey(s string) (string, kb.Modifier, error) {
	parts := strings.Split(s, "+")
	if strings.HasSuffix(s, "++") || s == "+" {
		parts = append(parts[:len(parts)-2], "+")
	}
	var mod kb.Modifier
	for _, p := range parts[:len(parts)-1] {
		switch strings.ToLower(strings.TrimSpace(p)) {
		case "ctrl", "control":
			mod |= kb.ModifierCtrl
		case "shift":
			mod |= kb.ModifierShift
		case "alt", "option":
			mod |= kb.ModifierAlt
		case "meta", "cmd", "command", "super":
			mod |= kb.ModifierMeta
		default:
			return "", 0, fmt.Errorf("unknown modifier %q", p)
		}
	}
	k := parts[len(parts)-1]
	if v, ok := keyNames[strings.ToLower(k)]; ok {
		return v, mod, nil
	}
	if len([]rune(k)) == 1 {
		return k, mod, nil
	}
	return "", 0, fmt.Errorf("unknown key %q", k)
}

// pressKey sends a key as a keyboard does: down, its character, up.
func pressKey(ctx context.Context, key string) error {
	k, mod, err := parseKey(key)
	if err != nil {
		return err
	}
	return chromedp.Do(ctx, chromedp.KeyEvent(k, chromedp.KeyModifiers(mod)))
}

// ref finds an element of the tab's last snapshot: an element since removed from the page,
// or one of an older document, is no reference.
func (t *tab) ref(ctx context.Context, ref string) (cdp.BackendNodeID, error) {
	t.mu.Lock()
	obj, n := t.snap, t.nrefs
	t.mu.Unlock()
	i, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(ref, "ref="), "e"))
	if obj == "" || err != nil || i < 1 || i > n {
		return 0, fmt.Errorf("%w: %s", ErrNoRef, ref)
	}
	res, err := chromedp.Call(ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		ObjectID:            obj,
		FunctionDeclaration: `function(i) { const e = this[i]; return e && e.isConnected ? e : null; }`,
		Arguments:           []*runtime.CallArgument{{Value: jsonv2.Value(strconv.Itoa(i - 1))}},
	})
	if err != nil || res.Result == nil || res.Result.ObjectID == "" {
		return 0, fmt.Errorf("%w: %s", ErrNoRef, ref)
	}
	defer chromedp.Call(ctx, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: res.Result.ObjectID})
	d, err := chromedp.Call(ctx, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: res.Result.ObjectID})
	if err != nil || d.Node == nil {
		return 0, fmt.Errorf("%w: %s", ErrNoRef, ref)
	}
	return d.Node.BackendNodeID, nil
}

// center scrolls the element into view and finds the middle of its box.
func center(ctx context.Context, id cdp.BackendNodeID) (float64, float64, error) {
	if _, err := chromedp.Call(ctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: id}); err != nil {
		return 0, 0, fmt.Errorf("%w: %v", ErrNoRef, err)
	}
	q, err := chromedp.Call(ctx, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: id})
	if err != nil || len(q.Quads) == 0 || len(q.Quads[0]) < 8 {
		return 0, 0, fmt.Errorf("%w: the element is not on the page's screen", ErrNoRef)
	}
	c := q.Quads[0]
	return (c[0] + c[2] + c[4] + c[6]) / 4, (c[1] + c[3] + c[5] + c[7]) / 4, nil
}

// mouseClick moves, presses and releases the left button at x, y.
func mouseClick(ctx context.Context, x, y float64) error {
	for _, ty := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMouseMoved, input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
		p := input.DispatchMouseEventParams{Type: ty, X: x, Y: y}
		if ty != input.DispatchMouseEventTypeMouseMoved {
			p.Button = input.MouseButtonLeft
			p.ClickCount = 1
			p.Buttons = 1
		}
		if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, p); err != nil {
			return err
		}
	}
	return nil
}

// action runs f on w's tab with the tab's lock, then settles and reports the page.
func (b *Broker) action(ctx context.Context, w Work, id string, detect bool, f func(c context.Context, t *tab) error) (Page, error) {
	t, err := b.use(w, id, false)
	if err != nil {
		return Page{}, err
	}
	t.act.Lock()
	defer t.act.Unlock()
	mark := b.popupMark()
	if err := runUnder(ctx, t.context(), func(c context.Context) error { return f(c, t) }); err != nil {
		return Page{}, err
	}
	b.settle(ctx, t)
	return b.finish(ctx, t, mark, detect), nil
}

// Click clicks ref with the mouse, as a person does.
func (b *Broker) Click(ctx context.Context, w Work, id, ref string) (Page, error) {
	return b.action(ctx, w, id, true, func(c context.Context, t *tab) error {
		n, err := t.ref(c, ref)
		if err != nil {
			return err
		}
		x, y, err := center(c, n)
		if err != nil {
			return err
		}
		return mouseClick(c, x, y)
	})
}

// Type types text into ref in place of what it holds, and presses Enter when submit.
func (b *Broker) Type(ctx context.Context, w Work, id, ref, text string, submit bool) (Page, error) {
	return b.action(ctx, w, id, submit, func(c context.Context, t *tab) error {
		n, err := t.ref(c, ref)
		if err != nil {
			return err
		}
		if _, err := chromedp.Call(c, dom.Focus, dom.FocusParams{BackendNodeID: n}); err != nil {
			return fmt.Errorf("%w: %v", ErrNoRef, err)
		}
		if err := selectAll(c, n); err != nil {
			return err
		}
		if _, err := chromedp.Call(c, input.InsertText, input.InsertTextParams{Text: text}); err != nil {
			return err
		}
		if submit {
			return pressKey(c, "Enter")
		}
		return nil
	})
}

// selectAll selects what a field holds, so typing replaces it.
func selectAll(ctx context.Context, n cdp.BackendNodeID) error {
	obj, err := chromedp.Call(ctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: n})
	if err != nil || obj.Object == nil {
		return fmt.Errorf("%w: %v", ErrNoRef, err)
	}
	defer chromedp.Call(ctx, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: obj.Object.ObjectID})
	_, err = chromedp.Call(ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		ObjectID:            obj.Object.ObjectID,
		FunctionDeclaration: `function(){ if (this.select) this.select(); else if (this.isContentEditable) document.execCommand('selectAll'); }`,
	})
	return err
}

// Press presses a key on the tab's focused element.
func (b *Broker) Press(ctx context.Context, w Work, id, key string) (Page, error) {
	return b.action(ctx, w, id, true, func(c context.Context, t *tab) error { return pressKey(c, key) })
}

// Wait waits for one thing on the page.
func (b *Broker) Wait(ctx context.Context, w Work, id string, o WaitOptions) (Page, error) {
	t, err := b.use(w, id, false)
	if err != nil {
		return Page{}, err
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	o.Timeout = min(o.Timeout, 2*time.Minute)
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var n cdp.BackendNodeID
	if o.Ref != "" {
		err = runUnder(ctx, t.context(), func(c context.Context) error {
			n, err = t.ref(c, o.Ref)
			return err
		})
		if err != nil {
			return Page{}, err
		}
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := b.waitDone(ctx, t, o, n)
		if err != nil {
			return Page{}, err
		}
		if ok {
			return b.finish(ctx, t, b.popupMark(), false), nil
		}
		select {
		case <-ctx.Done():
			return Page{}, fmt.Errorf("waiting: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// waitDone checks the wait's condition once.
func (b *Broker) waitDone(ctx context.Context, t *tab, o WaitOptions, n cdp.BackendNodeID) (bool, error) {
	t.mu.Lock()
	u, loading := t.url, t.loading
	t.mu.Unlock()
	if o.URL != "" && !strings.Contains(u, o.URL) {
		return false, nil
	}
	if o.Load && loading {
		return false, nil
	}
	if o.Text == "" && o.Gone == "" && n == 0 {
		return true, nil
	}
	var ok bool
	err := runUnder(ctx, t.context(), func(c context.Context) error {
		if n != 0 {
			q, err := chromedp.Call(c, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: n})
			if err != nil || len(q.Quads) == 0 {
				ok = false
				return nil
			}
		}
		if o.Text == "" && o.Gone == "" {
			ok = true
			return nil
		}
		text, err := chromedp.Run(c, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		if err != nil {
			return nil // a page between documents: ask again
		}
		ok = (o.Text == "" || strings.Contains(text, o.Text)) && (o.Gone == "" || !strings.Contains(text, o.Gone))
		return nil
	})
	return ok, err
}
