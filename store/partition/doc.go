// Package partition implements Cassandra's partitioners: Murmur3Partitioner
// (with the sign-extension quirk of Cassandra's MurmurHash3), RandomPartitioner,
// ByteOrderedPartitioner and OrderPreservingPartitioner. A partitioner maps a
// row key to its token and to the storage prefix under which the row's cells
// are kept, so that rows iterate in (token, key) order exactly as Cassandra's
// DecoratedKey orders them.
package partition
