package headless

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Page is one tab, attached with its own session.
type Page struct {
	b       *Browser
	session string
	since   int // events before this index are not the page's
}

// Open makes a tab, turns on the events the checks read (console,
// exceptions, log entries, requests), navigates to url and waits for its
// load event.
func (b *Browser) Open(ctx context.Context, url string) (*Page, error) {
	var t struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &t); err != nil {
		return nil, err
	}
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true}, &a); err != nil {
		return nil, err
	}
	p := &Page{b: b, session: a.SessionID, since: len(b.Events())}
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		if err := b.Call(ctx, p.session, m, nil, nil); err != nil {
			return nil, err
		}
	}
	from := len(b.Events())
	if err := b.Call(ctx, p.session, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		return nil, err
	}
	if _, _, err := b.WaitEvent(ctx, from, func(e Event) bool {
		return e.SessionID == p.session && e.Method == "Page.loadEventFired"
	}); err != nil {
		return nil, fmt.Errorf("waiting for %s to load: %w", url, err)
	}
	return p, nil
}

// events are the page's events of one method.
func (p *Page) events(method string) []json.RawMessage {
	var out []json.RawMessage
	for _, e := range p.b.Events()[p.since:] {
		if e.SessionID == p.session && e.Method == method {
			out = append(out, e.Params)
		}
	}
	return out
}

// ConsoleErrors are console.error calls, uncaught exceptions and log
// entries of level error (a Content-Security-Policy violation is one).
func (p *Page) ConsoleErrors() []string {
	var out []string
	for _, raw := range p.events("Runtime.consoleAPICalled") {
		var c struct {
			Type string            `json:"type"`
			Args []json.RawMessage `json:"args"`
		}
		if json.Unmarshal(raw, &c) == nil && (c.Type == "error" || c.Type == "assert") {
			out = append(out, "console."+c.Type+": "+string(raw))
		}
	}
	for _, raw := range p.events("Runtime.exceptionThrown") {
		out = append(out, "exception: "+string(raw))
	}
	for _, raw := range p.events("Log.entryAdded") {
		var l struct {
			Entry struct {
				Level, Text, Source string
			} `json:"entry"`
		}
		if json.Unmarshal(raw, &l) == nil && l.Entry.Level == "error" {
			out = append(out, l.Entry.Source+": "+l.Entry.Text)
		}
	}
	return out
}

// Requests are the URLs of every request the page made, its own document
// included.
func (p *Page) Requests() []string {
	var out []string
	for _, raw := range p.events("Network.requestWillBeSent") {
		var r struct {
			Request struct{ URL string } `json:"request"`
		}
		if json.Unmarshal(raw, &r) == nil {
			out = append(out, r.Request.URL)
		}
	}
	return out
}

// Eval evaluates a JavaScript expression in the page and decodes its value
// into out; an exception is an error.
func (p *Page) Eval(ctx context.Context, expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := p.b.Call(ctx, p.session, "Runtime.evaluate",
		map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		return err
	}
	if r.Exception != nil {
		return fmt.Errorf("%s: %s", expr, r.Exception.Text)
	}
	if out == nil || r.Result.Value == nil {
		return nil
	}
	return json.Unmarshal(r.Result.Value, out)
}

// Click clicks the centre of the first element matching selector with the
// mouse, as a person would: the events go through the browser's input
// path, not el.click().
func (p *Page) Click(ctx context.Context, selector string) error {
	var box struct{ X, Y float64 }
	sel, _ := json.Marshal(selector)
	expr := fmt.Sprintf(`(() => { const el = document.querySelector(%s); if (!el) throw new Error("no element " + %s);
		el.scrollIntoView({block: "center"}); const r = el.getBoundingClientRect();
		return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`, sel, sel)
	if err := p.Eval(ctx, expr, &box); err != nil {
		return err
	}
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		ev := map[string]any{"type": typ, "x": box.X, "y": box.Y}
		if typ != "mouseMoved" {
			ev["button"], ev["clickCount"] = "left", 1
		}
		if err := p.b.Call(ctx, p.session, "Input.dispatchMouseEvent", ev, nil); err != nil {
			return err
		}
	}
	return nil
}

// Follow clicks the first element matching selector (a link), waits for
// the page it leads to to load, and returns that page's address.
func (p *Page) Follow(ctx context.Context, selector string) (string, error) {
	from := len(p.b.Events())
	if err := p.Click(ctx, selector); err != nil {
		return "", err
	}
	if _, _, err := p.b.WaitEvent(ctx, from, func(e Event) bool {
		return e.SessionID == p.session && e.Method == "Page.loadEventFired"
	}); err != nil {
		return "", fmt.Errorf("after a click on %s, waiting for a page to load: %w", selector, err)
	}
	var href string
	err := p.Eval(ctx, "location.href", &href)
	return href, err
}

// Screenshot is a PNG of the page in a viewport width by height pixels.
func (p *Page) Screenshot(ctx context.Context, width, height int) ([]byte, error) {
	if err := p.b.Call(ctx, p.session, "Emulation.setDeviceMetricsOverride",
		map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		return nil, err
	}
	var r struct {
		Data string `json:"data"`
	}
	if err := p.b.Call(ctx, p.session, "Page.captureScreenshot", map[string]any{"format": "png"}, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.Data)
}
