package ui

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"strconv"
)

// malarun's HTML pages (`malarun show`'s, the summary's) are built with
// html/template, the one HTML escaper: each value is escaped for where it
// lands (text, an attribute, a link), and no value can open an element.
// Outside text is made inert first, where a page builds the view its
// templates show (Inert: controls and bidirectional overrides shown as on
// a terminal, so the file is safe to cat and no text displays other than
// it reads); the page's own style and script are set as they are
// (template.CSS, template.JS) and allowed by their hashes (CSPSource).

// pageHead is the head every page shares, executed with a Head.
const pageHead = `{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{.CSS}}</style>
</head><body><main>
{{end}}`

// Head is what a page's head says: its Content-Security-Policy, its
// title (inert) and its own style.
type Head struct {
	CSP   string
	Title string
	CSS   template.CSS
}

// PageTemplate is a page's template: text (its own templates) parsed with
// the shared "head" and the functions every page may call: f0 and f1, a
// number with 0 or 1 decimals (an SVG's coordinates). The page's
// templates are constants of malarun's: one that does not parse is a bug,
// and panics.
func PageTemplate(name, text string) *template.Template {
	t := template.New(name).Funcs(template.FuncMap{
		"f0": func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) },
		"f1": func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	})
	template.Must(t.Parse(pageHead))
	return template.Must(t.Parse(text))
}

// CSPSource is the Content-Security-Policy source that allows one inline
// element, the page's own style or script, by its hash.
func CSPSource(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}
