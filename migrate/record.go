package migrate

import (
	"context"
	"fmt"
	"strings"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/cqlstore"
)

// MetadataSink is a sink that records the converted keyspace in thriftd's
// catalog (the metadata keyspace of its cluster backend, see
// cqlstore.RecordKeyspace), so that thriftd --backend cql:// serves the
// converted tables as the legacy keyspace they came from. Convert calls it
// once every family is written, WriteSchema once the tables exist.
type MetadataSink interface {
	Sink
	RecordMetadata(ctx context.Context, schema *Schema) error
}

// Catalog is the keyspace definition and the family records of a schema,
// as cqlstore keeps them: the legacy keyspace under its source name, each
// family's legacy definition and the table it maps onto.
func (s *Schema) Catalog() (store.KeyspaceDef, []cqlstore.FamilyRecord, error) {
	repl := s.Replication
	if repl == "" {
		repl = DefaultReplication
	}
	name := s.SourceKeyspace
	if name == "" {
		name = s.Keyspace
	}
	ks, err := cqlstore.LegacyKeyspaceDef(name, repl)
	if err != nil {
		return ks, nil, fmt.Errorf("keyspace %s: %w", name, err)
	}
	fams := make([]cqlstore.FamilyRecord, 0, len(s.Mappings))
	for _, m := range s.Mappings {
		def, err := cqlstore.LegacyTableDef(s.Keyspace, name, m.Family.Def)
		if err != nil {
			return ks, nil, err
		}
		fams = append(fams, cqlstore.FamilyRecord{Def: def, Mapping: m})
	}
	return ks, fams, nil
}

// MetaKeyspaceOr is the schema's metadata keyspace, or cqlstore's default.
func (s *Schema) MetaKeyspaceOr() string {
	if s.MetaKeyspace == "" {
		return cqlstore.DefaultMetaKeyspace
	}
	return s.MetaKeyspace
}

// ReplicationOr is the schema's replication map, or DefaultReplication.
func (s *Schema) ReplicationOr() string {
	if s.Replication == "" {
		return DefaultReplication
	}
	return s.Replication
}

// RecordMetadata implements MetadataSink: the catalog rows go at the end
// of the script, as INSERT statements into the metadata keyspace (created
// if needed), so that a script applied with cqlsh is served by thriftd.
func (s *FileSink) RecordMetadata(ctx context.Context, schema *Schema) error {
	ks, fams, err := schema.Catalog()
	if err != nil {
		return err
	}
	stmts, err := cqlstore.MetadataCQL(schema.MetaKeyspaceOr(), schema.ReplicationOr(), schema.Keyspace, ks, fams)
	if err != nil {
		return err
	}
	s.buf = append(s.buf[:0], catalogComment...)
	for _, st := range stmts {
		s.buf = append(s.buf, st...)
		s.buf = append(s.buf, ";\n"...)
	}
	return s.put(s.buf)
}

// catalogComment introduces the catalog statements of a script.
const catalogComment = "-- thriftd's catalog: the legacy definitions of the converted families (thriftd --backend cql://)\n"

// isCatalogInsert reports whether a script statement writes the catalog
// (metadata keyspace) rather than a converted table.
func isCatalogInsert(text string) bool {
	for _, t := range []string{".keyspaces (keyspace_name, def) VALUES (", ".families (keyspace_name, family_name, def, shape) VALUES ("} {
		if strings.HasPrefix(text, "INSERT INTO ") && strings.Contains(text, t) {
			return true
		}
	}
	return false
}
