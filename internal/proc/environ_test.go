package proc

import (
	"encoding/binary"
	"testing"
)

func TestHasEntryMatchesWholeEntries(t *testing.T) {
	block := []byte("PATH=/bin\x00MALARUN_RUN=issue-1/r1\x00HOME=/root\x00")
	tests := []struct {
		env  string
		want bool
	}{
		{"MALARUN_RUN=issue-1/r1", true},
		{"PATH=/bin", true},
		{"HOME=/root", true},
		{"MALARUN_RUN=issue-1/r", false},   // a prefix of the value
		{"MALARUN_RUN=issue-1/r10", false}, // a longer value
		{"RUN=issue-1/r1", false},          // a suffix of the entry
		{"", false},
	}
	for _, tt := range tests {
		if got := hasEntry(block, tt.env); got != tt.want {
			t.Errorf("hasEntry(%q) = %v, want %v", tt.env, got, tt.want)
		}
	}
	// The last entry without its NUL (a read cut short) still counts whole.
	if !hasEntry([]byte("A=1\x00MALARUN_RUN=x"), "MALARUN_RUN=x") {
		t.Error("an unterminated last entry is not matched")
	}
}

// procArgs builds a KERN_PROCARGS2 buffer as xnu lays it out.
func procArgs(argc uint32, path string, pad int, rest string) []byte {
	b := binary.NativeEndian.AppendUint32(nil, argc)
	b = append(b, path...)
	b = append(b, make([]byte, 1+pad)...)
	return append(b, rest...)
}

func TestProcArgsEnvFindsTheEnvironmentAfterTheArguments(t *testing.T) {
	env := "MALARUN_RUN=issue-1/r1\x00HOME=/Users/a\x00\x00executable_path=/usr/bin/node\x00"
	tests := []struct {
		name string
		buf  []byte
		want string // "" means no environment
	}{
		{"node with two arguments and padding", procArgs(2, "/usr/local/bin/node", 6, "node\x00cli.js\x00"+env), env},
		{"no padding", procArgs(1, "/bin/sh", 0, "sh\x00"+env), env},
		// An argument that looks like the marker is an argument, not the environment.
		{"the marker as an argument", procArgs(2, "/bin/echo", 3, "echo\x00MALARUN_RUN=issue-1/r1\x00HOME=/x\x00"), "HOME=/x\x00"},
		{"argc larger than the arguments", procArgs(9, "/bin/sh", 0, "sh\x00x\x00"), ""},
		{"no path terminator", binary.NativeEndian.AppendUint32(nil, 1), ""},
		{"too short for argc", []byte{1, 0}, ""},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(procArgsEnv(tt.buf)); got != tt.want {
				t.Errorf("environment %q, want %q", got, tt.want)
			}
		})
	}
	if !hasEntry(procArgsEnv(tests[0].buf), "MALARUN_RUN=issue-1/r1") {
		t.Error("the marker is not found in the environment read from KERN_PROCARGS2")
	}
	if hasEntry(procArgsEnv(tests[2].buf), "MALARUN_RUN=issue-1/r1") {
		t.Error("an argument was taken for the marker")
	}
}

func FuzzProcArgsEnv(f *testing.F) {
	f.Add(procArgs(2, "/usr/local/bin/node", 6, "node\x00cli.js\x00A=1\x00"))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		env := procArgsEnv(b) // never panics, never reads outside b
		if len(env) > len(b) {
			t.Fatalf("environment of %d bytes out of %d", len(env), len(b))
		}
	})
}
