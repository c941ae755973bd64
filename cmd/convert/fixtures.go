package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/thriftbridge/thriftbridge/daemon"
	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/internal/golden"
	"github.com/thriftbridge/thriftbridge/migrate/thriftsource"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// runFixtures checks every fixture model (or --name) end to end, writes
// one as a schema and sstable2json dumps (a json: source), or loads one
// into a Thrift server. With neither --out nor --load, or with --check, it
// runs the check: see checkFixtures.
func runFixtures(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("convert fixtures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "", "fixture model ("+strings.Join(fixtures.Names(), ", ")+"); default for the check: every model")
	out := fs.String("out", "", "write DIR/schema.json and DIR/data/<Family>.json (sstable2json dumps) of --name")
	load := fs.String("load", "", "load --name into the Thrift server at thrift://host:port")
	check := fs.Bool("check", false, "round-trip the models through an in-process thriftd, its Badger directory and sstable2json dumps and compare every conversion with the expected scripts (the default without --out and --load)")
	list := fs.Bool("list", false, "list the fixture models")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("convert fixtures: unexpected argument %q", fs.Arg(0))
	}
	if *list {
		for _, n := range fixtures.Names() {
			fmt.Fprintln(stdout, n)
		}
		return nil
	}
	if *out == "" && *load == "" {
		*check = true
	} else if *name == "" {
		return usagef("convert fixtures: --out and --load need --name MODEL")
	}
	names := fixtures.Names()
	if *name != "" {
		names = []string{*name}
	}
	models := make([]*fixtures.Model, 0, len(names))
	for _, n := range names {
		m, err := fixtures.Load(n)
		if err != nil {
			return err
		}
		models = append(models, m)
	}
	if *out != "" {
		if err := exportFixture(models[0], *out, stdout); err != nil {
			return err
		}
	}
	if *load != "" {
		addr, ok := strings.CutPrefix(*load, "thrift://")
		if !ok || addr == "" {
			return usagef("--load %q: expected thrift://host:port", *load)
		}
		m := models[0]
		if err := loadFixture(ctx, addr, m, "", thriftsource.ConnOptions{}); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "loaded %s into %s (keyspace %s)\n", m.Name, addr, m.Keyspace.Name)
	}
	if !*check {
		return nil
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return checkFixtures(ctx, models, (*fixtures.Model).Expected, stdout, logger)
}

// loadFixture loads m over Thrift into the server at addr, under the
// keyspace name keyspace ("": the model's), connecting as o says.
func loadFixture(ctx context.Context, addr string, m *fixtures.Model, keyspace string, o thriftsource.ConnOptions) error {
	return thriftsource.Call(ctx, addr, o, func(ctx context.Context, c *cassandra.CassandraClient) error {
		return m.WriteThrift(ctx, c, keyspace)
	})
}

// exportFixture writes the model's schema and sstable2json dumps under dir.
func exportFixture(m *fixtures.Model, dir string, stdout io.Writer) error {
	data, schema := filepath.Join(dir, "data"), filepath.Join(dir, "schema.json")
	if err := m.WriteSSTableJSON(data); err != nil {
		return err
	}
	b, err := json.MarshalIndent(m.Keyspace, "", "  ")
	if err != nil {
		return fmt.Errorf("encode schema: %w", err)
	}
	if err := os.WriteFile(schema, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write schema: %w", err)
	}
	if stdout != nil {
		fmt.Fprintf(stdout, "wrote %s: convert data --from json:%s --schema %s --to file:%s.cql --now %d\n",
			dir, data, schema, m.Name, m.Now.Unix())
	}
	return nil
}

// fixtureSource names a source of the check, as its OK/FAIL line shows it.
type fixtureSource string

const (
	sourceThrift fixtureSource = "thrift"
	sourceBadger fixtureSource = "badger"
	sourceJSON   fixtureSource = "json"
)

