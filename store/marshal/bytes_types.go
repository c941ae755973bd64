package marshal

import (
	"bytes"
	"encoding/hex"
	"strconv"
)

// BytesType is Cassandra's BytesType: any bytes, ordered as unsigned bytes.
type BytesType struct{}

func (BytesType) Name() string                   { return marshalPackage + "BytesType" }
func (BytesType) className() string              { return "BytesType" }
func (BytesType) Validate([]byte) error          { return nil }
func (BytesType) Compare(a, b []byte) int        { return bytes.Compare(a, b) }
func (BytesType) AppendKey(dst, b []byte) []byte { return appendEscaped(dst, b) }
func (t BytesType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := t.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}
func (t BytesType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	return unescapeValue(t, dst, r)
}
func (BytesType) Lossless() bool            { return true }
func (BytesType) Normalize(b []byte) []byte { return b }
func (t BytesType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t BytesType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (BytesType) CQLType() string            { return "blob" }
func (BytesType) String(b []byte) string     { return hex.EncodeToString(b) }
func (BytesType) CQLLiteral(b []byte) string { return blobLiteral(b) }

// FromString parses hex digits (an even number of them, as Cassandra requires).
func (BytesType) FromString(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, formatErrorf(err, "cannot parse '%s' as hex bytes", s)
	}
	return b, nil
}

// AsciiType is Cassandra's AsciiType: bytes 0x00-0x7F, ordered as bytes.
type AsciiType struct{}

func (AsciiType) Name() string      { return marshalPackage + "AsciiType" }
func (AsciiType) className() string { return "AsciiType" }

// Validate rejects the first byte above 0x7F, printed as a signed Java byte.
func (AsciiType) Validate(b []byte) error {
	for _, c := range b {
		if c >= 0x80 {
			return invalid("Invalid byte for ascii: " + strconv.Itoa(int(int8(c))))
		}
	}
	return nil
}
func (AsciiType) Compare(a, b []byte) int        { return bytes.Compare(a, b) }
func (AsciiType) AppendKey(dst, b []byte) []byte { return appendEscaped(dst, b) }
func (t AsciiType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := t.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}
func (t AsciiType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	return unescapeValue(t, dst, r)
}
func (AsciiType) Lossless() bool            { return true }
func (AsciiType) Normalize(b []byte) []byte { return b }
func (t AsciiType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t AsciiType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (AsciiType) CQLType() string        { return "ascii" }
func (AsciiType) String(b []byte) string { return string(b) }

// FromString accepts ASCII text only.
func (t AsciiType) FromString(s string) ([]byte, error) {
	b := []byte(s)
	if err := t.Validate(b); err != nil {
		return nil, formatErrorf(err, "Invalid ASCII character in string literal: %s", err)
	}
	return b, nil
}
func (AsciiType) CQLLiteral(b []byte) string { return textLiteral(b, "blobAsAscii") }

// UTF8Type is Cassandra's UTF8Type: text validated by Cassandra's own UTF-8
// state machine (see validUTF8), ordered as bytes.
type UTF8Type struct{}

func (UTF8Type) Name() string      { return marshalPackage + "UTF8Type" }
func (UTF8Type) className() string { return "UTF8Type" }
func (UTF8Type) Validate(b []byte) error {
	if !validUTF8(b) {
		return invalid("String didn't validate.")
	}
	return nil
}
func (UTF8Type) Compare(a, b []byte) int        { return bytes.Compare(a, b) }
func (UTF8Type) AppendKey(dst, b []byte) []byte { return appendEscaped(dst, b) }
func (t UTF8Type) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := t.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}
func (t UTF8Type) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	return unescapeValue(t, dst, r)
}
func (UTF8Type) Lossless() bool            { return true }
func (UTF8Type) Normalize(b []byte) []byte { return b }
func (t UTF8Type) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t UTF8Type) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (UTF8Type) CQLType() string        { return "text" }
func (UTF8Type) String(b []byte) string { return string(b) }

// FromString returns the bytes of s if Cassandra would accept them.
func (t UTF8Type) FromString(s string) ([]byte, error) {
	b := []byte(s)
	if err := t.Validate(b); err != nil {
		return nil, formatErrorf(err, "%s", err)
	}
	return b, nil
}
func (UTF8Type) CQLLiteral(b []byte) string { return textLiteral(b, "blobAsText") }

func unescapeValue(t Type, dst []byte, r *keyReader) ([]byte, error) {
	out, ok := r.unescape(dst)
	if !ok {
		return dst, corruptKey(t, "bad escaped bytes")
	}
	return out, nil
}
