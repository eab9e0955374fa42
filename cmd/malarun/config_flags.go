package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// rawFlag keeps a flag's text; the loader parses it like any other source,
// so a flag gets the same checks and messages as the file and the env.
type rawFlag struct {
	value string
	typ   string
}

func (f *rawFlag) String() string     { return f.value }
func (f *rawFlag) Set(s string) error { f.value = s; return nil }
func (f *rawFlag) Type() string       { return f.typ }

// addKeyFlags adds one flag per key.
func addKeyFlags(fs *pflag.FlagSet, keys []keySpec) {
	for _, k := range keys {
		typ, help := k.kind, fmt.Sprintf("%s (env %s)", k.help, k.envName())
		if strings.Contains(typ, "|") {
			// pflag shows a back-quoted word of the usage as the value's name.
			typ, help = "string", fmt.Sprintf("%s: `%s` (env %s)", k.help, k.kind, k.envName())
		}
		fs.Var(&rawFlag{typ: typ}, k.flagName(), help)
		f := fs.Lookup(k.flagName())
		// Only shown in the help: the loader reads a flag only when it is set.
		f.DefValue = k.defaultDoc()
		if f.DefValue == `""` {
			f.DefValue = ""
		}
		if k.kind == "bool" {
			f.NoOptDefVal = "true"
			f.Usage += "; --" + k.flagName() + "=false turns it off"
		}
	}
}