// fixtureResult is the outcome of one model read back from one source:
// failure is "" when every conversion matched its expected script.
type fixtureResult struct {
	model   string
	source  fixtureSource
	shapes  []string
	failure string
}

// checkFixtures is the self-check of the fixtures: for each model it
// starts thriftd in-process over a Badger store in a temporary directory,
// with its clock at the model's LoadTime, loads the model over Thrift,
// moves the clock to the model's Now, then converts the model with each
// shape that has an expected script from three sources — the live server
// over Thrift, its Badger directory once the server stopped, and
// sstable2json dumps — with `convert data --now <Now>`, and compares every
// script byte for byte with the embedded expected one. It prints one
// OK/FAIL line per model and source (a failure with its first difference)
// and returns an error wrapping errDifferences when any script differs.
// expected gives a model's expected script of a shape (Model.Expected).
func checkFixtures(ctx context.Context, models []*fixtures.Model, expected expectedScript, stdout io.Writer, logger *slog.Logger) error {
	tmp, err := os.MkdirTemp("", "convert-fixtures-")
	if err != nil {
		return fmt.Errorf("fixture check: %w", err)
	}
	defer os.RemoveAll(tmp)
	var failed, total int
	for _, m := range models {
		results := checkModel(ctx, m, filepath.Join(tmp, m.Name), expected, logger)
		for _, r := range results {
			total++
			if r.failure != "" {
				failed++
				fmt.Fprintf(stdout, "FAIL %-12s %-7s %s\n", r.model, r.source, r.failure)
				continue
			}
			fmt.Fprintf(stdout, "OK   %-12s %-7s %s\n", r.model, r.source, strings.Join(r.shapes, " "))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d fixture conversions differ from their expected scripts", errDifferences, failed, total)
	}
	return nil
}

// expectedScript returns a model's expected script of a shape.
type expectedScript func(m *fixtures.Model, shape string) ([]byte, error)

// checkModel round-trips one model through the three sources in dir,
// comparing each conversion with its expected script.
func checkModel(ctx context.Context, m *fixtures.Model, dir string, expected expectedScript, logger *slog.Logger) []fixtureResult {
	storeDir, dumpDir := filepath.Join(dir, "store"), filepath.Join(dir, "dumps")
	shapes := m.ExpectedShapes()
	compare := func(source fixtureSource, from ...string) fixtureResult {
		r := fixtureResult{model: m.Name, source: source, shapes: shapes}
		if len(shapes) == 0 {
			r.failure = "no expected scripts are embedded"
			return r
		}
		for _, shape := range shapes {
			if r.failure = convertAndCompare(ctx, m, shape, from, filepath.Join(dir, string(source)+"-"+shape+".cql"), expected); r.failure != "" {
				return r
			}
		}
		return r
	}
	failBoth := func(err error) []fixtureResult {
		return []fixtureResult{
			{model: m.Name, source: sourceThrift, failure: err.Error()},
			{model: m.Name, source: sourceBadger, failure: err.Error()},
		}
	}

	var results []fixtureResult
	srv, err := startFixtureServer(ctx, storeDir, m.LoadTime(), logger)
	if err != nil {
		results = failBoth(err)
	} else {
		loadErr := loadFixture(ctx, srv.addr(), m, "", thriftsource.ConnOptions{})
		if loadErr == nil {
			srv.clock.set(m.Now)
			results = append(results, compare(sourceThrift, "--from", "thrift://"+srv.addr()+"/"+m.Keyspace.Name))
		}
		stopErr := srv.stop(ctx)
		switch {
		case loadErr != nil:
			results = failBoth(fmt.Errorf("load over Thrift: %w", loadErr))
		case stopErr != nil:
			results = append(results, fixtureResult{model: m.Name, source: sourceBadger, failure: fmt.Sprintf("stop thriftd: %v", stopErr)})
		default:
			results = append(results, compare(sourceBadger, "--from", "badger:"+filepath.Join(storeDir, m.Keyspace.Name)))
		}
	}
	if err := exportFixture(m, dumpDir, nil); err != nil {
		return append(results, fixtureResult{model: m.Name, source: sourceJSON, failure: err.Error()})
	}
	return append(results, compare(sourceJSON, "--from", "json:"+filepath.Join(dumpDir, "data"), "--schema", filepath.Join(dumpDir, "schema.json")))
}

// convertAndCompare runs `convert data` from a source into script with
// the options of the expected script of shape, and returns "" when the
// script is that expected script byte for byte, else what went wrong.
func convertAndCompare(ctx context.Context, m *fixtures.Model, shape string, from []string, script string, expected expectedScript) string {
	want, err := expected(m, shape)
	if err != nil {
		return err.Error()
	}
	forced, err := m.ForcedShapes(ctx, shape)
	if err != nil {
		return err.Error()
	}
	args := append([]string{"data", "--to", "file:" + script, "--now", strconv.FormatInt(m.Now.Unix(), 10), "--quiet"}, from...)
	for _, family := range m.FamilyNames() {
		if s, ok := forced[family]; ok {
			args = append(args, "--shape", family+"="+string(s))
		}
	}
	var stderr bytes.Buffer
	if err := run(ctx, args, io.Discard, &stderr); err != nil {
		return fmt.Sprintf("shape %s: convert %s: %v %s", shape, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	got, err := os.ReadFile(script)
	if err != nil {
		return fmt.Sprintf("shape %s: %v", shape, err)
	}
	if d := firstDifference(want, got); d != "" {
		return fmt.Sprintf("shape %s: the script differs from fixtures/%s/expected/%s.cql\n%s", shape, m.Name, shape, d)
	}
	return ""
}

// firstDifference is golden.FirstDifference indented under a FAIL line.
func firstDifference(want, got []byte) string {
	d := strings.TrimSuffix(golden.FirstDifference(want, got), "\n")
	if d == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(d, "\n", "\n    ")
}

// stoppedClock is a clock that stands still at the instant it is set to:
// the fixtures' data is dated, so the server that loads and serves it
// runs on the fixture's time, not the real one.
type stoppedClock struct {
	unix atomic.Int64
}

func (c *stoppedClock) now() time.Time { return time.Unix(c.unix.Load(), 0) }

func (c *stoppedClock) set(t time.Time) { c.unix.Store(t.Unix()) }

// fixtureServer is thriftd running in-process on 127.0.0.1:0 over a
// Badger store, started as cmd/thriftd starts it, on a stoppedClock (both
// the store's clock, which computes expiry times, and the handler's).
type fixtureServer struct {
	*daemon.Daemon
	clock *stoppedClock
}

// startFixtureServer opens (creating) the store in dir and starts serving
// with the clock at at.
func startFixtureServer(ctx context.Context, dir string, at time.Time, logger *slog.Logger) (*fixtureServer, error) {
	clock := &stoppedClock{}
	clock.set(at)
	cfg := daemon.DefaultConfig()
	cfg.Listen, cfg.DataDir = "127.0.0.1:0", dir
	// The only client is convert itself, loading and reading whole models:
	// a request deadline would only fail a slow machine's run.
	cfg.ReadRequestTimeoutMS, cfg.RangeRequestTimeoutMS, cfg.WriteRequestTimeoutMS = 0, 0, 0
	d, err := daemon.Start(ctx, cfg, logger, daemon.WithClock(clock.now), daemon.WithGCInterval(-1))
	if err != nil {
		return nil, fmt.Errorf("start thriftd: %w", err)
	}
	return &fixtureServer{Daemon: d, clock: clock}, nil
}

// addr is the server's host:port.
func (s *fixtureServer) addr() string { return s.Addr().String() }

// stop shuts the server down and closes the store.
func (s *fixtureServer) stop(ctx context.Context) error {
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		return fmt.Errorf("stop thriftd: %w", err)
	}
	return nil
}
