package marshal

import (
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// blobLiteral renders b as a CQL blob constant (0x..., "0x" when empty).
// CQL also accepts blob constants for columns of custom types.
func blobLiteral(b []byte) string {
	out := make([]byte, 2+2*len(b))
	out[0], out[1] = '0', 'x'
	hex.Encode(out[2:], b)
	return string(out)
}

// castBlobLiteral renders b through a blobAs<Type> conversion function, the
// only way to write an empty value (or raw bytes) of a native CQL type that
// has no plain literal for it.
func castBlobLiteral(fn string, b []byte) string {
	return fn + "(" + blobLiteral(b) + ")"
}

// textLiteral renders text as a single-quoted CQL string with quotes
// doubled. Bytes that a quoted literal cannot carry faithfully through a
// script (control characters other than tab and newline, and sequences that
// Cassandra accepts but that are not strict UTF-8) are written as a blob
// converted with fn instead.
func textLiteral(b []byte, fn string) string {
	if !utf8.Valid(b) {
		return castBlobLiteral(fn, b)
	}
	for _, c := range b {
		if (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
			return castBlobLiteral(fn, b)
		}
	}
	return quoteCQL(string(b))
}

// quoteCQL single-quotes s, doubling the quotes inside.
func quoteCQL(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
