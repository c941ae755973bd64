package conformance

import (
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
)

// A divergence is a behaviour in which thriftd departs from Cassandra 3.11
// on purpose. A test that meets one asks Env.Diverges: on a real Cassandra
// node it then asserts Cassandra's behaviour, on thriftd thriftd's, so both
// halves of the departure stay checked.
type divergence struct {
	cassandra string // what Cassandra 3.11 does
	thriftd   string // what thriftd does instead, and why
	// cluster, when set, says that thriftd over a CQL cluster does what
	// Cassandra does, and why: the cluster enforces its own rule there,
	// so Diverges asserts Cassandra's behaviour on that backend too.
	cluster string
}

// divergences lists every deliberate departure, by the name the tests use.
var divergences = map[string]divergence{
	"ttl-2038": {
		cassandra: "refuses a TTL whose expiry passes 2038-01-19 (CASSANDRA-14092: expiry is a signed 32-bit second count)",
		thriftd:   "stores expiry as unsigned 32-bit seconds and accepts expiries up to 2106; a TTL above 20 years is still refused",
		cluster:   "the cluster refuses the write itself with the same message (Cassandra 4.x, and 5.0 until its storage_compatibility_mode is NONE)",
	},
	"crash-refused": {
		cassandra: "meets an unexpected exception on the request and closes the connection (the client sees EOF)",
		thriftd:   "answers InvalidRequestException with the reason and keeps the connection: a client must never lose its connection to a bad request",
	},
	"super-count-timeout": {
		cassandra: "times out get_count inside a super column when count is below the number of subcolumns",
		thriftd:   "answers min(count, subcolumns)",
	},
	"cql-over-thrift": {
		cassandra: "runs CQL 3 statements sent through execute_cql3_query and prepare_cql3_query",
		thriftd:   "has no CQL engine behind the Thrift port and refuses every CQL call with InvalidRequestException; CQL clients use the cluster that convert writes to",
		cluster:   "thriftd passes CQL 3 through to the cluster and refuses CQL 2 as Cassandra 3.x does (docs/CQL-BACKEND.md)",
	},
	"cql3-tables": {
		cassandra: "serves CQL 3 tables (created through CQL) to Thrift calls",
		thriftd:   "has no CQL 3 tables",
	},
	"exact-splits": {
		cassandra: "estimates describe_splits_ex row counts from sstable index samples (a memtable-only family gives one estimated split)",
		thriftd:   "counts the rows of each split exactly",
	},
	"comparator-change": {
		cassandra: "accepts a comparator or subcomparator change of a Standard family through system_update_column_family and silently keeps the old one; crashes on a Super family's comparator or subcomparator change and on a Standard -> Super change; accepts Super -> Standard and keeps Super",
		thriftd:   "refuses any change of comparator, subcomparator or column type: stored names are encoded for the comparator they were written with",
	},
	"aliases": {
		cassandra: "drops the column_aliases and value_alias of a family that declares column_metadata (a static table in 3.x); key_alias is kept",
		thriftd:   "reports every alias back as given, as 1.2 did: convert names CQL columns after them",
	},
	"paged-slice-count": {
		cassandra: "3.11 takes get_paged_slice's count as a number of rows and returns each row whole",
		thriftd:   "counts columns, as the IDL documents and 1.x-2.x did: a wide row is cut where the count runs out and the next page resumes at its last column",
	},
	"cas-absent-column": {
		cassandra: "3.11 never applies a cas that expects a column with no value while the row holds other columns, and reports no current values",
		thriftd:   "takes an expected column with no value as 'this column is absent', the only way the API can say it",
	},
	"multislice-reversed": {
		cassandra: "3.11's reversed get_multi_slice loses its bounds: the slice (f, a) gives e..b, the slices (f, e), (c, a) give only b",
		thriftd:   "reads reversed slices with inclusive bounds, as forward ones and get_slice do",
	},
	"index-predicate": {
		cassandra: "3.11's get_indexed_slices (and get_range_slices with a row_filter) loses rows when the slice predicate leaves out a column of the index clause: with another expression's column left out it returns no row; with the indexed column left out, only the declared columns (column_metadata) the predicate selects, and no row where it selects none",
		thriftd:   "filters on every column of the clause whatever the predicate selects, as 2.1 did, and returns each matching row with the columns the predicate selects",
	},
	"added-column-metadata": {
		cassandra: "3.11 describes the column_metadata that system_update_column_family adds, but in a family created with none it neither validates the column's values nor finds a row through its index; in a family created with column_metadata, the added column's index misses the rows written before the update (they stay readable)",
		thriftd:   "validates and indexes an added column as one declared at creation, the cells written before the update included, as 2.1 did",
	},
	"drop-column-metadata": {
		cassandra: "3.11 turns the removal of a column_metadata entry into a CQL column drop: the cells written under that name before vanish",
		thriftd:   "keeps the cells, as 1.x and 2.x did, where column_metadata only declared a validator and an index",
	},
	"static-reversed": {
		cassandra: "3.11 returns a reversed slice of a family with column_metadata out of order (declared columns first): age, name, email, state for age < email < name < state",
		thriftd:   "returns the reversed comparator order",
	},
	"super-internal-columns": {
		cassandra: "3.11 describes a Super family with two internal column_metadata entries: an empty name typed MapType(subcomparator, default validator) and 'value'",
		thriftd:   "describes only the columns a client declared; clients that decode column_metadata names with the comparator (helenus) break on the empty name",
	},
	"cf-id": {
		cassandra: "3.11 leaves CfDef.id unset in describe_keyspace",
		thriftd:   "reports an id, as Cassandra 1.x and 2.x did, for clients that read it",
	},
}

