package supervisor

import (
	"bytes"
	"os"
	"strconv"
)

// PeakRSSKB is malarun's own peak resident set (VmHWM), not its children's:
// logged at the end of a run so memory can be checked on real workloads
// (and by the command line once it has written a result copied from the
// transcript).
func PeakRSSKB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			n, _ := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			return n
		}
	}
	return 0
}
