// Package badgerstore is the embedded storage engine of thriftd, on Badger.
//
// # Key layout
//
// Every Badger key starts with a namespace byte:
//
//	0x01 'k' <keyspace name>                 schema: one JSON document per keyspace
//	0x01 'm' <name>                          engine metadata (id sequences, dropped data)
//	0x02 dataID(4) row kind ...              data of one family
//	0x03 dataID(4) row                       sentinel of conditional updates (expires)
//	0x04 dataID(4) enc(column) enc(value) row  secondary index entry (see index.go)
//	0x05 dataID(4) row                       the row holds tombstones to collect (see gc.go)
//	0x06 dataID(4) row                       the row of a packed family has packs (see rowmark.go)
//
// row is the partitioner's row prefix (token, then the escaped row key), so
// rows iterate in Cassandra's (token, key) order. After it comes a kind byte:
//
//	0x00                                     row header: row tombstone, long key
//	0x01 ts(8) hash(8)                       a range tombstone of the row
//	0x02 enc(name)                           a cell of a Standard family
//	0x02 enc(super) 0x00                     a super column's header (its tombstone)
//	0x02 enc(super) 0x01                     a super column's pack (see pack.go)
//	0x02 enc(super) 0x01 enc(name)           a subcolumn of a Super family
//
// enc is the comparator's order-preserving, prefix-free encoding
// (marshal.Type.AppendKey), so a forward or reverse Badger iteration over a
// key range is a comparator-ordered slice.
//
// # Long keys
//
// Badger refuses keys over 65000 bytes, while Cassandra allows 65535-byte row
// keys and names. A row prefix longer than maxRowPrefix is cut and completed
// with a hash of the whole; its header then records the full key. A cell key
// longer than maxKey is cut to truncatedLen bytes and completed with a hash;
// its record then carries the raw names. Keys that share their first
// truncatedLen bytes form a "tie group" that readers re-sort by their full,
// logical keys (rebuilt from the raw names), so comparator order holds for
// every length.
//
// # Records
//
// A value is a record: flags, the client timestamp, the TTL and expiry of an
// expiring cell or the local deletion time of a tombstone, raw names where
// the key cannot give them back, then the cell value (see record.go). A pack
// holds the encoded names and records of a super column's subcolumns,
// compressed when that pays (see pack.go).
package badgerstore
