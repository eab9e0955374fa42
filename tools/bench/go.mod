// The benchmark harness is a module of its own so that the product's
// `go build/vet/test/install ./...` leave it out. It builds against the
// malarun module in this repository (the replace below), whose internal
// packages it may import: its path is under github.com/malarun/malarun.
module github.com/malarun/malarun/tools/bench

go 1.26.8

require (
	github.com/malarun/malarun v0.0.0-00010101000000-000000000000
	golang.org/x/sys v0.49.0
)

replace github.com/malarun/malarun => ../..
