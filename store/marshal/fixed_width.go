package marshal

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
)

// Fixed-width values (longs, ints, timestamps, floats, UUIDs) are keyed as a
// tag byte (keyEmpty for the empty value, keyPresent otherwise) followed by
// the value's bytes transformed so that unsigned byte order is the type's
// order.
const (
	keyEmpty   = 0x00
	keyPresent = 0x01
)

// fixed implements the fixed-width numbers: LongType, CounterColumnType,
// Int32Type, TimestampType, DateType, DoubleType and FloatType. Each of
// them embeds fixed of itself and declares only its fixedSpec, and Compare
// and AppendKey, which run per cell: one-line calls of compareSigned and
// appendFixedKey, or compareFloat and appendFloatKey, with its width as a
// constant, which the compiler inlines into code for that width. Through
// fixed they would take a call through the generic dictionary and branches
// on the spec (AppendKey of a LongType: 120 instructions instead of 64).
type fixed[T fixedType] struct{}

// fixedType is a type that embeds fixed.
type fixedType interface {
	codec
	fixedSpec() fixedSpec
}

// fixedSpec describes one fixed-width number type.
type fixedSpec struct {
	width int // 4 or 8 bytes
	kind  fixedKind
	*fixedNames
}

// fixedKind says how a fixed-width number orders and reads as text.
type fixedKind uint8

const (
	// kindInteger: a big-endian two's-complement integer, ordered signed.
	kindInteger fixedKind = iota
	// kindTimestamp: milliseconds since the epoch as a kindInteger, shown
	// as a date; its CQL literal is the integer.
	kindTimestamp
	// kindDate: a kindTimestamp ordered as unsigned bytes.
	kindDate
	// kindFloat: an IEEE 754 number, ordered as Java's compareTo orders
	// Float and Double: -Inf < ... < -0.0 < 0.0 < ... < +Inf < NaN, every
	// NaN bit pattern equal.
	kindFloat
)

// fixedNames are the names and messages of a fixed-width number type.
type fixedNames struct {
	name, class string // Name() and className()
	// sizeError is Validate's message for a value of another length,
	// formatted with that length.
	sizeError string
	// what names the type in FromString's message (not for timestamps,
	// whose text has messages of its own).
	what    string
	cqlType string
	cast    string // the CQL function from a blob, for the empty value's literal
}

func (fixed[T]) spec() fixedSpec {
	var t T
	return t.fixedSpec()
}

func (f fixed[T]) Name() string      { return f.spec().name }
func (f fixed[T]) className() string { return f.spec().class }

func (f fixed[T]) Validate(b []byte) error {
	if s := f.spec(); len(b) != s.width && len(b) != 0 {
		return invalidf(s.sizeError, len(b))
	}
	return nil
}

func (f fixed[T]) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := f.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}

func (f fixed[T]) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	var t T
	s := f.spec()
	start := len(dst)
	out, err := decodeFixedKey(t, dst, r, s.width)
	if err != nil || len(out) == start {
		return out, err
	}
	putUint(out[start:], s.unkey(readUint(out[start:], s.width)), s.width)
	return out, nil
}

// Lossless is false for floats: every NaN is keyed as the canonical one.
func (f fixed[T]) Lossless() bool          { return f.spec().kind != kindFloat }
func (fixed[T]) Normalize(b []byte) []byte { return b }
func (fixed[T]) AppendLowerBound(dst, bound []byte) []byte {
	var t T
	return simpleLowerBound(t, dst, bound)
}
func (fixed[T]) AppendUpperBound(dst, bound []byte) []byte {
	var t T
	return simpleUpperBound(t, dst, bound)
}
func (f fixed[T]) CQLType() string { return f.spec().cqlType }

// String renders an integer in decimal, a float as Java's toString does
// and a timestamp as a date (see timestampString); the empty value is "".
func (f fixed[T]) String(b []byte) string {
	s := f.spec()
	switch {
	case len(b) == 0:
		return ""
	case s.kind == kindFloat:
		return javaFloatString(s.float(b), 8*s.width)
	case s.kind == kindTimestamp || s.kind == kindDate:
		return timestampString(b)
	}
	return strconv.FormatInt(s.int(b), 10)
}

// FromString parses the text String produces: a decimal integer (Java's
// Long.parseLong or Integer.parseInt form), a decimal or special ("NaN",
// "Infinity") float, or what Cassandra accepts as a timestamp (see
// parseTimestamp). The empty string is the empty value.
func (f fixed[T]) FromString(text string) ([]byte, error) {
	s := f.spec()
	switch {
	case text == "":
		return []byte{}, nil
	case s.kind == kindTimestamp || s.kind == kindDate:
		return parseTimestamp(text)
	case s.kind == kindFloat:
		v, err := parseJavaFloat(text, 8*s.width)
		if err != nil {
			return nil, formatErrorf(err, "Unable to make %s from '%s'", s.what, text)
		}
		if s.width == 4 {
			return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(v))), nil
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(v)), nil
	}
	v, err := strconv.ParseInt(text, 10, 8*s.width)
	if err != nil {
		return nil, formatErrorf(err, "Unable to make %s from '%s'", s.what, text)
	}
	return appendUint(nil, uint64(v), s.width), nil
}

// CQLLiteral is String, but for a timestamp the number of milliseconds,
// and for the empty value a cast blob.
func (f fixed[T]) CQLLiteral(b []byte) string {
	s := f.spec()
	switch {
	case len(b) == 0:
		return castBlobLiteral(s.cast, b)
	case s.kind == kindFloat:
		return f.String(b)
	}
	return strconv.FormatInt(s.int(b), 10)
}

