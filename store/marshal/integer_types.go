package marshal

import (
	"encoding/binary"
	"strconv"
)

// LongType is Cassandra's LongType: an 8-byte signed big-endian integer.
type LongType struct{}

func (LongType) Name() string      { return marshalPackage + "LongType" }
func (LongType) className() string { return "LongType" }
func (LongType) Validate(b []byte) error {
	if len(b) != 8 && len(b) != 0 {
		return invalidf("Expected 8 or 0 byte long (%d)", len(b))
	}
	return nil
}
func (LongType) Compare(a, b []byte) int        { return compareSigned(a, b, 8) }
func (LongType) AppendKey(dst, b []byte) []byte { return appendFixedKey(dst, b, 8, true) }
func (t LongType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	return decodeWith(t, dst, src)
}
func (t LongType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	return decodeFixedKey(t, dst, r, 8, true)
}
func (LongType) Lossless() bool            { return true }
func (LongType) Normalize(b []byte) []byte { return b }
func (t LongType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t LongType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (LongType) CQLType() string                     { return "bigint" }
func (LongType) String(b []byte) string              { return int64String(b) }
func (LongType) FromString(s string) ([]byte, error) { return parseInt64(s, "long") }
func (LongType) CQLLiteral(b []byte) string          { return int64Literal(b, "blobAsBigint") }

// CounterColumnType is Cassandra's CounterColumnType. Through the Thrift API
// a counter's value is an 8-byte signed integer; it is validated, compared
// and rendered as LongType.
type CounterColumnType struct{}

func (CounterColumnType) Name() string      { return marshalPackage + "CounterColumnType" }
func (CounterColumnType) className() string { return "CounterColumnType" }
func (CounterColumnType) Validate(b []byte) error {
	return LongType{}.Validate(b)
}
func (CounterColumnType) Compare(a, b []byte) int { return compareSigned(a, b, 8) }
func (CounterColumnType) AppendKey(dst, b []byte) []byte {
	return appendFixedKey(dst, b, 8, true)
}
func (t CounterColumnType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	return decodeWith(t, dst, src)
}
func (t CounterColumnType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	return decodeFixedKey(t, dst, r, 8, true)
}
func (CounterColumnType) Lossless() bool            { return true }
func (CounterColumnType) Normalize(b []byte) []byte { return b }
func (t CounterColumnType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t CounterColumnType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (CounterColumnType) CQLType() string        { return "counter" }
func (CounterColumnType) String(b []byte) string { return int64String(b) }
func (CounterColumnType) FromString(s string) ([]byte, error) {
	return parseInt64(s, "long")
}
func (CounterColumnType) CQLLiteral(b []byte) string {
	return int64Literal(b, "blobAsBigint")
}

// Int32Type is Cassandra's Int32Type: a 4-byte signed big-endian integer.
type Int32Type struct{}

func (Int32Type) Name() string      { return marshalPackage + "Int32Type" }
func (Int32Type) className() string { return "Int32Type" }
func (Int32Type) Validate(b []byte) error {
	if len(b) != 4 && len(b) != 0 {
		return invalidf("Expected 4 or 0 byte int (%d)", len(b))
	}
	return nil
}
func (Int32Type) Compare(a, b []byte) int        { return compareSigned(a, b, 4) }
func (Int32Type) AppendKey(dst, b []byte) []byte { return appendFixedKey(dst, b, 4, true) }
func (t Int32Type) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	return decodeWith(t, dst, src)
}
func (t Int32Type) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	return decodeFixedKey(t, dst, r, 4, true)
}
func (Int32Type) Lossless() bool            { return true }
func (Int32Type) Normalize(b []byte) []byte { return b }
func (t Int32Type) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t Int32Type) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (Int32Type) CQLType() string { return "int" }
func (Int32Type) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return strconv.FormatInt(int64(int32(be32(b))), 10)
}

// FromString parses a decimal 32-bit integer.
func (Int32Type) FromString(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return nil, formatErrorf(err, "Unable to make int from '%s'", s)
	}
	return binary.BigEndian.AppendUint32(nil, uint32(v)), nil
}
func (t Int32Type) CQLLiteral(b []byte) string {
	if len(b) == 0 {
		return castBlobLiteral("blobAsInt", b)
	}
	return t.String(b)
}

func int64String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return strconv.FormatInt(int64(be64(b)), 10)
}

func int64Literal(b []byte, castFn string) string {
	if len(b) == 0 {
		return castBlobLiteral(castFn, b)
	}
	return int64String(b)
}

// parseInt64 parses a decimal 64-bit integer (Java's Long.parseLong form).
func parseInt64(s, what string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, formatErrorf(err, "Unable to make %s from '%s'", what, s)
	}
	return binary.BigEndian.AppendUint64(nil, uint64(v)), nil
}
