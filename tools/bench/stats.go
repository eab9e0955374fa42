package main

import (
	"math"
	"math/rand/v2"
	"slices"
)

// dist summarises samples (in any unit).
type dist struct {
	N                             int
	Mean, Min, P50, P90, P99, Max float64
}

func summarize(xs []float64) dist {
	if len(xs) == 0 {
		return dist{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return dist{
		N: len(s), Mean: sum / float64(len(s)), Min: s[0], Max: s[len(s)-1],
		P50: quantile(s, 0.50), P90: quantile(s, 0.90), P99: quantile(s, 0.99),
	}
}

// quantile is the nearest-rank quantile of sorted s: with 100 samples, p99
// is the 99th smallest, so one outlier in a hundred does not hide in it.
func quantile(s []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// bootstrapCI is a 95% percentile bootstrap interval of stat over xs, from
// a fixed seed so that a run's report does not change when printed twice.
func bootstrapCI(xs []float64, stat func([]float64) float64) (lo, hi float64) {
	const resamples = 10000
	rng := rand.New(rand.NewPCG(1, 2))
	est := make([]float64, resamples)
	buf := make([]float64, len(xs))
	for r := range est {
		for i := range buf {
			buf[i] = xs[rng.IntN(len(xs))]
		}
		est[r] = stat(buf)
	}
	slices.Sort(est)
	return est[int(0.025*resamples)], est[int(0.975*resamples)-1]
}

// ratioCI is the geometric mean of the paired ratios a[i]/b[i] with its
// 95% bootstrap interval.
func ratioCI(a, b []float64) (ratio, lo, hi float64) {
	logs := make([]float64, len(a))
	for i := range a {
		logs[i] = math.Log(a[i] / b[i])
	}
	l, h := bootstrapCI(logs, mean)
	return math.Exp(mean(logs)), math.Exp(l), math.Exp(h)
}

// diffCI is the mean of the paired differences a[i]-b[i] with its 95%
// bootstrap interval.
func diffCI(a, b []float64) (d, lo, hi float64) {
	diffs := make([]float64, len(a))
	for i := range a {
		diffs[i] = a[i] - b[i]
	}
	lo, hi = bootstrapCI(diffs, mean)
	return mean(diffs), lo, hi
}
