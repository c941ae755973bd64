// Package store defines the storage engine behind thriftd: the data model of
// legacy Cassandra column families (rows of cells, optionally grouped in super
// columns), the schema catalog, mutations, slice and scan queries, row
// filters and write conditions, and the Engine interface a backend
// implements. The contract is backend-neutral: queries, filters and
// conditions are values a backend either evaluates itself or translates
// (into CQL, for a backend over a cluster), a backend declares the parts of
// the contract it lacks (Capabilities), and store/enginetest is the test
// suite every backend runs. The Badger backend lives in store/badgerstore;
// nothing outside store/ imports a backend library.
//
// The model follows Cassandra: a cell carries a client timestamp and an
// optional TTL; the higher timestamp wins, at equal timestamps a deletion
// wins, then the greater value. Row, super column and cell deletions shadow
// every write with a timestamp at or below theirs.
package store
