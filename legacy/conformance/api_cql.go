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
