// Package partition implements Cassandra's partitioners: Murmur3Partitioner
// (with the sign-extension quirk of Cassandra's MurmurHash3), RandomPartitioner,
// ByteOrderedPartitioner and OrderPreservingPartitioner. A partitioner maps a
// row key to its token and to the storage prefix under which the row's cells
// are kept, so that rows iterate in (token, key) order exactly as Cassandra's
// DecoratedKey orders them.
//
// # Row prefixes
//
// AppendRowKey writes:
//
//	Murmur3Partitioner          token (8 bytes) | escaped key
//	RandomPartitioner           token (16 bytes) | escaped key
//	ByteOrderedPartitioner      escaped key (the key is the token)
//	OrderPreservingPartitioner  escaped token (UTF-16BE) | escaped key
//
// Escaping maps 0x00 to 0x00 0xFF and 0xFF to 0xFF 0x00 and ends a value
// with 0x00 0x01: it preserves byte order, makes the prefix self-delimiting,
// and never starts with 0xFF 0xFF, so that bytes after a complete prefix can
// bound every row written after it.
//
// # Token bounds
//
// AppendTokenBound(t, inclusive) is a byte string b such that a row's
// prefix sorts at or after b exactly when the row's token is >= t
// (inclusive) or > t (exclusive):
//
//   - fixed-width tokens: t itself, or its successor; the largest token has
//     none, and its exclusive bound is t followed by 0xFF 0xFF;
//   - escaped tokens: escaped t with its end marker 0x00 0x01, or with
//     0x00 0x02 in its place. Appending 0xFF to the encoded token would not
//     do: rows of t whose key starts with 0xFF, or tokens extending t with a
//     0x00 byte, land on the wrong side.
//
// The minimum token bounds nothing: both bounds are empty.
package partition
