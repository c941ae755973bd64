package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
)

// report is the result of a run against one server.
type report struct {
	Target     string       `json:"target"`
	Addr       string       `json:"addr"`
	APIVersion string       `json:"api_version"`
	Config     *loadConfig  `json:"config"`
	DurationS  float64      `json:"duration_s"`
	WarmupS    float64      `json:"warmup_s"`
	CPUs       int          `json:"cpus"`
	Modes      []modeResult `json:"modes"`
}

func newReport(t *target) *report {
	return &report{Target: t.name, Addr: t.addr, APIVersion: t.version, Config: t.cfg,
		DurationS: t.cfg.Duration.Seconds(), WarmupS: t.cfg.Warmup.Seconds(), CPUs: runtime.NumCPU()}
}

// failedCalls is the number of measured calls that failed.
func (r *report) failedCalls() uint64 {
	var n uint64
	for _, m := range r.Modes {
		n += m.Errors
	}
	return n
}

func runLoadCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("thriftbench", flag.ContinueOnError)
	cfg := &loadConfig{}
	registerLoadFlags(fs, cfg, true)
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the keyspace this run created instead of dropping it (to fill a store for start-up)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: thriftbench [flags]               load one Thrift server
       thriftbench echo-server [flags]   serve the protocol/transport ceiling
       thriftbench compare [flags]       thriftd, Cassandra 3.11 and the ceiling side by side
       thriftbench start-up [flags]      time thriftd's start-up on a data directory

flags:
`)
		fs.PrintDefaults()
	}
	if code, ok := parseArgs(fs, args, stderr); !ok {
		return code
	}
	return exitFor(fs, loadMain(ctx, cfg, stdout, stderr), stderr)
}

// errCallsFailed is returned when measured calls failed: the report is
// printed, and the exit status says so.
var errCallsFailed = errors.New("some measured calls failed (see the errors column)")

func loadMain(ctx context.Context, cfg *loadConfig, stdout, stderr io.Writer) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if err := checkLoopback(ctx, "--addr", cfg.Addr, cfg.AllowRemote); err != nil {
		return err
	}
	log, err := newLogger(cfg.LogLevel, stderr)
	if err != nil {
		return err
	}
	t := newTarget(cfg.Addr, cfg.Addr, cfg, log)
	rep, err := benchmark(ctx, t, log)
	if err != nil {
		return err
	}
	if cfg.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		writeReport(stdout, rep)
	}
	if rep.failedCalls() > 0 {
		return errCallsFailed
	}
	return nil
}

// benchmark sets the target up, runs every mode on it and cleans up.
func benchmark(ctx context.Context, t *target, log *slog.Logger) (rep *report, err error) {
	defer func() {
		if cerr := t.close(ctx); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := t.setup(ctx); err != nil {
		return nil, err
	}
	reports, err := measure(ctx, []*target{t}, nil, log)
	if err != nil {
		return nil, err
	}
	return reports[t], nil
}

// writeReport prints the text report of one server.
func writeReport(w io.Writer, r *report) {
	fmt.Fprintf(w, "thriftbench: %s (%s, API %s), %d CPUs\n", r.Target, r.Addr, r.APIVersion, r.CPUs)
	fmt.Fprintf(w, "%s\n\n", r.Config.describe())
	writeModeTable(w, r.Modes)
}

func writeModeTable(w io.Writer, ms []modeResult) {
	fmt.Fprintf(w, "%-12s %10s %11s %8s %8s %9s %7s\n", "mode", "ops/s", "cells/s", "p50 ms", "p99 ms", "p99.9 ms", "errors")
	for _, m := range ms {
		fmt.Fprintf(w, "%-12s %10.0f %11.0f %8.2f %8.2f %9.2f %7d\n", m.Mode, m.OpsPerSec, m.CellsPerSec, m.P50Ms, m.P99Ms, m.P999Ms, m.Errors)
	}
	for _, m := range ms {
		if m.FirstError != "" {
			fmt.Fprintf(w, "  %s: first error: %s\n", m.Mode, oneLine(m.FirstError))
		}
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
