package marshal

import "bytes"

// TimestampType is Cassandra's TimestampType: milliseconds since the epoch
// as an 8-byte signed integer, ordered signed (dates before 1970 first).
//
// Parse returns TimestampType for "DateType" too (outside the parameters of
// custom types, see DateType): Cassandra 3.11 stores a DateType comparator
// or validator by its CQL type, timestamp, and reads it back as
// TimestampType.
type TimestampType struct{ fixed[TimestampType] }

func (TimestampType) fixedSpec() fixedSpec           { return fixedSpec{8, kindTimestamp, &timestampNames} }
func (TimestampType) Compare(a, b []byte) int        { return compareSigned(a, b, 8) }
func (TimestampType) AppendKey(dst, b []byte) []byte { return appendFixedKey(dst, b, 8, true) }

var timestampNames = fixedNames{
	name: marshalPackage + "TimestampType", class: "TimestampType",
	sizeError: "Expected 8 or 0 byte long for date (%d)", cqlType: "timestamp", cast: "blobAsTimestamp",
}

// DateType is Cassandra's deprecated DateType, which differs from
// TimestampType only by its order: unsigned bytes, so dates before 1970 sort
// after every later date. Cassandra 3.11 keeps it only where a type is
// stored verbatim as a custom type: inside DynamicCompositeType aliases and
// component class names, and inside composite types nested in other types.
// Parse produces it only there; everywhere else "DateType" parses as
// TimestampType.
type DateType struct{ fixed[DateType] }

func (DateType) fixedSpec() fixedSpec           { return fixedSpec{8, kindDate, &dateNames} }
func (DateType) Compare(a, b []byte) int        { return bytes.Compare(a, b) }
func (DateType) AppendKey(dst, b []byte) []byte { return appendFixedKey(dst, b, 8, false) }

var dateNames = fixedNames{
	name: marshalPackage + "DateType", class: "DateType",
	sizeError: timestampNames.sizeError, cqlType: timestampNames.cqlType, cast: timestampNames.cast,
}
