package legacy

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

const locatorPackage = "org.apache.cassandra.locator."

// validName is Cassandra's rule for keyspace and family names.
var validName = regexp.MustCompile(`^\w{1,48}$`)

// isSystemKeyspace reports whether a keyspace name is one of the system
// keyspaces, which clients may not create, drop or modify.
func isSystemKeyspace(name string) bool {
	return systemKeyspaceDef(strings.ToLower(name)) != nil
}

// knownStrategies are the replication strategies a keyspace may name.
var knownStrategies = map[string]bool{
	locatorPackage + "SimpleStrategy":             true,
	locatorPackage + "NetworkTopologyStrategy":    true,
	locatorPackage + "OldNetworkTopologyStrategy": true,
	locatorPackage + "LocalStrategy":              true,
}

// keyspaceDefFromThrift validates a KsDef as Cassandra does and returns
// its definition (the families are converted separately).
func keyspaceDefFromThrift(ks *cassandra.KsDef) (store.KeyspaceDef, error) {
	class := ks.StrategyClass
	if !strings.Contains(class, ".") {
		class = locatorPackage + class
	}
	if !knownStrategies[class] {
		return store.KeyspaceDef{}, iref("Unable to find replication strategy class '%s'", class)
	}
	if class == locatorPackage+"LocalStrategy" {
		return store.KeyspaceDef{}, ire("Unable to use given strategy class: LocalStrategy is reserved for internal use.")
	}
	opts := make(map[string]string, len(ks.StrategyOptions)+1)
	for k, v := range ks.StrategyOptions {
		opts[k] = v
	}
	// Old clients give the replication factor in the deprecated field.
	if ks.ReplicationFactor != nil {
		if _, ok := opts["replication_factor"]; !ok {
			opts["replication_factor"] = strconv.Itoa(int(*ks.ReplicationFactor))
		}
	}
	if !validName.MatchString(ks.Name) {
		return store.KeyspaceDef{}, iref("Keyspace name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"%s\")", ks.Name)
	}
	if err := validateStrategyOptions(ks.Name, class, opts); err != nil {
		return store.KeyspaceDef{}, err
	}
	return store.KeyspaceDef{Name: ks.Name, StrategyClass: class, StrategyOptions: opts, DurableWrites: ks.DurableWrites}, nil
}

func validateStrategyOptions(keyspace, class string, opts map[string]string) error {
	short := strings.TrimPrefix(class, locatorPackage)
	switch short {
	case "SimpleStrategy":
		rf, ok := opts["replication_factor"]
		if !ok {
			return ire("SimpleStrategy requires a replication_factor strategy option.")
		}
		if err := validateReplicationFactor(rf); err != nil {
			return err
		}
		for _, k := range sortedKeys(opts) {
			if k != "replication_factor" {
				return iref("Unrecognized strategy option {%s} passed to SimpleStrategy for keyspace %s", k, keyspace)
			}
		}
	case "NetworkTopologyStrategy", "OldNetworkTopologyStrategy":
		for _, dc := range sortedKeys(opts) {
			if err := validateReplicationFactor(opts[dc]); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateReplicationFactor(rf string) error {
	n, err := strconv.Atoi(rf)
	if err != nil {
		return iref("Replication factor must be numeric; found %s", rf)
	}
	if n < 0 {
		return iref("Replication factor must be non-negative; found %s", rf)
	}
	return nil
}

// keyspaceDefToThrift describes a keyspace with its families.
func keyspaceDefToThrift(ks *store.Keyspace) *cassandra.KsDef {
	out := &cassandra.KsDef{
		Name:            ks.Def.Name,
		StrategyClass:   ks.Def.StrategyClass,
		StrategyOptions: ks.Def.StrategyOptions,
		DurableWrites:   ks.Def.DurableWrites,
		CfDefs:          []*cassandra.CfDef{},
	}
	if out.StrategyOptions == nil {
		out.StrategyOptions = map[string]string{}
	}
	if rf, ok := ks.Def.StrategyOptions["replication_factor"]; ok {
		if n, err := strconv.Atoi(rf); err == nil {
			v := int32(n)
			out.ReplicationFactor = &v
		}
	}
	names := ks.TableNames()
	sort.Strings(names)
	for _, n := range names {
		out.CfDefs = append(out.CfDefs, cfDefToThrift(ks.Tables[n]))
	}
	return out
}
