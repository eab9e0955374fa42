package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/malarun/malarun/internal/testing/synth"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// otlpSink answers every OTLP/HTTP export with 200 at once and counts
// them: a collector that costs malarun nothing but the request.
type otlpSink struct {
	srv      *http.Server
	url      string
	requests atomic.Int64
	bytes    atomic.Int64
}

func startSink() (*otlpSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &otlpSink{url: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		s.bytes.Add(n)
		s.requests.Add(1)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go s.srv.Serve(ln)
	return s, nil
}

// telemetryCost runs the overhead scenario's run with telemetry off and on
// (exporting to a sink that answers at once), interleaved so that the
// machine's load hits both alike, and times malarun's start-up
// (`malarun --version`, which reads no telemetry variable: what every
// start pays for the packages the binary links).
func (h *harness) telemetryCost(o options, rep *report) error {
	transcript, err := filepath.Abs(filepath.Join(o.transcripts, "tool-use-success.jsonl"))
	if err != nil {
		return err
	}
	sink, err := startSink()
	if err != nil {
		return err
	}
	defer sink.srv.Close()
	var offOwn, onOwn, offLat, onLat []float64
	one := func(i int, on bool) error {
		spec := runSpec{issue: fmt.Sprintf("telemetry-%v-%d", on, i), child: testchild.ReplaySession,
			env: []string{testchild.EnvTranscript + "=" + transcript}, flags: []string{"--max-attempts", "1"}}
		if on {
			spec.env = append(spec.env, "OTEL_EXPORTER_OTLP_ENDPOINT="+sink.url)
		}
		r, err := h.start(spec)
		if err != nil {
			return err
		}
		if r.code != 0 || r.stdout != synth.ResultText+"\n" {
			return fmt.Errorf("run %d (telemetry %v): %s", i, on, r.describe())
		}
		c, ok1 := r.ownCPU()
		l, ok2 := r.addedLatency()
		if !ok1 || !ok2 {
			return fmt.Errorf("run %d: no report from the fake child", i)
		}
		if i < 2 {
			return nil // warm-up
		}
		if on {
			onOwn, onLat = append(onOwn, float64(c)/ms), append(onLat, float64(l)/ms)
		} else {
			offOwn, offLat = append(offOwn, float64(c)/ms), append(offLat, float64(l)/ms)
		}
		return nil
	}
	for i := range o.runs + 2 {
		first := i%2 == 0 // ABBA: off-on, on-off, ...
		if err := one(i, !first); err != nil {
			return err
		}
		if err := one(i, first); err != nil {
			return err
		}
	}
	startCPU, startWall, err := h.startUp(o.runs)
	if err != nil {
		return err
	}
	size := int64(0)
	if fi, err := os.Stat(h.malarun); err == nil {
		size = fi.Size()
	}
	requests := float64(sink.requests.Load()) / float64(o.runs+2)
	rep.raw["telemetry"] = map[string]any{"off_own_cpu_ms": offOwn, "on_own_cpu_ms": onOwn, "off_added_latency_ms": offLat,
		"on_added_latency_ms": onLat, "startup_cpu_ms": startCPU, "startup_wall_ms": startWall, "binary_bytes": size}
	off, on := summarize(offOwn), summarize(onOwn)
	rep.add(section{
		title:  fmt.Sprintf("7. Telemetry: the overhead run with export off and on, %d interleaved pairs (ms)", off.N),
		header: distHeader,
		rows: [][]string{
			distRow("own CPU, telemetry off (no OTEL_* variable)", off),
			distRow("own CPU, exporting to a collector that answers at once", on),
			distRow("added latency, telemetry off", summarize(offLat)),
			distRow("added latency, exporting", summarize(onLat)),
			distRow("start-up: CPU of `malarun --version`", summarize(startCPU)),
			distRow("start-up: wall time of `malarun --version`", summarize(startWall)),
		},
		notes: []string{
			fmt.Sprintf("Own CPU on/off: **%.3f** (means); %.1f OTLP requests per exporting run, %d bytes in all. Binary: %d bytes.",
				on.Mean/off.Mean, requests, sink.bytes.Load(), size),
			"Telemetry off costs only what the binary links (the start-up rows): compare them, and the off row, with main's binary run the same way.",
		},
	})
	return nil
}

// startUp times `malarun --version` n times: the CPU it used (rusage) and
// its wall time, in ms.
func (h *harness) startUp(n int) (cpu, wall []float64, err error) {
	for i := range n + 2 {
		cmd := exec.Command(h.malarun, "--version")
		cmd.Env = h.baseEnv
		t := time.Now()
		if err := cmd.Run(); err != nil {
			return nil, nil, fmt.Errorf("malarun --version: %w", err)
		}
		took := time.Since(t)
		if i < 2 {
			continue
		}
		st := cmd.ProcessState
		cpu = append(cpu, float64((st.UserTime()+st.SystemTime()).Nanoseconds())/ms)
		wall = append(wall, float64(took.Nanoseconds())/ms)
	}
	return cpu, wall, nil
}
