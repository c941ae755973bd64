// Package marshal implements Cassandra's marshal types (the comparators and
// validators of org.apache.cassandra.db.marshal): parsing their names, short
// or fully qualified and nested, validating values with Cassandra's error
// texts, comparing exactly as Cassandra compares, encoding values into
// order-preserving, prefix-free byte keys for the storage engine, and
// rendering values as text and as CQL literals.
//
// The central invariant, held by a fuzz test, is that for any two valid
// values a and b of a type T:
//
//	sign(T.Compare(a, b)) == sign(bytes.Compare(T.AppendKey(nil, a), T.AppendKey(nil, b)))
//
// so that iterating a sorted key-value store yields comparator order.
package marshal
