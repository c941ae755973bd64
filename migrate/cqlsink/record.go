package cqlsink

import (
	"context"
	"fmt"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/store/cqlstore"
)

var _ migrate.MetadataSink = (*Sink)(nil)

// RecordMetadata implements migrate.MetadataSink: once the data written so
// far is acknowledged, the keyspace and each family's legacy definition
// and shape go into thriftd's metadata keyspace (created, with the target
// keyspace's replication, if needed), through cqlstore's own encoder.
func (s *Sink) RecordMetadata(ctx context.Context, schema *migrate.Schema) error {
	if err := s.Flush(ctx); err != nil {
		return err
	}
	ks, fams, err := schema.Catalog()
	if err != nil {
		return err
	}
	if err := cqlstore.RecordKeyspace(ctx, s.session, schema.MetaKeyspaceOr(), schema.ReplicationOr(), schema.Keyspace, ks, fams); err != nil {
		return fmt.Errorf("%s: %w", schema.MetaKeyspaceOr(), err)
	}
	return nil
}
