package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/gocql/gocql"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/migrate/cqlsink"
	"github.com/thriftbridge/thriftbridge/migrate/enginesource"
	"github.com/thriftbridge/thriftbridge/migrate/jsonsource"
	"github.com/thriftbridge/thriftbridge/migrate/thriftsource"
	"github.com/thriftbridge/thriftbridge/store/badgerstore"
	"github.com/thriftbridge/thriftbridge/store/partition"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// openSource opens --from.
func openSource(ctx context.Context, c *config) (migrate.Source, error) {
	scheme, rest, ok := strings.Cut(c.from, ":")
	if !ok {
		return nil, fmt.Errorf("--from %q: expected thrift://host:port/Keyspace, badger:DIR/Keyspace or json:PATH", c.from)
	}
	switch scheme {
	case "thrift":
		addr, keyspace, err := thriftAddress(c.from)
		if err != nil {
			return nil, err
		}
		src, err := thriftsource.Open(ctx, addr, keyspace, thriftsource.Options{RowPageSize: c.rowPageSize, ColumnPageSize: c.columnPageSize})
		if err != nil {
			return nil, fmt.Errorf("--from %s: %w", c.from, err)
		}
		return src, nil
	case "badger":
		return openBadger(ctx, c, rest)
	case "json":
		if c.schema == "" {
			return nil, fmt.Errorf("--from %s needs --schema FILE (the keyspace's JSON schema)", c.from)
		}
		b, err := os.ReadFile(c.schema)
		if err != nil {
			return nil, fmt.Errorf("--schema: %w", err)
		}
		var ks supercol.KeyspaceDef
		if err := json.Unmarshal(b, &ks); err != nil {
			return nil, fmt.Errorf("--schema %s: %w", c.schema, err)
		}
		var opts []jsonsource.Option
		if now := c.clock(); now != nil {
			opts = append(opts, jsonsource.WithClock(now))
		}
		src, err := jsonsource.Open(ks, rest, opts...)
		if err != nil {
			return nil, fmt.Errorf("--from %s: %w", c.from, err)
		}
		return src, nil
	}
	return nil, fmt.Errorf("--from %q: unknown source %q (thrift, badger or json)", c.from, scheme)
}

// thriftAddress splits thrift://host:port/Keyspace.
func thriftAddress(s string) (addr, keyspace string, err error) {
	rest, ok := strings.CutPrefix(s, "thrift://")
	addr, keyspace, _ = strings.Cut(rest, "/")
	if !ok || addr == "" || keyspace == "" || strings.Contains(keyspace, "/") {
		return "", "", fmt.Errorf("%q: expected thrift://host:port/Keyspace", s)
	}
	if !strings.Contains(addr, ":") {
		addr += ":9160"
	}
	return addr, keyspace, nil
}

// engineSource is an enginesource.Source that owns its engine.
type engineSource struct {
	*enginesource.Source
	engine *badgerstore.Engine
}

func (s engineSource) Close() error {
	return errors.Join(s.Source.Close(), s.engine.Close())
}

// openBadger opens a thriftd data directory read for conversion. The
// store records its partitioner; unless --partitioner names one, each
// known partitioner is tried until the store accepts it.
func openBadger(ctx context.Context, c *config, spec string) (migrate.Source, error) {
	spec = strings.TrimSuffix(spec, "/")
	dir, keyspace := filepath.Dir(spec), filepath.Base(spec)
	if keyspace == "" || keyspace == "." || keyspace == "/" {
		return nil, fmt.Errorf("--from badger:%s: expected badger:DIR/Keyspace", spec)
	}
	// Opening creates a missing store: make sure there is one.
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil {
		return nil, fmt.Errorf("--from badger:%s: %s is not a thriftd data directory: %w", spec, dir, err)
	}
	candidates := []string{"Murmur3Partitioner", "RandomPartitioner", "ByteOrderedPartitioner", "OrderPreservingPartitioner"}
	if c.partitioner != "" {
		candidates = []string{c.partitioner}
	}
	var errs []error
	for _, name := range candidates {
		part, err := partition.ByName(name)
		if err != nil {
			return nil, fmt.Errorf("--partitioner: %w", err)
		}
		// Background tombstone collection stays off: the conversion only
		// reads.
		engine, err := badgerstore.Open(ctx, badgerstore.Options{Dir: dir, Partitioner: part, GCInterval: -1, Logger: slog.New(slog.DiscardHandler), Now: c.clock()})
		if err != nil {
			errs = append(errs, err)
			if c.partitioner == "" && strings.Contains(err.Error(), "cannot be opened with") {
				continue
			}
			return nil, fmt.Errorf("--from badger:%s: %w", spec, err)
		}
		src, err := enginesource.New(engine, keyspace)
		if err != nil {
			engine.Close()
			return nil, fmt.Errorf("--from badger:%s: %w", spec, err)
		}
		src.RowPageSize, src.ColumnPageSize = withDefault(c.rowPageSize, src.RowPageSize), withDefault(c.columnPageSize, src.ColumnPageSize)
		return engineSource{Source: src, engine: engine}, nil
	}
	return nil, fmt.Errorf("--from badger:%s: %w", spec, errors.Join(errs...))
}

func withDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// target is an opened --to.
type target struct {
	keyspace string // "" for a file: the source's name, unless --keyspace
	filePath string
	hosts    []string
}

func parseTarget(c *config) (target, error) {
	switch {
	case strings.HasPrefix(c.to, "file:"):
		path := strings.TrimPrefix(c.to, "file:")
		if path == "" {
			return target{}, fmt.Errorf("--to %q: expected file:OUT.cql", c.to)
		}
		return target{keyspace: c.keyspace, filePath: path}, nil
	case strings.HasPrefix(c.to, "cql:"):
		hosts, keyspace, err := cqlsink.ParseURL(c.to)
		if err != nil {
			return target{}, err
		}
		if c.keyspace != "" && c.keyspace != keyspace {
			return target{}, fmt.Errorf("--keyspace %s contradicts --to %s", c.keyspace, c.to)
		}
		return target{keyspace: keyspace, hosts: hosts}, nil
	}
	return target{}, fmt.Errorf("--to %q: expected cql://host:port/keyspace or file:OUT.cql", c.to)
}

func (c *config) gocqlConsistency() (gocql.Consistency, error) {
	cons, err := gocql.ParseConsistencyWrapper(strings.ToUpper(c.consistency))
	if err != nil {
		return 0, fmt.Errorf("--consistency %q: %w", c.consistency, err)
	}
	return cons, nil
}

// openSink opens the target for writing.
func openSink(ctx context.Context, c *config, t target, log *slog.Logger) (migrate.Sink, error) {
	if t.filePath != "" {
		return migrate.CreateFileSink(t.filePath, c.clock())
	}
	cons, err := c.gocqlConsistency()
	if err != nil {
		return nil, err
	}
	return cqlsink.Connect(ctx, cqlsink.Config{Hosts: t.hosts, Keyspace: t.keyspace, Consistency: cons,
		Concurrency: c.concurrency, Rate: c.rate, BatchSize: c.batchSize, Logger: log})
}