// Diverges reports whether the test runs on a real Cassandra node, or on
// thriftd over a CQL cluster that enforces Cassandra's rule itself, where
// the named divergence means Cassandra's behaviour is the one to assert.
// It fails the test for a name missing from the list above.
func (e *Env) Diverges(name string) bool {
	e.T.Helper()
	return divergesOn(e.T, e.Target, name)
}

func divergesOn(t testing.TB, target Target, name string) bool {
	t.Helper()
	d, ok := divergences[name]
	if !ok {
		t.Fatalf("unknown divergence %q (divergences.go)", name)
	}
	switch {
	case target.Cassandra:
		t.Logf("divergence %s: asserting Cassandra's behaviour: %s", name, d.cassandra)
		return true
	case target.Backend != nil && d.cluster != "":
		t.Logf("divergence %s: asserting Cassandra's behaviour on thriftd's CQL backend: %s", name, d.cluster)
		return true
	}
	t.Logf("divergence %s: asserting thriftd's behaviour: %s", name, d.thriftd)
	return false
}

// A backend divergence is a behaviour in which thriftd serving from a CQL
// cluster (store/cqlstore) departs from Cassandra 3.11 and from thriftd on
// its embedded store, because the cluster's CQL tables cannot do
// otherwise. Most follow from a capability the backend's engine lacks
// (store.Capabilities); docs/CQL-BACKEND.md describes each. A test that
// meets one asks Env.OnBackend: on that backend it asserts the backend's
// behaviour, elsewhere the common one.
type backendDivergence struct {
	// lacks reports whether an engine of these capabilities diverges;
	// nil: every CQL backend does.
	lacks  func(store.Capabilities) bool
	common string // what Cassandra and thriftd on its embedded store do
	cql    string // what thriftd over a CQL cluster does instead, and why
}

// backendDivergences lists every departure of the CQL backend, by the
// name the tests use.
var backendDivergences = map[string]backendDivergence{
	"remaining-ttl": {
		lacks:  func(c store.Capabilities) bool { return !c.OriginalTTL },
		common: "a column's ttl reads back as the TTL it was written with",
		cql:    "reads back as the seconds left (CQL's TTL()): a cluster keeps no original TTL; the expiry itself is exact",
	},
	"range-ghosts": {
		lacks:  func(c store.Capabilities) bool { return !c.RangeGhosts },
		common: "get_range_slices lists a deleted row, until its tombstones are purged, with no columns (a range ghost)",
		cql:    "lists only rows with live cells: SELECT DISTINCT on the cluster does not return a partition of tombstones",
	},
	"composite-prefix-names": {
		common: "a CompositeType name of fewer components than the comparator is a name of its own, before every name it is a prefix of",
		cql:    "a name's components are clustering columns, and CQL has no null clustering value: missing trailing components are stored empty, so (a) and (a, '') are one name, read back with every component",
	},
	"size-estimates": {
		common: "describe_splits cuts the range from what the node itself holds: sstable index samples on Cassandra, an exact count of the rows on thriftd's store",
		cql:    "cuts the cluster's size estimates (system.size_estimates, which each node refreshes every few minutes from its sstables): a family the nodes have not estimated yet is one split of 0 rows",
	},
	"value-column-type": {
		common: "system_update_column_family accepts any new validator (of a column without an index)",
		cql:    "the family's CQL value column keeps the type it was created with (CQL cannot change a column's type): a change whose values it cannot hold is refused with InvalidRequestException",
	},
}

// OnBackend reports whether the test runs on thriftd over a CQL cluster
// whose engine meets the named backend divergence: the backend's
// behaviour is then the one to assert. It fails the test for a name
// missing from the list above.
func (e *Env) OnBackend(name string) bool {
	e.T.Helper()
	return onBackend(e.T, e.Target, name)
}

func onBackend(t testing.TB, target Target, name string) bool {
	t.Helper()
	d, ok := backendDivergences[name]
	if !ok {
		t.Fatalf("unknown backend divergence %q (divergences.go)", name)
	}
	if target.Backend != nil && (d.lacks == nil || d.lacks(*target.Backend)) {
		t.Logf("backend divergence %s: asserting the CQL backend's behaviour: %s", name, d.cql)
		return true
	}
	t.Logf("backend divergence %s: asserting the common behaviour: %s", name, d.common)
	return false
}
