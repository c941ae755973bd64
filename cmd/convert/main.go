package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// errDifferences makes verify exit with status 1.
var errDifferences = errors.New("source and target differ")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop) // a second signal ends the process at once
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, errDifferences):
		fmt.Fprintln(os.Stderr, "convert:", err)
		os.Exit(1)
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case errors.As(err, new(usageError)), len(os.Args) > 1 && os.Args[1] == "verify":
		// verify answers as diff does: 1 for differences, 2 for trouble.
		fmt.Fprintln(os.Stderr, "convert:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "convert:", err)
		os.Exit(1)
	}
}

// usageError is a wrong command line, on which convert exits with status
// 2; a failure of the work itself exits with status 1 (verify: 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

const usage = `usage: convert plan|schema|data|verify|fixtures [flags]
  convert plan    --from SRC
  convert schema  --from SRC --to DST
  convert data    --from SRC --to DST [--checkpoint FILE] [--now UNIX_SECONDS|RFC3339]
  convert verify  --from SRC --to DST
  convert fixtures [--name MODEL] [--check]          round-trip the fixture models, compare with their expected scripts
  convert fixtures --name MODEL (--out DIR | --load thrift://host:port) | --list
run "convert COMMAND -h" for the flags of a command`

// run executes one command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return flag.ErrHelp
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "plan", "schema", "data", "verify":
	case "fixtures":
		return runFixtures(ctx, args, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		fmt.Fprintln(stderr, usage)
		return usagef("unknown command %q", cmd)
	}
	cfg, err := parseFlags(cmd, args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel()}))
	cfg.conn.warnCredentials(log)
	src, err := openSource(ctx, cfg)
	if err != nil {
		return err
	}
	defer src.Close()
	warnUnlisted(ctx, src, log)
	switch cmd {
	case "plan":
		return runPlan(ctx, cfg, src, stdout)
	case "schema":
		return runSchema(ctx, cfg, src, stdout, log)
	case "data":
		return runData(ctx, cfg, src, stdout, stderr, log)
	default:
		return runVerify(ctx, cfg, src, stdout, log)
	}
}

// config holds the flags of plan, schema, data and verify.
type config struct {
	cmd            string
	from, schema   string
	to             string
	target         target
	keyspace       string
	shapes         map[string]supercol.Shape
	families       []string
	ttl            string
	checkpoint     string
	quiet, verbose bool
	report         string
	planFile       string
	replication    string
	noMetadata     bool
	metaKeyspace   string
	rate           float64
	concurrency    int
	batchSize      int
	consistency    string
	rowPageSize    int
	columnPageSize int
	partitioner    string
	tolerance      time.Duration
	examples       int
	sampleRows     int
	// now is --now; zero: the real clock.
	now time.Time
	// conn holds the login, TLS and routing flags of the two ends.
	conn connFlags
}

// clock is the clock of the run: stopped at --now, else nil (the real
// clock, for every consumer).
func (c *config) clock() func() time.Time {
	if c.now.IsZero() {
		return nil
	}
	now := c.now
	return func() time.Time { return now }
}

// parseNow reads --now: Unix seconds or an RFC 3339 time.
func parseNow(s string) (time.Time, error) {
	if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(sec, 0), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--now %q: expected Unix seconds or an RFC 3339 time (2023-11-14T22:13:20Z)", s)
	}
	return t, nil
}

