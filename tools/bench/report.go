package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// report collects what the scenarios measured and prints it as Markdown.
type report struct {
	goals    [][]string // goal, measured, met
	sections []section
	raw      map[string]any
}

type section struct {
	title  string
	header []string
	rows   [][]string
	notes  []string
}

func (r *report) goal(name, measured string, met bool) {
	verdict := "yes"
	if !met {
		verdict = "**NO**"
	}
	r.goals = append(r.goals, []string{name, measured, verdict})
}

func (r *report) add(s section) { r.sections = append(r.sections, s) }

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// distRow is n, mean, p50, p90, p99, max of d in ms.
func distRow(name string, d dist) []string {
	return []string{name, strconv.Itoa(d.N), f2(d.Mean), f2(d.P50), f2(d.P90), f2(d.P99), f2(d.Max)}
}

var distHeader = []string{"", "n", "mean", "p50", "p90", "p99", "max"}

func (r *report) overheadFake(own, ticks, lat, wall dist, tmpfs string, tmpfsOwn, tmpfsLat, walk dist, procs int, closeIno dist) {
	sec := section{
		title:  fmt.Sprintf("1a. Overhead with a fake CLI replaying a recorded run (tool call, result), %d runs (ms)", own.N),
		header: distHeader,
		rows: [][]string{
			distRow("malarun's own CPU (rusage minus the child's report)", own),
			distRow("malarun's own CPU, /proc/pid/stat of the zombie (10 ms ticks, truncated)", ticks),
			distRow("added latency: child's exit to malarun's exit", lat),
			distRow("wall time of the whole run", wall),
		},
		notes: []string{
			"Own CPU: malarun's rusage as its parent reaps it (malarun + every descendant it reaped, µs) minus the CPU the fake child reports for itself just before it exits; the child's exit itself is charged to malarun, so this is an upper bound. The tick figure, read from /proc/<pid>/stat while malarun is a zombie (waitid WNOWAIT), counts malarun alone but in 10 ms steps, each of utime and stime truncated: a lower bound.",
		},
	}
	if tmpfsOwn.N > 0 {
		sec.rows = append(sec.rows,
			distRow("own CPU, state_dir on tmpfs ("+tmpfs+")", tmpfsOwn),
			distRow("added latency, state_dir on tmpfs ("+tmpfs+")", tmpfsLat))
		sec.notes = append(sec.notes, "The tmpfs rows repeat the runs with --state-dir on "+tmpfs+": fsync and ext4 inode allocation cost nothing there, so the difference is the disk's share.")
	}
	sec.rows = append(sec.rows,
		distRow(fmt.Sprintf("reading /proc/<pid>/stat of all %d processes (what proc does to find a tree)", procs), walk),
		distRow("close(2) of an inotify instance watching a file (the follower closes one per attempt)", closeIno))
	sec.notes = append(sec.notes, "The last two rows time, in this process, two steps that lie on malarun's exit path: they are the machine's costs, not malarun's, and explain part of the added latency.")
	r.add(sec)
	r.goal("1. own CPU per run < 20 ms (fake CLI, mean)", f2(own.Mean)+" ms (p99 "+f2(own.P99)+")", own.Mean < 20)
	r.goal("1. added exit latency < 10 ms (fake CLI, median)", f2(lat.P50)+" ms (p99 "+f2(lat.P99)+")", lat.P50 < 10)
}

func (r *report) overheadReal(rounds int, bare, mal dist, ratio, rlo, rhi, diff, dlo, dhi float64, own, ticksDirect, ticksWrapped, lat dist) {
	r.add(section{
		title:  fmt.Sprintf("1b. Overhead with the real CLI against internal/testing/fakeapi, %d interleaved rounds (ms)", rounds),
		header: distHeader,
		rows: [][]string{
			distRow("wall: bare CLI", bare),
			distRow("wall: malarun running the CLI", mal),
			distRow("malarun's own CPU (rusage minus the wrapper's report)", own),
			distRow("malarun's own CPU, zombie /proc/pid/stat ticks, direct runs", ticksDirect),
			distRow("malarun's own CPU, zombie /proc/pid/stat ticks, wrapped runs", ticksWrapped),
			distRow("added latency: CLI's exit (wrapper) to malarun's exit", lat),
		},
		notes: []string{
			fmt.Sprintf("Wall ratio malarun/bare (geometric mean of paired ratios): **%.4f**, 95%% bootstrap CI [%.4f, %.4f]; mean difference %+.1f ms, CI [%+.1f, %+.1f] ms.", ratio, rlo, rhi, diff, dlo, dhi),
			"Each round runs, in random order: the bare CLI (same flags malarun passes, stdout to a file), malarun running the CLI, and malarun running it through a wrapper (this tool) that is a subreaper, reaps the CLI's whole tree and reports its CPU and exit time. Only the wrapped runs give malarun's own CPU to the microsecond and the CLI's exit time; the wall comparison uses the direct runs.",
		},
	})
	inCI := rlo <= 1 && 1 <= rhi
	r.goal("1. wall ratio malarun/bare CLI indistinguishable from 1", fmt.Sprintf("%.4f, 95%% CI [%.4f, %.4f]", ratio, rlo, rhi), inCI)
	r.goal("1. own CPU per run < 20 ms (real CLI, mean)", f2(own.Mean)+" ms (p99 "+f2(own.P99)+")", own.Mean < 20)
	r.goal("1. added exit latency < 10 ms (real CLI, median)", f2(lat.P50)+" ms (p99 "+f2(lat.P99)+")", lat.P50 < 10)
}

