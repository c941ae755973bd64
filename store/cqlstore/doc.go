// Package cqlstore is a store.Engine over a Cassandra (4.x, 5.x, 3.11) or
// ScyllaDB cluster, through the gocql driver
// (github.com/apache/cassandra-gocql-driver/v2): thriftd serving the Thrift
// API from the very CQL tables that convert writes. Everything the engine
// does differently from the embedded Badger engine is written down here.
//
// # Tables
//
// A legacy family lives in the compact table that convert creates for it:
// supercol.Plan with supercol.ShapeCompact, so the two never disagree. The
// row key is the partition key (key, or key1..keyN for a CompositeType key
// validator), the column name the clustering column column1 (column1..N
// for a CompositeType comparator; a ReversedType is a DESC clustering
// column of its base type), a Super family's super column name first and
// the subcolumn name next, and one value column (counter in counter
// families; blob when declared columns have other validators). Key, name
// and value bytes travel as they are: every legacy marshal type serialises
// as its CQL counterpart (CompositeType and DynamicCompositeType columns,
// custom types in CQL, as opaque bytes). A CompositeType name of fewer
// components than its comparator is stored with the missing components
// empty (CQL has no null clustering value) and every name is read back
// without empty trailing components: ("a") and ("a", "") are one cell,
// read back as ("a"). A legacy keyspace K is the CQL keyspace
// Options.KeyspacePrefix+K (no prefix by default), its family F the CQL
// table F, both quoted as needed.
//
// A family convert wrote to a pivot, static or mixed table (its recorded
// shape) is served from that table (shape_*.go): the table is planned
// again from the definition and the legacy names its named columns hold,
// and supercol.Mapping places each Thrift name in its CQL column (a
// typed column per named subcolumn or declared column, the compact part
// of a mixed table for the others). Its rows are read whole and sliced by
// the engine; named columns are written with UPDATE ... SET col and
// deleted with DELETE col; a name the table has no column for is refused
// with a *store.CQLRefusedError, never dropped. Conditional writes on a
// static table (conditions apply to Standard families only) put their
// conditions on named columns on the first statement of the transaction,
// since every statement addresses the partition's one row (pure) or its
// static columns (mixed): an expected named column need not be among the
// updates, and RowEmpty requires every named column null
// (shape_cond.go). RecordKeyspace is the encoder of the catalog rows, which
// convert uses to record a converted keyspace.
//
// # Schema and catalog
//
// Schema calls are CQL DDL, each followed by a wait for schema agreement.
// The legacy definition of each family (store.TableDef: comparators,
// validators, options, column metadata) and the layout of its CQL table
// (the shape, as created) are rows of the metadata keyspace
// (Options.MetaKeyspace, default thriftbridge_meta): keyspaces(keyspace_name,
// def) and families(keyspace_name, family_name, def, shape), def being
// JSON. Every thriftd instance builds its Catalog from them: after its own
// schema changes, every Options.RefreshInterval (10s) and on Refresh. The
// catalog version is a name-based UUID of their content (stable across
// restarts, changed by every change; family ids are random at creation).
// Concurrent schema changes by several instances are not serialised
// across instances.
//
// Family options other than the types (compaction, caching, gc grace, ...)
// are kept in the definition only; the CQL table keeps the cluster's
// defaults. UpdateTable keeps the CQL table as it is: it accepts a new
// definition whose compact table has the same primary key and a value
// column the existing one can hold (a blob holds anything; a key column of
// blob accepts a new key validator), and refuses the rest. CQL cannot add
// clustering columns nor, since Cassandra 4.0, change a column's type, so
// every comparator or subcomparator change is refused with an
// *store.IncompatibleChangeError (Capabilities.RetypeNames false). A
// converted table keeps its columns too, but may gain a typed column for
// a newly declared name where no compact part can hold cells of that name
// (shape_change.go).
//
// # Writes
//
// A put is INSERT ... USING TIMESTAMP t [AND TTL n]; a cell deletion DELETE
// ... USING TIMESTAMP t on the full primary key; a super column deletion a
// DELETE on its clustering prefix; a row deletion a partition DELETE; a
// range deletion a range DELETE on the clustering column, over
// CompositeType names with tuple bounds ((c1, c2) >= (?, ?)) that the
// end-of-component byte of each bound's last component places. Statements
// of counter tables carry no timestamp (CQL refuses one). A statement the
// cluster refuses as invalid (a TTL past its 2038 cap, ...) is a
// *store.CQLRefusedError with its reason. Each row mutation is one batch on
// its partition, atomic and isolated in Cassandra (a lone statement goes
// alone); an atomic store.Batch is one logged batch, applied all or nothing
// but visible piecemeal (IsolatedBatches false), and refuses counters as
// Cassandra's atomic_batch_mutate did. Counter adds are UPDATE ... SET
// value = value + d in counter batches; as on any Cassandra cluster, adds
// after a deletion may be lost until it is purged (CounterRestart false).
//
// # Conditional writes
//
// ApplyIf is a lightweight transaction. CQL forbids USING TIMESTAMP with
// IF, so an applied write takes the transaction's timestamp, as Cassandra's
// own Thrift cas did; an IF clause checks only the CQL row its statement
// writes, so on a compact table (or the compact part of a mixed one) each
// expected column must be a cell the mutation puts (UPDATE
// ... IF value = v, or = null for Absent) or deletes, and others are
// refused with ErrUnsupportedCondition, a *store.CQLRefusedError
// (Capabilities.FreeConditions false). RowEmpty with operations is a
// SERIAL read of the row's first cell, then the puts IF value = null: a
// cell the mutation writes, written meanwhile, fails it, but one it does
// not write, written meanwhile by another instance, goes unseen (a
// compact table has no partition-level condition). A condition without
// operations is a SERIAL read evaluated by Condition.Holds, which is
// exact. When a
// write is not applied, current is a SERIAL read of the expected columns
// made right after; when it is, current holds the expected values (their
// timestamps are not known: 0). The conditional writes of one row by one
// engine take turns (striped locks), so that its own callers never make
// Paxos rounds contend; writers in other thriftd instances still can, and
// a round that keeps losing ends in store.ErrTimeout, as on Cassandra.
//
// # Reads
//
// Slice and Count are one SELECT of the clustering columns, the value,
// writetime(value) and ttl(value) of the partition (of the super column's
// clustering prefix inside a super column): names as IN, a range as
// clustering bounds (swapped on DESC columns), reversed as ORDER BY, count
// as LIMIT. What CQL cannot restrict exactly (CompositeType names with
// their end-of-component bounds, several ranges, super column counts) is
// read in order and checked against the comparator's key bounds in the
// engine, stopping as soon as the count is reached. Count reads what
// Slice would. A cell's TTL is what is left of it at the read (CQL's
// TTL(); OriginalTTL false) and ExpiresAt is the read time plus that, to
// the second.
//
// Scan lists the partitions of its range with SELECT DISTINCT in token
// order (token(key) > / >= / <= bounds, key bounds refined by key bytes
// within their token), a page at a time through the driver's page state
// with no iterator held open while rows are visited, then reads each row's
// slice, several rows' slices at once when there is no filter and no cell
// budget. A scan of whole rows (no filter, no budget, a Standard family of
// simple names, the first Count cells of each row) is one statement
// instead, the cells of the range in token order PER PARTITION LIMIT
// Count, a page of cells at a time. Rows holding only tombstones are not
// visited (RangeGhosts false). Filters are evaluated by the engine on
// each row's filtered columns: the compact table has no KEYS index
// (IndexedScans false). The cluster's partitioner is served: Murmur3Partitioner,
// RandomPartitioner or ByteOrderedPartitioner (OrderedPartitioners on the
// last), tokens bound and read in the CQL form of token()
// (partition.CQLToken). Open fails with ErrPartitioner on
// OrderPreservingPartitioner or a partitioner other than
// Options.Partitioner.
//
// # Consistency and failures
//
// Every read and write runs at the level its context carries
// (store.ConsistencyFrom), Options.Consistency (QUORUM by default) for
// none; a read at ANY reads at ONE (the cluster refuses ANY for reads). A
// lightweight transaction commits at that level and runs its Paxos round
// at store.SerialConsistencyFrom (SERIAL by default); a read at SERIAL or
// LOCAL_SERIAL is a serial read. Schema and metadata statements run at
// Options.Consistency. Too few live replicas, or no node reachable at all
// (the driver sends nothing), is an error wrapping store.ErrUnavailable; a replica's read or write timeout, a conditional
// write of unknown outcome, a connection closed under the request, no
// response in time or the context's deadline one wrapping store.ErrTimeout.
// When the driver has lost every node it reconnects on its own; thriftd
// serves again once a node is back. Timestamps, TTLs and LIMITs are bind
// markers, so the driver prepares each statement shape once. Requests go token-aware to a replica of
// their partition, in Options.LocalDC first when it is set.
package cqlstore
