//go:build linux || darwin

// Package platform stops a build for a kernel malarun does not support
// with one clear error: the packages that call the kernel directly import
// it, so the go command compiles none of them for such a kernel and shows
// only unsupported.go's message, instead of a screen of undefined names.
// supported: Linux (everything tested) and darwin (built and
// vetted; docs/platforms.md).
package platform

// supported is true wherever this package builds.
const supported = true
