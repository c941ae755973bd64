package marshal

import (
	"bytes"
	"strconv"
)

// TimestampType is Cassandra's TimestampType: milliseconds since the epoch
// as an 8-byte signed integer, ordered signed (dates before 1970 first).
//
// Parse returns TimestampType for "DateType" too (outside the parameters of
// custom types, see DateType): Cassandra 3.11 stores a DateType comparator
// or validator by its CQL type, timestamp, and reads it back as
// TimestampType.
type TimestampType struct{}

func (TimestampType) Name() string      { return marshalPackage + "TimestampType" }
func (TimestampType) className() string { return "TimestampType" }
func (TimestampType) Validate(b []byte) error {
	return validateTimestamp(b)
}
func (TimestampType) Compare(a, b []byte) int { return compareSigned(a, b, 8) }
func (TimestampType) AppendKey(dst, b []byte) []byte {
	return appendFixedKey(dst, b, 8, true)
}
func (t TimestampType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	return decodeWith(t, dst, src)
}
func (t TimestampType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	return decodeFixedKey(t, dst, r, 8, true)
}
func (TimestampType) Lossless() bool            { return true }
func (TimestampType) Normalize(b []byte) []byte { return b }
func (t TimestampType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t TimestampType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (TimestampType) CQLType() string                     { return "timestamp" }
func (TimestampType) String(b []byte) string              { return timestampString(b) }
func (TimestampType) FromString(s string) ([]byte, error) { return parseTimestamp(s) }
func (TimestampType) CQLLiteral(b []byte) string {
	return int64Literal(b, "blobAsTimestamp")
}

// DateType is Cassandra's deprecated DateType, which differs from
// TimestampType only by its order: unsigned bytes, so dates before 1970 sort
// after every later date. Cassandra 3.11 keeps it only where a type is
// stored verbatim as a custom type: inside DynamicCompositeType aliases and
// component class names, and inside composite types nested in other types.
// Parse produces it only there; everywhere else "DateType" parses as
// TimestampType.
type DateType struct{}

func (DateType) Name() string      { return marshalPackage + "DateType" }
func (DateType) className() string { return "DateType" }
func (DateType) Validate(b []byte) error {
	return validateTimestamp(b)
}
func (DateType) Compare(a, b []byte) int {
	if c, done := compareEmptyFirst(a, b); done {
		return c
	}
	return bytes.Compare(a, b)
}
func (DateType) AppendKey(dst, b []byte) []byte { return appendFixedKey(dst, b, 8, false) }
func (t DateType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	return decodeWith(t, dst, src)
}
func (t DateType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	return decodeFixedKey(t, dst, r, 8, false)
}
func (DateType) Lossless() bool            { return true }
func (DateType) Normalize(b []byte) []byte { return b }
func (t DateType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t DateType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (DateType) CQLType() string                     { return "timestamp" }
func (DateType) String(b []byte) string              { return timestampString(b) }
func (DateType) FromString(s string) ([]byte, error) { return parseTimestamp(s) }
func (DateType) CQLLiteral(b []byte) string {
	return int64Literal(b, "blobAsTimestamp")
}

func validateTimestamp(b []byte) error {
	if len(b) != 8 && len(b) != 0 {
		return invalid("Expected 8 or 0 byte long for date (" + strconv.Itoa(len(b)) + ")")
	}
	return nil
}
