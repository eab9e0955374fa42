// Package configs holds malarun's built-in prompt templates (embedded, each
// overridable by a file named in the configuration) and the example
// configuration file.
package configs

import "embed"

// Prompts holds prompts/*.md: Go text/template files.
//
//go:embed prompts/*.md
var Prompts embed.FS
