package testchild

import (
	"os"
	"time"
)

// EnvGate is the file a Gated child waits for.
const EnvGate = "MALARUN_FAKE_GATE"

// gated is the Gated behaviour. Waiting for a file is the test's
// handshake: the child polls for it, the test never sleeps.
func gated(println func(string)) int {
	lines := transcript()
	n := min(envInt(EnvLines, 1), len(lines))
	for _, l := range lines[:n] {
		println(l)
	}
	for {
		if _, err := os.Stat(os.Getenv(EnvGate)); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, l := range lines[n:] {
		println(l)
	}
	return envInt(EnvExit, 0)
}
