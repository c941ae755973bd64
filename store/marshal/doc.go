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
//
// # Types
//
// Parse returns the simple types as the zero-size values BytesType{},
// LongType{}, ... (comparable with ==, usable in type switches), and the
// parameterised ones as *Composite, *DynamicComposite and *Reversed.
// Equal compares types structurally; IsCounter tells counter validators.
//
// # Keys
//
// Every key is self-delimiting, and equal values (in Compare's sense) get
// identical keys:
//
//   - BytesType, AsciiType, UTF8Type: the bytes with 0x00 escaped as
//     0x00 0xFF, closed by 0x00 0x01.
//   - Fixed-width types start with 0x00 (empty value) or 0x01 (present):
//     LongType, Int32Type, TimestampType, CounterColumnType: big-endian
//     with the sign bit inverted; DateType: the raw bytes; DoubleType,
//     FloatType: IEEE bits mapped to Java's compareTo order (one NaN);
//     TimeUUIDType: the timestamp fields most significant first, then the
//     low 8 bytes with every byte's top bit inverted (signed bytes);
//     LexicalUUIDType: both halves with the sign bit inverted; UUIDType:
//     0x01+version, then as TimeUUIDType (version 1, low bytes unsigned) or
//     the raw bytes.
//   - InetAddressType: 0x01, the first 4 bytes, then 0x00 (IPv4) or 0x01
//     and the other 12 bytes (IPv6).
//   - BooleanType: 0x00 empty, 0x01 false, 0x02 true.
//   - IntegerType: 0x02 for zero; else 0x03 (positive) or 0x01 (negative),
//     the byte length of the minimal two's complement (complemented when
//     negative), and that minimal encoding.
//   - DecimalType: 0x02 for zero; else 0x03 or 0x01, then the decimal
//     exponent of the normalised value (digits without trailing zeros) and
//     its digits packed two per byte, all complemented when negative.
//   - ReversedType(T): T's key with every bit inverted.
//   - CompositeType: per component 0x01 and the component's key, then
//     0x00; end-of-component bytes are left out (names are stored with
//     them set to 0, see Normalize). Slice bounds extend the prefix with
//     nothing, 0x01 or 0x02 according to the sign of the last EOC.
//   - DynamicCompositeType: per component 0x01, the key of the component's
//     type (its class name's rank, so that different types sort by class
//     name), the value's key and the EOC byte + 0x80; then 0x00.
//
// Integers inside keys (exponents, lengths) use an order-preserving
// variable-length form of 1 to 9 bytes.
package marshal
