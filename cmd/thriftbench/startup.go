package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Start-up. start-up times thriftd opening an existing data directory:
// from the start of the process to the first describe_version it answers,
// as an application that restarts a server waits for it. Each start is
// stopped with SIGTERM, so every start but a first one after a crash
// opens a store that was closed cleanly; the first start after a killed
// thriftd replays what its logs hold.

// startupPoll is how often a start is probed for an answer.
const startupPoll = 5 * time.Millisecond

// startupConfig is the command line of start-up.
type startupConfig struct {
	thriftd      string
	dataDir      string
	thriftdFlags string
	starts       int
	timeout      time.Duration
	logLevel     string
}

// startMeasure is one start.
type startMeasure struct {
	answered time.Duration
	vmRSSKiB int64
}

func runStartupCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("thriftbench start-up", flag.ContinueOnError)
	cfg := &startupConfig{}
	flags.StringVar(&cfg.thriftd, "thriftd", "bin/thriftd", "thriftd binary to start")
	flags.StringVar(&cfg.dataDir, "data-dir", "", "data directory to open (required; fill one with thriftbench --keep)")
	flags.StringVar(&cfg.thriftdFlags, "thriftd-flags", "", "flags added to thriftd's command line, space-separated")
	flags.IntVar(&cfg.starts, "starts", 3, "starts to time, one after the other")
	flags.DurationVar(&cfg.timeout, "timeout", serverStartTimeout, "bound of one start")
	flags.StringVar(&cfg.logLevel, "log-level", "info", "log level on stderr: debug, info, warn or error")
	flags.Usage = func() {
		fmt.Fprint(flags.Output(), `usage: thriftbench start-up --data-dir DIR [flags]

Starts thriftd on DIR --starts times, one after the other, on a free
loopback port, and prints how long each start took to answer its first
describe_version and thriftd's resident memory then. Each start is
stopped with SIGTERM.

flags:
`)
		flags.PrintDefaults()
	}
	if code, ok := parseArgs(flags, args, stderr); !ok {
		return code
	}
	return exitFor(flags, startupMain(ctx, cfg, stdout, stderr), stderr)
}

func startupMain(ctx context.Context, cfg *startupConfig, stdout, stderr io.Writer) error {
	switch {
	case cfg.dataDir == "":
		return usagef("--data-dir is required")
	case cfg.starts < 1:
		return usagef("--starts must be at least 1, not %d", cfg.starts)
	case cfg.timeout <= 0:
		return usagef("--timeout must be positive, not %s", cfg.timeout)
	}
	log, err := newLogger(cfg.logLevel, stderr)
	if err != nil {
		return err
	}
	if _, err := os.Stat(cfg.thriftd); err != nil {
		return fmt.Errorf("%w (make build builds it)", err)
	}
	size, files, err := directorySize(cfg.dataDir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "data directory %s: %s in %d files\n", cfg.dataDir, mebibytes(size), files)
	tmp, err := os.MkdirTemp("", "thriftbench-start-up-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var measured []startMeasure
	for i := 1; i <= cfg.starts; i++ {
		m, err := timeStart(ctx, cfg, filepath.Join(tmp, fmt.Sprintf("thriftd-%d.log", i)), log)
		if err != nil {
			return fmt.Errorf("start %d: %w", i, err)
		}
		rss := "unknown"
		if m.vmRSSKiB >= 0 {
			rss = fmt.Sprintf("%.1f MiB", float64(m.vmRSSKiB)/1024)
		}
		fmt.Fprintf(stdout, "start %d: answered after %d ms, VmRSS %s\n", i, m.answered.Milliseconds(), rss)
		measured = append(measured, m)
	}
	times := make([]time.Duration, len(measured))
	for i, m := range measured {
		times[i] = m.answered
	}
	fmt.Fprintf(stdout, "fastest %d ms, slowest %d ms\n", slices.Min(times).Milliseconds(), slices.Max(times).Milliseconds())
	return nil
}

// timeStart starts thriftd once on the data directory, waits for its
// first answer, reads its memory and stops it.
func timeStart(ctx context.Context, cfg *startupConfig, logPath string, log *slog.Logger) (startMeasure, error) {
	port, err := freePort()
	if err != nil {
		return startMeasure{}, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logFile, err := os.Create(logPath)
	if err != nil {
		return startMeasure{}, err
	}
	defer logFile.Close()
	args := append([]string{"--listen", addr, "--data-dir", cfg.dataDir}, strings.Fields(cfg.thriftdFlags)...)
	cmd := exec.Command(cfg.thriftd, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	began := time.Now()
	p, err := startProcess("thriftd", cmd)
	if err != nil {
		return startMeasure{}, err
	}
	answered, err := firstAnswer(ctx, p, addr, began.Add(cfg.timeout))
	if err != nil {
		p.stop(log)
		return startMeasure{}, fmt.Errorf("%w: %s", err, tail(logPath))
	}
	m := startMeasure{answered: answered.Sub(began), vmRSSKiB: -1}
	if st, err := readMemoryStatus(p.cmd.Process.Pid); err == nil {
		m.vmRSSKiB = st.VmRSSKiB
	}
	log.Info("thriftd answered", "addr", addr, "pid", p.cmd.Process.Pid, "after", m.answered)
	p.stop(log)
	if p.err != nil {
		return m, fmt.Errorf("thriftd did not stop cleanly (%v): %s", p.err, tail(logPath))
	}
	return m, nil
}

// firstAnswer probes addr until describe_version answers and returns when
// it did.
func firstAnswer(ctx context.Context, p *process, addr string, deadline time.Time) (time.Time, error) {
	for {
		c, err := dial(ctx, addr, "", time.Second)
		if err == nil {
			_, err = c.DescribeVersion(ctx)
			c.Close()
			if err == nil {
				return time.Now(), nil
			}
		}
		select {
		case <-p.exited:
			return time.Time{}, fmt.Errorf("thriftd exited during start-up (%v)", p.err)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(startupPoll):
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("thriftd did not answer on %s in time", addr)
		}
	}
}

// directorySize sums the sizes of the regular files under dir.
func directorySize(dir string) (size int64, files int, err error) {
	info, err := os.Stat(dir)
	if err != nil {
		return 0, 0, err
	}
	if !info.IsDir() {
		return 0, 0, fmt.Errorf("%s is not a directory", dir)
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile
		}
		if err != nil {
			return err
		}
		size += fi.Size()
		files++
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("size of %s: %w", dir, err)
	}
	return size, files, nil
}

// mebibytes formats a byte count.
func mebibytes(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
