package marshal

import "strings"

// BooleanType is Cassandra's BooleanType: one byte, 0x00 false and any
// other byte true (all true bytes are equal); false sorts before true.
type BooleanType struct{}

const (
	boolKeyFalse = 0x01
	boolKeyTrue  = 0x02
)

func (BooleanType) Name() string      { return marshalPackage + "BooleanType" }
func (BooleanType) className() string { return "BooleanType" }
func (BooleanType) Validate(b []byte) error {
	if len(b) > 1 {
		return invalidf("Expected 1 or 0 byte value (%d)", len(b))
	}
	return nil
}
func (BooleanType) Compare(a, b []byte) int {
	if c, done := compareEmptyFirst(a, b); done {
		return c
	}
	return boolRank(a) - boolRank(b)
}
func boolRank(b []byte) int {
	if b[0] == 0 {
		return 0
	}
	return 1
}
func (BooleanType) AppendKey(dst, b []byte) []byte {
	switch {
	case len(b) == 0:
		return append(dst, keyEmpty)
	case b[0] == 0:
		return append(dst, boolKeyFalse)
	}
	return append(dst, boolKeyTrue)
}
func (t BooleanType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := t.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}
func (t BooleanType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	tag, ok := r.byte()
	switch {
	case !ok:
		return dst, corruptKey(t, "truncated")
	case tag == keyEmpty:
		return dst, nil
	case tag == boolKeyFalse:
		return append(dst, 0), nil
	case tag == boolKeyTrue:
		return append(dst, 1), nil
	}
	return dst, corruptKey(t, "bad tag")
}
func (BooleanType) Lossless() bool            { return false }
func (BooleanType) Normalize(b []byte) []byte { return b }
func (t BooleanType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t BooleanType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (BooleanType) CQLType() string { return "boolean" }
func (BooleanType) String(b []byte) string {
	switch {
	case len(b) == 0:
		return ""
	case b[0] == 0:
		return "false"
	}
	return "true"
}

// FromString accepts "true" and "false" in any case; like Cassandra it
// reads the empty string as false.
func (BooleanType) FromString(s string) ([]byte, error) {
	switch {
	case s == "" || strings.EqualFold(s, "false"):
		return []byte{0}, nil
	case strings.EqualFold(s, "true"):
		return []byte{1}, nil
	}
	return nil, formatErrorf(nil, "Unable to make boolean from '%s'", s)
}
func (t BooleanType) CQLLiteral(b []byte) string {
	if len(b) == 0 {
		return castBlobLiteral("blobAsBoolean", b)
	}
	return t.String(b)
}

// EmptyType is Cassandra's EmptyType: only the empty value is valid.
type EmptyType struct{}

func (EmptyType) Name() string      { return marshalPackage + "EmptyType" }
func (EmptyType) className() string { return "EmptyType" }
func (EmptyType) Validate(b []byte) error {
	if len(b) > 0 {
		return invalid("EmptyType only accept empty values")
	}
	return nil
}
func (EmptyType) Compare(a, b []byte) int { return 0 }

// AppendKey appends a single 0x00: every value of the type is equal.
func (EmptyType) AppendKey(dst, b []byte) []byte { return append(dst, keyEmpty) }
func (t EmptyType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := t.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}
func (t EmptyType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	if tag, ok := r.byte(); !ok || tag != keyEmpty {
		return dst, corruptKey(t, "bad tag")
	}
	return dst, nil
}
func (EmptyType) Lossless() bool            { return true }
func (EmptyType) Normalize(b []byte) []byte { return b }
func (t EmptyType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t EmptyType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (t EmptyType) CQLType() string      { return quoteCQL(t.Name()) }
func (EmptyType) String(b []byte) string { return "" }
func (EmptyType) FromString(s string) ([]byte, error) {
	if s != "" {
		return nil, formatErrorf(nil, "'%s' is not empty", s)
	}
	return []byte{}, nil
}
func (EmptyType) CQLLiteral(b []byte) string { return blobLiteral(b) }
