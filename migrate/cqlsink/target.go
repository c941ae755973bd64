package cqlsink

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// Target reads converted tables back with SELECT, WRITETIME() and TTL().
// It implements migrate.Target.
type Target struct {
	session     *gocql.Session
	consistency gocql.Consistency
	now         func() time.Time
}

var _ migrate.Target = (*Target)(nil)

// OpenTarget connects to the cluster.
func OpenTarget(ctx context.Context, hosts []string, consistency gocql.Consistency) (*Target, error) {
	return OpenTargetConfig(ctx, Config{Hosts: hosts, Consistency: consistency})
}

// OpenTargetConfig connects to the cluster with cfg's hosts, consistency
// (default LOCAL_QUORUM), timeout (default 30 s), login, TLS, local data
// center and clock; the other fields are for a Sink.
func OpenTargetConfig(ctx context.Context, cfg Config) (*Target, error) {
	if cfg.Consistency == 0 {
		cfg.Consistency = gocql.LocalQuorum
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	session, err := newSessionConfig(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Target{session: session, consistency: cfg.Consistency, now: cfg.Now}, nil
}

// Close closes the session.
func (t *Target) Close() error {
	t.session.Close()
	return nil
}

// Partition implements migrate.Target.
func (t *Target) Partition(ctx context.Context, table *supercol.Table, key [][]byte) (migrate.TargetPartition, error) {
	var sel, where []string
	var keyCols, valueCols []int
	for i, c := range table.Columns {
		q := supercol.QuoteIdent(c.Name)
		switch c.Kind {
		case supercol.PartitionKey:
			where = append(where, q+" = ?")
			fallthrough
		case supercol.Clustering:
			keyCols = append(keyCols, i)
			sel = append(sel, q)
		default:
			valueCols = append(valueCols, i)
			sel = append(sel, q)
			if !table.Counter {
				sel = append(sel, "WRITETIME("+q+")", "TTL("+q+")")
			}
		}
	}
	if len(where) != len(key) {
		return migrate.TargetPartition{}, fmt.Errorf("table %s: %d partition-key values for %d columns", table.QualifiedName(), len(key), len(where))
	}
	cql := "SELECT " + strings.Join(sel, ", ") + " FROM " + table.QualifiedName() + " WHERE " + strings.Join(where, " AND ")
	vals := make([]migrate.Value, len(key))
	for i, k := range key {
		vals[i] = migrate.Value{Type: table.Columns[i].Type, Bytes: k}
	}
	part := migrate.TargetPartition{AsOf: t.now()}
	iter := t.session.Query(cql, args(vals)...).Consistency(t.consistency).PageSize(1000).IterContext(ctx)
	dest := make([]rawValue, len(sel))
	ptrs := make([]any, len(sel))
	for i := range dest {
		ptrs[i] = &dest[i]
	}
	npk := len(where)
	for iter.Scan(ptrs...) {
		j := 0
		rowKey := make([][]byte, len(keyCols))
		for i := range keyCols {
			rowKey[i] = append([]byte{}, dest[j].b...)
			j++
		}
		for _, col := range valueCols {
			v := dest[j]
			j++
			var wt, ttl rawValue
			if !table.Counter {
				wt, ttl = dest[j], dest[j+1]
				j += 2
			}
			if v.null {
				continue
			}
			cell := migrate.TargetCell{Key: rowKey, Column: col, Value: append([]byte{}, v.b...)}
			if table.Columns[col].Kind == supercol.Static {
				cell.Key = rowKey[:npk]
			}
			if len(wt.b) == 8 {
				cell.Writetime = int64(binary.BigEndian.Uint64(wt.b))
			}
			if len(ttl.b) == 4 {
				cell.TTL = int32(binary.BigEndian.Uint32(ttl.b))
			}
			part.Cells = append(part.Cells, cell)
		}
	}
	if err := iter.Close(); err != nil {
		return part, fmt.Errorf("read %s: %w", table.QualifiedName(), err)
	}
	return part, nil
}

// Partitions implements migrate.Target.
func (t *Target) Partitions(ctx context.Context, table *supercol.Table, visit func(key [][]byte) error) error {
	var cols []string
	for _, c := range table.Columns {
		if c.Kind == supercol.PartitionKey {
			cols = append(cols, supercol.QuoteIdent(c.Name))
		}
	}
	iter := t.session.Query("SELECT DISTINCT " + strings.Join(cols, ", ") + " FROM " + table.QualifiedName()).
		Consistency(t.consistency).PageSize(1000).IterContext(ctx)
	dest := make([]rawValue, len(cols))
	ptrs := make([]any, len(cols))
	for i := range dest {
		ptrs[i] = &dest[i]
	}
	for iter.Scan(ptrs...) {
		key := make([][]byte, len(cols))
		for i := range dest {
			key[i] = append([]byte{}, dest[i].b...)
		}
		if err := visit(key); err != nil {
			iter.Close()
			return err
		}
	}
	if err := iter.Close(); err != nil {
		return fmt.Errorf("list the partitions of %s: %w", table.QualifiedName(), err)
	}
	return nil
}