func (r *report) skipReal(why string) {
	r.add(section{title: "1b. Overhead with the real CLI: SKIPPED", notes: []string{why}})
	r.goal("1. wall ratio malarun/bare CLI indistinguishable from 1", "not measured: "+why, false)
}

func (r *report) detection(o options, late, treeGone dist) {
	r.add(section{
		title:  fmt.Sprintf("2. Detection: last line to SIGTERM received, minus idle_timeout (%v), %d hangs (ms)", o.idleTO, late.N),
		header: distHeader,
		rows: [][]string{
			distRow("lateness of the kill signal", late),
			distRow("malarun's own \"process tree gone\" took (child obeys SIGTERM)", treeGone),
		},
		notes: []string{"The fake child writes three lines 20 ms apart, reads CLOCK_MONOTONIC after the last write, and again when SIGTERM arrives; malarun runs with --idle-timeout " + o.idleTO.String() + " --max-attempts 1."},
	})
	r.goal("2. detection lateness p99 < 50 ms", f2(late.P99)+" ms (max "+f2(late.Max)+")", late.P99 < 50)
}

func (r *report) phases(o options, allowance time.Duration, late map[string][]float64, recovery dist) {
	sec := section{
		title:  fmt.Sprintf("2b. Detection by phase: last line of progress to SIGTERM received, minus the phase's allowance (%v), %d hangs each (ms)", allowance, o.phaseHangs),
		header: distHeader,
		notes:  []string{"The fake child prints a stream that ends in the phase (docs/design.md §D30), then nothing (\"text, pinging\": a ping line every 100 ms, which is no progress); malarun runs with every other allowance at 1h. Recovery: from hang_detected to the first line of the resumed attempt, both from malarun's timeline (the fake child starts in milliseconds; the real CLI adds its own start, about a second)."},
	}
	worst := 0.0
	for _, c := range phaseCases() {
		d := summarize(late[c.name])
		sec.rows = append(sec.rows, distRow(c.name, d))
		worst = max(worst, d.Max)
	}
	sec.rows = append(sec.rows, distRow("recovery: hang detected to the resumed attempt's first line", recovery))
	r.add(sec)
	r.goal("2b. detection by phase within 1 s of its allowance (worst case)", f2(worst)+" ms", worst < 1000)
}

func (r *report) kill(res killResult) {
	grace := time.Duration(res.GraceNs)
	sec := section{
		title:  fmt.Sprintf("3. Kill latency through internal/proc (Process.Stop, kill_grace %v) (ms)", grace),
		header: distHeader,
		notes: []string{
			"From the call to Stop (the decision) to: the last process of the tree dead, as a pidfd opened on each before the call tells; and to Stop's return (proc has seen the tree gone and reaped it). The -tree kinds add a grandchild in its own session (setsid), as the Bash tool does. For the kinds that ignore SIGTERM the latency less the grace is shown.",
		},
	}
	var problems []string
	for _, v := range killKinds() {
		samples := res.Variants[v]
		var dead, stop []float64
		for _, s := range samples {
			d, st := float64(s.DeadNs)/ms, float64(s.StopNs)/ms
			if ignoresTerm(v) {
				d -= float64(res.GraceNs) / ms
				st -= float64(res.GraceNs) / ms
			}
			dead = append(dead, d)
			stop = append(stop, st)
			if s.Alive > 0 || s.Left > 0 {
				problems = append(problems, fmt.Sprintf("%s: %d alive, %d left after Stop", v, s.Alive, s.Left))
			}
		}
		suffix := ""
		if ignoresTerm(v) {
			suffix = " − grace"
		}
		dd, sd := summarize(dead), summarize(stop)
		sec.rows = append(sec.rows, distRow(v+": tree dead"+suffix, dd), distRow(v+": Stop returned"+suffix, sd))
		if ignoresTerm(v) {
			r.goal("3. kill latency, "+v+": grace + < 50 ms (Stop returned, p99)", "grace + "+f2(sd.P99)+" ms", sd.P99 < 50 && len(problems) == 0)
		}
	}
	if len(problems) > 0 {
		sec.notes = append(sec.notes, "PROBLEMS: "+strings.Join(problems, "; "))
	}
	r.add(sec)
}