func (c *config) logLevel() slog.Level {
	if c.verbose {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

// shapeFlag collects --shape Family=shape.
type shapeFlag map[string]supercol.Shape

func (s shapeFlag) String() string {
	var parts []string
	for k, v := range s {
		parts = append(parts, k+"="+string(v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (s shapeFlag) Set(v string) error {
	fam, shape, ok := strings.Cut(v, "=")
	if !ok || fam == "" {
		return fmt.Errorf("expected Family=compact|pivot|static, got %q", v)
	}
	if strings.EqualFold(shape, string(supercol.ShapeMixed)) {
		s[fam] = supercol.ShapeMixed
		return nil
	}
	sh, ok := supercol.ParseShape(shape)
	if !ok {
		return fmt.Errorf("%s: unknown shape %q (compact, pivot, static or mixed)", fam, shape)
	}
	s[fam] = sh
	return nil
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func parseFlags(cmd string, args []string, stderr io.Writer) (*config, error) {
	c := &config{cmd: cmd, shapes: map[string]supercol.Shape{}}
	fs := flag.NewFlagSet("convert "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.from, "from", "", "source: thrift://host:port/Keyspace, badger:DIR/Keyspace or json:PATH")
	fs.StringVar(&c.schema, "schema", "", "keyspace schema (JSON) of a json: source")
	fs.IntVar(&c.rowPageSize, "row-page-size", 0, "rows per read of a thrift: or badger: source (default 1000)")
	fs.IntVar(&c.columnPageSize, "column-page-size", 0, "columns per read of a thrift: or badger: source (default 1000)")
	fs.StringVar(&c.partitioner, "partitioner", "", "partitioner of a badger: store (default: the one it was written with)")
	fs.Var(shapeFlag(c.shapes), "shape", "Family=compact|pivot|static|mixed: force a family's table shape (repeatable)")
	var families listFlag
	fs.Var(&families, "family", "convert only this family (repeatable)")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress bars")
	fs.BoolVar(&c.verbose, "verbose", false, "debug logging")
	fs.StringVar(&c.report, "report", "", "write the JSON report to this file")
	fs.IntVar(&c.sampleRows, "sample-rows", 100, "rows sampled per family to choose its shape")
	if cmd != "plan" {
		fs.StringVar(&c.to, "to", "", "target: cql://host:port/keyspace or file:OUT.cql")
		fs.StringVar(&c.keyspace, "keyspace", "", "target keyspace of a file: target (default: the source's)")
		fs.StringVar(&c.ttl, "ttl", "remaining", "TTLs: remaining, original, none or a number of seconds")
		fs.StringVar(&c.consistency, "consistency", "LOCAL_QUORUM", "consistency level of a cql: target")
	}
	if cmd == "schema" || cmd == "data" {
		fs.StringVar(&c.replication, "replication", "", "replication map of a created keyspace (default {'class': 'SimpleStrategy', 'replication_factor': 1})")
		fs.BoolVar(&c.noMetadata, "no-metadata", false, "do not record the keyspace in thriftd's catalog (the metadata keyspace thriftd --backend cql:// serves it from; in a file: target, the INSERTs at the script's end)")
		fs.StringVar(&c.metaKeyspace, "meta-keyspace", "thriftbridge_meta", "thriftd's metadata keyspace (thriftd's cql_meta_keyspace)")
	}
	if cmd == "data" {
		fs.StringVar(&c.checkpoint, "checkpoint", "", "checkpoint file: record progress, resume from it")
		fs.Float64Var(&c.rate, "rate", 0, "statements per second to a cql: target (0: unlimited)")
		fs.IntVar(&c.concurrency, "concurrency", 8, "batches in flight to a cql: target")
		fs.IntVar(&c.batchSize, "batch-size", 50, "statements per batch to a cql: target")
		fs.StringVar(&c.planFile, "plan", "", "a plan report (convert plan --report) whose cell counts give the progress bars an ETA")
	}
	if cmd != "schema" {
		fs.Func("now", "convert as of `UNIX_SECONDS|RFC3339` (1700000000 or 2023-11-14T22:13:20Z): that instant decides which cells have expired, the remaining TTLs and the script header, so that a run is reproducible (default: the real clock)", func(v string) error {
			var err error
			c.now, err = parseNow(v)
			return err
		})
	}
	if cmd == "verify" {
		fs.DurationVar(&c.tolerance, "tolerance", 2*time.Second, "how far a TTL may differ")
		fs.IntVar(&c.examples, "examples", 10, "differences shown per family")
	}
	c.conn.register(fs, cmd != "plan")
	fs.Usage = func() { commandUsage(fs, cmd, stderr) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{err}
	}
	if fs.NArg() > 0 {
		return nil, usagef("convert %s: unexpected argument %q", cmd, fs.Arg(0))
	}
	c.families = families
	if err := c.check(); err != nil {
		return nil, usageError{fmt.Errorf("convert %s: %w", cmd, err)}
	}
	return c, nil
}

// check checks the settings that need no I/O: the source's and target's
// forms and the values of the flags parsed later.
func (c *config) check() error {
	if c.from == "" {
		return errors.New("--from is required")
	}
	if err := checkSource(c); err != nil {
		return err
	}
	if c.cmd != "plan" {
		if c.to == "" {
			return errors.New("--to is required")
		}
		var err error
		if c.target, err = parseTarget(c); err != nil {
			return err
		}
		if c.target.hosts != nil {
			if _, err := c.gocqlConsistency(); err != nil {
				return err
			}
		}
	}
	if _, err := c.options("", nil); err != nil {
		return err
	}
	return c.conn.check(c.from, c.to)
}

// commandUsage prints the usage of a command: its flags, except the
// per-end forms of the connection flags, which a paragraph describes.
func commandUsage(fs *flag.FlagSet, cmd string, w io.Writer) {
	switch cmd {
	case "plan":
		fmt.Fprintln(w, "usage: convert plan --from SRC [flags]")
	default:
		fmt.Fprintf(w, "usage: convert %s --from SRC --to DST [flags]\n", cmd)
	}
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(w)
	fs.VisitAll(func(f *flag.Flag) {
		if !isPerEndFlag(f.Name) {
			shown.Var(f.Value, f.Name, f.Usage)
			shown.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	shown.PrintDefaults()
	fmt.Fprintln(w)
	if cmd == "plan" {
		fmt.Fprint(w, planConnUsage)
		return
	}
	fmt.Fprint(w, connUsage)
}

// options builds the pipeline options shared by every command.
func (c *config) options(targetKeyspace string, log *slog.Logger) (migrate.Options, error) {
	o := migrate.Options{TargetKeyspace: targetKeyspace, Shapes: c.shapes, Families: c.families,
		SampleRows: c.sampleRows, Logger: log, Now: c.clock(), NoMetadata: c.noMetadata, MetaKeyspace: c.metaKeyspace}
	var err error
	if c.ttl != "" {
		if o.TTL, err = migrate.ParseTTLPolicy(c.ttl); err != nil {
			return o, err
		}
	}
	if c.replication != "" {
		if o.Replication, err = migrate.ParseReplication(c.replication); err != nil {
			return o, err
		}
	}
	return o, nil
}

// writeJSON writes v to path (when set) as indented JSON.
func writeJSON(path string, v any) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
