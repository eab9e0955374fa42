// Package usd rounds the costs malarun prints. The CLI reports a cost in
// US dollars, in millionths at the finest (total_cost_usd 0.750625, or a
// float sum of its own: 0.0018000000000000002 from 2.1.332); malarun adds
// such costs up, and a float64 sum prints as 0.0006000000000000001.
// Every output that prints a cost for a program (the --json report, the
// --events lines and the run's timeline, the log lines, malarun status
// --json, malarun show --format json, malarun summary) rounds it here, to the millionth of
// a dollar the CLI reports, once, as it is printed: sums are kept exact
// until then. A leaf: it imports nothing of malarun's.
package usd

import "math"

// decimals is how many decimals a printed cost keeps at most.
const decimals = 6

// Round is usd rounded to six decimals (decimals; half away from zero), so that
// encoding/json and strconv print it with at most that many: the nearest
// float64 to a number of millionths prints as that number. A value too
// large to round this way (over 2^53 millionths, about 9 billion dollars),
// NaN and the infinities come back as they are.
func Round(usd float64) float64 {
	scaled := usd * 1e6
	if math.IsNaN(scaled) || math.IsInf(scaled, 0) || math.Abs(scaled) >= 1<<53 {
		return usd
	}
	return math.Round(scaled) / 1e6
}
