package thriftsource

import (
	"context"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// LoadFixture loads m into the server at addr under the model's keyspace
// name: fixtures.Model.WriteThrift over Call.
//
// Transitional: thriftsource is not meant to know the fixtures, and this
// goes once migrate/enginesource's test, its last caller, calls
// WriteThrift itself.
func LoadFixture(ctx context.Context, addr string, m *fixtures.Model) error {
	return Call(ctx, addr, ConnOptions{}, func(ctx context.Context, client *cassandra.CassandraClient) error {
		return m.WriteThrift(ctx, client, "")
	})
}
