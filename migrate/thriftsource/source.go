package thriftsource

import (
	"context"
	"fmt"
	"time"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/store/partition"
	"github.com/thriftbridge/thriftbridge/supercol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Default page sizes.
const (
	DefaultRowPageSize    = 1000
	DefaultColumnPageSize = 1000
	// DefaultTimeout bounds connecting and each call.
	DefaultTimeout = 60 * time.Second
)

// Options tunes paging.
type Options struct {
	// RowPageSize is the number of rows per get_range_slices call
	// (default 1000).
	RowPageSize int
	// ColumnPageSize is the number of columns (super columns at the super
	// level of a Super family) per slice call (default 1000).
	ColumnPageSize int
	// Consistency is the consistency level of every read (default ONE).
	Consistency cassandra.ConsistencyLevel
	// ConnOptions holds the login, TLS and timeout of the connection.
	ConnOptions
}

func (o Options) withDefaults() Options {
	if o.RowPageSize <= 0 {
		o.RowPageSize = DefaultRowPageSize
	}
	if o.ColumnPageSize <= 0 {
		o.ColumnPageSize = DefaultColumnPageSize
	}
	if o.Consistency == 0 {
		o.Consistency = cassandra.ConsistencyLevel_ONE
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// Source reads a keyspace over Thrift. Its methods may be called from
// several goroutines; calls share one connection, one at a time.
type Source struct {
	addr     string
	keyspace string
	opts     Options
	conn     *conn
	part     partition.Partitioner
}

var _ migrate.Source = (*Source)(nil)

// Open connects to addr (host:port), selects keyspace and learns the
// cluster's partitioner.
func Open(ctx context.Context, addr, keyspace string, opts Options) (*Source, error) {
	opts = opts.withDefaults()
	c, err := dial(ctx, addr, opts.ConnOptions)
	if err != nil {
		return nil, fmt.Errorf("thrift source %s: %w", addr, err)
	}
	s := &Source{addr: addr, keyspace: keyspace, opts: opts, conn: c}
	var partName string
	err = c.call(ctx, func(ctx context.Context, client *cassandra.CassandraClient) error {
		if err := client.SetKeyspace(ctx, keyspace); err != nil {
			return fmt.Errorf("set_keyspace %s: %w", keyspace, describeError(err))
		}
		// Cassandra lets set_keyspace through without a login; this
		// call does not.
		if _, err := client.DescribeKeyspace(ctx, keyspace); err != nil {
			return fmt.Errorf("describe_keyspace %s: %w", keyspace, describeError(err))
		}
		var err error
		if partName, err = client.DescribePartitioner(ctx); err != nil {
			return fmt.Errorf("describe_partitioner: %w", describeError(err))
		}
		return nil
	})
	if err == nil {
		s.part, err = partition.ByName(partName)
	}
	if err != nil {
		_ = c.close()
		return nil, fmt.Errorf("thrift source %s: %w", addr, c.explain(err))
	}
	return s, nil
}

// Partitioner is the cluster's partitioner, whose token order Scan
// follows.
func (s *Source) Partitioner() partition.Partitioner { return s.part }

// Keyspace describes the keyspace from describe_keyspace: type names as
// the server reports them (class names), declared column names in the
// string form of the comparator (subcomparator in a Super family). What
// Cassandra 2.0 to 3.11 describe differently from thriftd is undone (see
// schema.go), and the names of the key, clustering and value columns of
// tables created through CQL come from the CQL schema.
func (s *Source) Keyspace(ctx context.Context) (supercol.KeyspaceDef, error) {
	ks, err := s.describe(ctx)
	if err != nil {
		return supercol.KeyspaceDef{}, err
	}
	tables, err := s.readCQLSchema(ctx)
	if err != nil {
		return supercol.KeyspaceDef{}, fmt.Errorf("thrift source %s: keyspace %s: %w", s.addr, ks.Name, err)
	}
	out := supercol.KeyspaceDef{Name: ks.Name}
	for _, cf := range ks.CfDefs {
		def, err := familyDef(cf, tables != nil)
		if err != nil {
			return supercol.KeyspaceDef{}, fmt.Errorf("thrift source %s: keyspace %s: %w", s.addr, ks.Name, err)
		}
		if t := tables[cf.Name]; t != nil {
			withCQLNames(&def, t)
		}
		out.Families = append(out.Families, def)
	}
	return out, nil
}

func (s *Source) describe(ctx context.Context) (*cassandra.KsDef, error) {
	var ks *cassandra.KsDef
	err := s.conn.call(ctx, func(ctx context.Context, client *cassandra.CassandraClient) error {
		var err error
		ks, err = client.DescribeKeyspace(ctx, s.keyspace)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("thrift source %s: describe_keyspace %s: %w", s.addr, s.keyspace, describeError(err))
	}
	return ks, nil
}

// Close closes the connection.
func (s *Source) Close() error { return s.conn.close() }