// compareSigned compares two big-endian two's-complement integers of the
// given width, the empty value first. Values of another width (never valid)
// fall back to byte order so that Compare cannot panic.
func compareSigned(a, b []byte, width int) int {
	if c, done := compareEmptyFirst(a, b); done {
		return c
	}
	if len(a) != width || len(b) != width {
		return bytes.Compare(a, b)
	}
	if a[0] != b[0] {
		return int(int8(a[0])) - int(int8(b[0]))
	}
	return bytes.Compare(a[1:], b[1:])
}

// appendFixedKey appends the key of a fixed-width integer: the tag, then
// the value (padded or cut to width if it is invalid) with the top bit of
// its first byte inverted when signed, which turns two's-complement order
// into unsigned byte order.
func appendFixedKey(dst, b []byte, width int, signed bool) []byte {
	if len(b) == 0 {
		return append(dst, keyEmpty)
	}
	dst = append(dst, keyPresent)
	start := len(dst)
	dst = appendPadded(dst, b, width)
	if signed {
		dst[start] ^= 0x80
	}
	return dst
}

// compareFloat compares two floats of the given width in Java's compareTo
// order (see floatKey), the empty value first; values of another width
// (never valid) are read as readUint reads them.
func compareFloat(a, b []byte, width int) int {
	if c, done := compareEmptyFirst(a, b); done {
		return c
	}
	return compareUint64(floatKey(readUint(a, width), width), floatKey(readUint(b, width), width))
}

// appendFloatKey appends the key of a float: the tag, then floatKey of its
// bits.
func appendFloatKey(dst, b []byte, width int) []byte {
	if len(b) == 0 {
		return append(dst, keyEmpty)
	}
	return appendUint(append(dst, keyPresent), floatKey(readUint(b, width), width), width)
}

// floatKey maps the bits of a float of the given width to an unsigned
// integer in Java's compareTo order: every NaN becomes the canonical NaN
// (above +Inf), negative numbers are inverted and positive ones get the
// sign bit set.
func floatKey(u uint64, width int) uint64 {
	inf, nan := uint64(0x7FF0000000000000), uint64(0x7FF8000000000000)
	if width == 4 {
		inf, nan = 0x7F800000, 0x7FC00000
	}
	sign := uint64(1) << (8*width - 1)
	if u&^sign > inf {
		u = nan
	}
	if u&sign != 0 {
		return ^u & (sign<<1 - 1)
	}
	return u | sign
}

// unkey is the inverse of the mapping of appendFixedKey and floatKey (for
// floats, but for NaNs other than the canonical one) on a key read as an
// unsigned integer.
func (s fixedSpec) unkey(k uint64) uint64 {
	sign := uint64(1) << (8*s.width - 1)
	switch {
	case s.kind == kindDate:
		return k
	case s.kind == kindFloat && k&sign == 0:
		return ^k & (sign<<1 - 1)
	}
	return k ^ sign
}

// readUint reads up to width (4 or 8) big-endian bytes of b
// (zero-padded) as an unsigned integer.
func readUint(b []byte, width int) uint64 {
	if width == 4 {
		return uint64(be32(b))
	}
	return be64(b)
}

func appendUint(dst []byte, u uint64, width int) []byte {
	if width == 4 {
		return binary.BigEndian.AppendUint32(dst, uint32(u))
	}
	return binary.BigEndian.AppendUint64(dst, u)
}

func putUint(b []byte, u uint64, width int) {
	if width == 4 {
		binary.BigEndian.PutUint32(b, uint32(u))
	} else {
		binary.BigEndian.PutUint64(b, u)
	}
}

// int reads b as readUint does, as a signed integer.
func (s fixedSpec) int(b []byte) int64 {
	if s.width == 4 {
		return int64(int32(be32(b)))
	}
	return int64(be64(b))
}

// float reads b as readUint does, as an IEEE 754 number.
func (s fixedSpec) float(b []byte) float64 {
	if s.width == 4 {
		return float64(math.Float32frombits(be32(b)))
	}
	return math.Float64frombits(be64(b))
}

// appendPadded appends exactly width bytes of b, zero-padded or cut.
func appendPadded(dst, b []byte, width int) []byte {
	if len(b) >= width {
		return append(dst, b[:width]...)
	}
	dst = append(dst, b...)
	for i := len(b); i < width; i++ {
		dst = append(dst, 0)
	}
	return dst
}

// decodeFixedKey decodes the key of a fixed-width value: the tag, then
// width bytes appended as they are.
func decodeFixedKey(t Type, dst []byte, r *keyReader, width int) ([]byte, error) {
	tag, ok := r.byte()
	switch {
	case !ok:
		return dst, corruptKey(t, "truncated")
	case tag == keyEmpty:
		return dst, nil
	case tag != keyPresent:
		return dst, corruptKey(t, "bad tag")
	}
	out, ok := r.appendRaw(dst, width)
	if !ok {
		return dst, corruptKey(t, "truncated")
	}
	return out, nil
}

// be64 reads up to 8 big-endian bytes (zero-padded) as a uint64.
func be64(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.BigEndian.Uint64(b)
	}
	var buf [8]byte
	copy(buf[:], b)
	return binary.BigEndian.Uint64(buf[:])
}

// be32 reads up to 4 big-endian bytes (zero-padded) as a uint32.
func be32(b []byte) uint32 {
	if len(b) >= 4 {
		return binary.BigEndian.Uint32(b)
	}
	var buf [4]byte
	copy(buf[:], b)
	return binary.BigEndian.Uint32(buf[:])
}
