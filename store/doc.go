// Package store defines the storage engine behind thriftd: the data model of
// legacy Cassandra column families (rows of cells, optionally grouped in super
// columns), the schema catalog, mutations and slice queries, and the Engine
// interface a backend implements. The Badger backend lives in
// store/badgerstore; nothing outside store/ imports a backend library.
//
// The model follows Cassandra: a cell carries a client timestamp and an
// optional TTL; the higher timestamp wins, at equal timestamps a deletion
// wins, then the greater value. Row, super column and cell deletions shadow
// every write with a timestamp at or below theirs.
package store
