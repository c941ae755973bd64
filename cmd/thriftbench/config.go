package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"
)

// Limits of the parameters, so that a typo cannot ask for an unbounded
// run or a frame no server accepts.
const (
	maxConnections = 1024
	maxColumns     = 10000
	maxValueSize   = 1 << 20
	maxCells       = 100000 // cells in one call
	maxRounds      = 100
)

// loadConfig holds the parameters of a run, shared by the load command
// and compare.
type loadConfig struct {
	Addr         string        `json:"addr,omitempty"`
	Connections  int           `json:"connections"`
	Duration     time.Duration `json:"-"`
	Warmup       time.Duration `json:"-"`
	Rounds       int           `json:"rounds"`
	Timeout      time.Duration `json:"-"`
	Keys         int           `json:"keys"`
	Columns      int           `json:"columns"`
	ValueSize    int           `json:"value_size"`
	Values       string        `json:"values"`
	Preload      int           `json:"preload"`
	SuperColumns int           `json:"super_columns"`
	Subcolumns   int           `json:"subcolumns"`
	RangeRows    int           `json:"range_rows"`
	Modes        []string      `json:"modes"`
	Keyspace     string        `json:"keyspace"`
	Reuse        bool          `json:"reuse,omitempty"`
	Keep         bool          `json:"keep,omitempty"`
	AllowRemote  bool          `json:"-"`
	JSON         bool          `json:"-"`
	Seed         uint64        `json:"seed"`
	LogLevel     string        `json:"-"`

	modeList string
}

// registerLoadFlags registers the flags of a run; withAddr adds --addr
// (compare starts or is given its servers instead).
func registerLoadFlags(fs *flag.FlagSet, c *loadConfig, withAddr bool) {
	if withAddr {
		fs.StringVar(&c.Addr, "addr", "127.0.0.1:9160", "Thrift address of the server to load (host:port)")
	}
	fs.IntVar(&c.Connections, "connections", 32, "connections, each making one call at a time")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "measured time of each mode")
	fs.DurationVar(&c.Warmup, "warmup", 5*time.Second, "uncounted warm-up before each mode (0: none)")
	fs.IntVar(&c.Rounds, "rounds", 1, "measure every mode this many times, round after round, and keep the best round of each")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Second, "bound of one call (and of connecting)")
	fs.IntVar(&c.Keys, "keys", 100000, "rows the write modes (insert, batch, batch-super, counter) pick from")
	fs.IntVar(&c.Columns, "columns", 20, "columns of a preloaded row, of a slice, of a batch and of a range row")
	fs.IntVar(&c.ValueSize, "value-size", 64, "bytes of each column value")
	fs.StringVar(&c.Values, "values", valuesRepeat, "what the values hold: "+valuesRepeat+" (one random value in every column, which compresses across the columns of a row) or "+valuesDistinct+" (a different random value in every column, which does not compress)")
	fs.IntVar(&c.Preload, "preload", 10000, "rows written before the read modes: of --columns columns for get, slice, range and mixed, of --super-columns x --subcolumns subcolumns for get-super")
	fs.IntVar(&c.SuperColumns, "super-columns", 10, "super columns of a batch-super call and of a row get-super reads")
	fs.IntVar(&c.Subcolumns, "subcolumns", 10, "subcolumns of each super column of a batch-super call and of a row get-super reads")
	fs.IntVar(&c.RangeRows, "range-rows", 10, "rows of a range call")
	fs.StringVar(&c.modeList, "mode", "all", "modes to run, comma-separated, in order: "+strings.Join(allModes, ",")+" (all: every mode)")
	fs.StringVar(&c.Keyspace, "keyspace", "thriftbench", "keyspace to create, use and drop")
	fs.BoolVar(&c.Reuse, "reuse", false, "run in --keyspace even though it exists and thriftbench did not create it (it is then not dropped)")
	fs.BoolVar(&c.AllowRemote, "allow-remote", false, "allow a non-loopback address")
	fs.BoolVar(&c.JSON, "json", false, "print one JSON document on stdout instead of the text report")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the random choice of rows and columns")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level on stderr: debug, info, warn or error")
}

var keyspaceName = regexp.MustCompile(`^[A-Za-z0-9_]{1,48}$`)

