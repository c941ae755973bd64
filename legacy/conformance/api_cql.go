package conformance

import (
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

func runCQLTests(t *testing.T, target Target) {
	t.Run("Refused", func(t *testing.T) {
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", standardCF("Standard1"))
		expectOK(t, "set_cql_version", a.C.SetCqlVersion(Ctx(t), "3.0.0"))
		query := b("SELECT * FROM \"Standard1\"")
		none := cassandra.Compression_NONE
		calls := map[string]func() error{
			"execute_cql_query":           func() error { _, err := a.C.ExecuteCqlQuery(Ctx(t), query, none); return err },
			"prepare_cql_query":           func() error { _, err := a.C.PrepareCqlQuery(Ctx(t), query, none); return err },
			"execute_prepared_cql_query":  func() error { _, err := a.C.ExecutePreparedCqlQuery(Ctx(t), 1, nil); return err },
			"execute_cql3_query":          func() error { _, err := a.C.ExecuteCql3Query(Ctx(t), query, none, one); return err },
			"prepare_cql3_query":          func() error { _, err := a.C.PrepareCql3Query(Ctx(t), query, none); return err },
			"execute_prepared_cql3_query": func() error { _, err := a.C.ExecutePreparedCql3Query(Ctx(t), 1, nil, one); return err },
		}
		if a.Diverges("cql-over-thrift") {
			for _, name := range []string{"execute_cql_query", "prepare_cql_query", "execute_prepared_cql_query"} {
				expectIRE(t, name, calls[name](), "CQL2 has been removed in Cassandra 3.0")
			}
			expectOK(t, "execute_cql3_query", calls["execute_cql3_query"]())
			expectOK(t, "prepare_cql3_query", calls["prepare_cql3_query"]())
			expectIRE(t, "execute_prepared_cql3_query of an unknown id", calls["execute_prepared_cql3_query"](), "Prepared query with ID 1 not found")
			return
		}
		for name, call := range calls {
			err := call()
			expectIRE(t, name, err, "CQL")
			if ire, ok := err.(*cassandra.InvalidRequestException); ok && !strings.Contains(ire.Why, "not supported") {
				t.Errorf("%s: reason %q does not say CQL is not supported", name, ire.Why)
			}
		}
		// The connection and its keyspace survive the refusals.
		a.insert("k", parent("Standard1"), col(b("c"), b("v"), 1))
		a.mustGet("k", colPath("Standard1", b("c")))
	})
}