func (r *report) idle(window time.Duration, cpu, ticks float64, switches int64, threads int) {
	r.add(section{
		title:  fmt.Sprintf("4. Idle cost: malarun while the child says nothing for %v", window.Round(time.Second)),
		header: []string{"", "value"},
		rows: [][]string{
			{"CPU of all malarun's threads (schedstat, ns precision)", f2(cpu) + " ms"},
			{"CPU from /proc/pid/stat (10 ms ticks)", f2(ticks) + " ms"},
			{"context switches, all threads (wake-ups)", strconv.FormatInt(switches, 10)},
			{"threads", strconv.Itoa(threads)},
		},
	})
	r.goal(fmt.Sprintf("4. idle CPU over %v < 10 ms", window.Round(time.Second)), f2(cpu)+" ms, "+strconv.FormatInt(switches, 10)+" wake-ups", cpu < 10)
}

func (r *report) rss(name string, bytes int64, rss, own, wall dist) {
	title := "5. Peak RSS (VmHWM malarun logs as peak_rss_kb)"
	var sec *section
	for i := range r.sections {
		if r.sections[i].title == title {
			sec = &r.sections[i]
		}
	}
	if sec == nil {
		r.add(section{title: title, header: []string{"scenario", "CLI output", "runs", "peak RSS max (MB)", "own CPU mean (ms)", "wall mean (ms)"}})
		sec = &r.sections[len(r.sections)-1]
	}
	sec.rows = append(sec.rows, []string{name, fmt.Sprintf("%.1f MB", float64(bytes)/(1<<20)), strconv.Itoa(rss.N), f1(rss.Max), f1(own.Mean), f1(wall.Mean)})
	r.goal("5. peak RSS < 64 MB: "+name, f1(rss.Max)+" MB", rss.Max < 64)
}

func (r *report) scale(o options, ok int, batch time.Duration, own, rss, wall dist, failures []string) {
	sec := section{
		title:  fmt.Sprintf("6. Scale: %d malaruns at once, each on a fake CLI printing %d lines %v apart", o.scale, o.scaleLines, o.scalePace),
		header: distHeader,
		rows: [][]string{
			distRow("malarun's own CPU per run (ms)", own),
			distRow("malarun's peak RSS per run (MB)", rss),
			distRow("wall per run (ms)", wall),
		},
		notes: []string{fmt.Sprintf("%d of %d finished with exit 0, all in %v; malarun's own CPU summed over all runs: %.0f ms.", ok, o.scale, batch.Round(time.Millisecond), own.Mean*float64(own.N))},
	}
	if len(failures) > 0 {
		sec.notes = append(sec.notes, "FAILURES: "+strings.Join(failures, "; "))
	}
	r.add(sec)
	r.goal(fmt.Sprintf("6. %d runs at once all finish", o.scale), fmt.Sprintf("%d/%d; own CPU %.1f ms/run, peak RSS %.1f MB/run (mean)", ok, o.scale, own.Mean, rss.Mean), ok == o.scale)
}

// benchLine is one line of go test -bench output.
var benchLine = regexp.MustCompile(`^Benchmark(Decode|JSONBaseline)/(\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op\s+([\d.]+) MB/s\s+(\d+) B/op\s+(\d+) allocs/op`)

