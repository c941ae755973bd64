package legacy

import (
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// The system keyspaces of Cassandra 3.x, as describe_keyspaces lists
// them. thriftd keeps no data in them: they hold no families a Thrift
// client can read, they cannot be modified, and set_keyspace accepts them.
var systemKeyspaceDefs = []struct {
	name     string
	strategy string
	options  map[string]string
}{
	{"system", locatorPackage + "LocalStrategy", map[string]string{}},
	{"system_auth", locatorPackage + "SimpleStrategy", map[string]string{"replication_factor": "1"}},
	{"system_distributed", locatorPackage + "SimpleStrategy", map[string]string{"replication_factor": "3"}},
	{"system_schema", locatorPackage + "LocalStrategy", map[string]string{}},
	{"system_traces", locatorPackage + "SimpleStrategy", map[string]string{"replication_factor": "2"}},
}

// systemKeyspaceDef describes a system keyspace, or nil.
func systemKeyspaceDef(name string) *cassandra.KsDef {
	for _, ks := range systemKeyspaceDefs {
		if ks.name == name {
			opts := make(map[string]string, len(ks.options))
			for k, v := range ks.options {
				opts[k] = v
			}
			return &cassandra.KsDef{Name: ks.name, StrategyClass: ks.strategy, StrategyOptions: opts, CfDefs: []*cassandra.CfDef{}, DurableWrites: true}
		}
	}
	return nil
}