// validate checks the parameters and fills Modes; every error is a usage
// error.
func (c *loadConfig) validate() error {
	modes, err := parseModes(c.modeList)
	if err != nil {
		return err
	}
	c.Modes = modes
	switch {
	case c.Connections < 1 || c.Connections > maxConnections:
		return usagef("--connections must be between 1 and %d", maxConnections)
	case c.Duration <= 0:
		return usagef("--duration must be positive")
	case c.Warmup < 0:
		return usagef("--warmup must not be negative")
	case c.Rounds < 1 || c.Rounds > maxRounds:
		return usagef("--rounds must be between 1 and %d", maxRounds)
	case c.Timeout <= 0:
		return usagef("--timeout must be positive")
	case c.Keys < 1:
		return usagef("--keys must be at least 1")
	case c.Columns < 1 || c.Columns > maxColumns:
		return usagef("--columns must be between 1 and %d", maxColumns)
	case c.ValueSize < 0 || c.ValueSize > maxValueSize:
		return usagef("--value-size must be between 0 and %d", maxValueSize)
	case c.Values != valuesRepeat && c.Values != valuesDistinct:
		return usagef("--values must be %s or %s, not %q", valuesRepeat, valuesDistinct, c.Values)
	case c.Preload < 0:
		return usagef("--preload must not be negative")
	case c.SuperColumns < 1 || c.Subcolumns < 1 || c.SuperColumns*c.Subcolumns > maxCells:
		return usagef("--super-columns and --subcolumns must be at least 1, with at most %d cells in all", maxCells)
	case c.RangeRows < 1 || c.RangeRows*c.Columns > maxCells:
		return usagef("--range-rows must be at least 1, with at most %d cells per call (--range-rows x --columns)", maxCells)
	case !keyspaceName.MatchString(c.Keyspace):
		return usagef("--keyspace %q is not a keyspace name (letters, digits and _, at most 48)", c.Keyspace)
	case strings.HasPrefix(strings.ToLower(c.Keyspace), "system"):
		return usagef("--keyspace %q: the system keyspaces are not for benchmarks", c.Keyspace)
	}
	for _, m := range c.Modes {
		if modeReadsPreloaded(m) && c.Preload < 1 {
			return usagef("--mode %s reads preloaded rows: --preload must be at least 1", m)
		}
	}
	return nil
}

// parseModes parses --mode: "all" or a comma-separated list of mode names.
func parseModes(list string) ([]string, error) {
	if strings.TrimSpace(list) == "all" {
		return append([]string(nil), allModes...), nil
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range strings.Split(list, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		if _, ok := modes[m]; !ok {
			return nil, usagef("--mode: unknown mode %q (modes: %s, all)", m, strings.Join(allModes, ", "))
		}
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, usagef("--mode: no mode given")
	}
	return out, nil
}

// checkLoopback refuses an address whose host is not loopback, unless
// allowRemote: thriftbench writes, and creates and drops a keyspace. A
// host name must resolve to loopback addresses only.
func checkLoopback(ctx context.Context, flagName, addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return usagef("%s %q: want host:port", flagName, addr)
	}
	if allowRemote {
		return nil
	}
	if isLoopbackHost(ctx, host) {
		return nil
	}
	return usagef("%s %q is not a loopback address; thriftbench writes there and creates and drops a keyspace, so --allow-remote must say that is intended", flagName, addr)
}

func isLoopbackHost(ctx context.Context, host string) bool {
	if host == "" {
		// ":port" dials the local system.
		return true
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return false
		}
	}
	return true
}

// describe is the one-line summary of the parameters.
func (c *loadConfig) describe() string {
	warm := "no warm-up"
	if c.Warmup > 0 {
		warm = fmt.Sprintf("after a %s warm-up", c.Warmup)
	}
	if c.Rounds > 1 {
		warm = fmt.Sprintf("%s, best of %d rounds", warm, c.Rounds)
	}
	return fmt.Sprintf("%d connections, %s per mode %s; %d columns of %d bytes (%s values), %d preloaded rows, %d write keys, batch-super %dx%d, range %d rows",
		c.Connections, c.Duration, warm, c.Columns, c.ValueSize, c.Values, c.Preload, c.Keys, c.SuperColumns, c.Subcolumns, c.RangeRows)
}