// decoder tabulates the stream decoder's benchmarks: the median of each
// figure over the -count runs, and the decoder's speed over the baseline's,
// both measured in the same go test run.
func (r *report) decoder(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	type figs struct{ mbs, bop, allocs []float64 }
	data := map[string]*figs{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		key := m[1] + "/" + m[2]
		if data[key] == nil {
			data[key] = &figs{}
			if m[1] == "Decode" {
				order = append(order, m[2])
			}
		}
		mbs, _ := strconv.ParseFloat(m[5], 64)
		bop, _ := strconv.ParseFloat(m[6], 64)
		al, _ := strconv.ParseFloat(m[7], 64)
		d := data[key]
		d.mbs, d.bop, d.allocs = append(d.mbs, mbs), append(d.bop, bop), append(d.allocs, al)
	}
	if len(order) == 0 {
		return fmt.Errorf("no benchmark lines in %s", path)
	}
	med := func(xs []float64) float64 { return summarize(xs).P50 }
	sec := section{
		title:  "7. Stream decoder vs encoding/json into map[string]any (go test -bench, medians over rounds)",
		header: []string{"input", "rounds", "decoder MB/s", "B/op", "allocs/op", "baseline MB/s", "B/op", "allocs/op", "speed ratio (min–max)"},
		notes: []string{
			"Each round runs the decoder and then the baseline on one input, input after input, so both sides of a ratio see the same load; the ratio is the median over rounds of decoder MB/s / baseline MB/s of the same round. The baseline is given each line already in memory and splits on newlines; the decoder reads through its fixed 64 KiB buffer. Large lines: inputs of 1 MB and more (line-*: a tool result of base64 text with an escaped newline every 4000 bytes; escaped-*: JSON-escaped source code, an escape every few bytes; image-*: an image block of pure base64).",
		},
	}
	var bounded []float64
	for _, in := range order {
		d, b := data["Decode/"+in], data["JSONBaseline/"+in]
		if d == nil || b == nil {
			continue
		}
		var ratios []float64
		for i := range min(len(d.mbs), len(b.mbs)) {
			ratios = append(ratios, d.mbs[i]/b.mbs[i])
		}
		rd := summarize(ratios)
		ratio := rd.P50
		sec.rows = append(sec.rows, []string{in, strconv.Itoa(len(ratios)),
			f1(med(d.mbs)), strconv.FormatFloat(med(d.bop), 'f', 0, 64), strconv.FormatFloat(med(d.allocs), 'f', 0, 64),
			f1(med(b.mbs)), strconv.FormatFloat(med(b.bop), 'f', 0, 64), strconv.FormatFloat(med(b.allocs), 'f', 0, 64),
			fmt.Sprintf("%.2fx (%.2f–%.2f)", ratio, rd.Min, rd.Max)})
		if large(in) {
			r.goal("7. decoder ≥ 5x baseline on "+in, fmt.Sprintf("%.2fx (rounds %.2f–%.2f)", ratio, rd.Min, rd.Max), ratio >= 5)
			bounded = append(bounded, med(d.bop))
		}
	}
	if len(bounded) > 0 {
		lo, hi := slices.Min(bounded), slices.Max(bounded)
		// Bounded: the same few allocations whatever the size of the line.
		r.goal("7. decoder memory per line bounded (B/op, lines of 1 MB to 100 MB)",
			fmt.Sprintf("%.0f to %.0f B/op", lo, hi), hi-lo < 4096)
	}
	r.add(sec)
	return nil
}

// large reports whether a benchmark input is one big line (1 MB or more).
func large(name string) bool {
	return strings.HasSuffix(name, "MB") && !strings.HasPrefix(name, "transcripts")
}

func (r *report) print(w io.Writer, took time.Duration) {
	// Scenarios finish in any order (the idle one runs alongside): print
	// goals and sections in the order of the issue, by their numbers.
	slices.SortStableFunc(r.goals, func(a, b []string) int { return strings.Compare(number(a[0]), number(b[0])) })
	slices.SortStableFunc(r.sections, func(a, b section) int { return strings.Compare(number(a.title), number(b.title)) })
	fmt.Fprintf(w, "## Goals\n\n")
	table(w, []string{"goal", "measured", "met"}, r.goals)
	for _, s := range r.sections {
		fmt.Fprintf(w, "\n### %s\n\n", s.title)
		if len(s.rows) > 0 {
			table(w, s.header, s.rows)
		}
		for _, n := range s.notes {
			fmt.Fprintf(w, "\n%s\n", n)
		}
	}
	fmt.Fprintf(w, "\n(harness: %v)\n", took.Round(time.Second))
}

// number is the leading "1a." of a title.
func number(title string) string {
	n, _, _ := strings.Cut(title, " ")
	return n
}

// table prints a Markdown table with its columns padded to line up.
func table(w io.Writer, header []string, rows [][]string) {
	width := make([]int, len(header))
	for _, row := range append([][]string{header}, rows...) {
		for i, c := range row {
			if i < len(width) {
				width[i] = max(width[i], len([]rune(c)))
			}
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for i := range width {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			b.WriteString(" " + c + strings.Repeat(" ", width[i]-len([]rune(c))) + " |")
		}
		fmt.Fprintln(w, b.String())
	}
	line(header)
	sep := make([]string, len(width))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, row := range rows {
		line(row)
	}
}
