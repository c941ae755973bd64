package marshal

import "strings"

// A composite value (CompositeType and DynamicCompositeType) is a sequence
// of components, each a 2-byte big-endian length, the value bytes and an
// end-of-component (EOC) byte. Slice bounds use a non-zero EOC on their
// last component to sort before (-1) or after (1) everything extending it.

// Markers of composite keys: a component follows, the composite ends, or
// (in slice bounds only) the position after a prefix and all its
// extensions.
const (
	compositeEnd      = 0x00
	compositeNext     = 0x01
	compositeAfterAll = 0x02
)

// readComponent splits the first component off b. A truncated component
// (only possible in an invalid value) yields the remaining bytes as its
// value, EOC 0 and an empty rest.
func readComponent(b []byte) (value []byte, eoc byte, rest []byte) {
	if len(b) < 2 {
		return b, 0, nil
	}
	n := int(b[0])<<8 | int(b[1])
	b = b[2:]
	if len(b) < n+1 {
		return b, 0, nil
	}
	return b[:n], b[n], b[n+1:]
}

// isStaticName reports whether b starts with the 0xFFFF marker Cassandra
// uses for the names of static columns.
func isStaticName(b []byte) bool {
	return len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFF
}

// validateComponentTail checks the length, value and EOC of component i at
// the start of b and returns the value and what follows.
func validateComponentTail(t Type, i int, b []byte) (rest []byte, err error) {
	if len(b) < 2 {
		return nil, invalidf("Not enough bytes to read value size of component %d", i)
	}
	n := int(b[0])<<8 | int(b[1])
	b = b[2:]
	if len(b) < n {
		return nil, invalidf("Not enough bytes to read value of component %d", i)
	}
	if err := t.Validate(b[:n]); err != nil {
		return nil, err
	}
	b = b[n:]
	if len(b) == 0 {
		return nil, invalidf("Not enough bytes to read the end-of-component byte of component%d", i)
	}
	if b[0] != 0 && len(b) > 1 {
		return nil, invalidf("Invalid bytes remaining after an end-of-component at component%d", i)
	}
	return b[1:], nil
}

// appendComponent appends one component with the given EOC.
func appendComponent(dst, value []byte, eoc byte) []byte {
	dst = append(dst, byte(len(value)>>8), byte(len(value)))
	dst = append(dst, value...)
	return append(dst, eoc)
}

// eocString is how Cassandra's getString shows a non-zero EOC.
func eocString(eoc byte) string {
	if int8(eoc) < 0 {
		return ":_"
	}
	return ":!"
}

// escapeComponent escapes one component's text for getString: ':' becomes
// "\:" and a '!' is appended after a trailing '\' or '!'.
func escapeComponent(s string) string {
	if s == "" {
		return s
	}
	s = strings.ReplaceAll(s, ":", `\:`)
	if last := s[len(s)-1]; last == '\\' || last == '!' {
		s += "!"
	}
	return s
}

// unescapeComponent reverses escapeComponent.
func unescapeComponent(s string) string {
	if s == "" {
		return s
	}
	s = strings.ReplaceAll(s, `\:`, ":")
	return strings.TrimSuffix(s, "!")
}

// splitComponents splits getString output at every ':' not preceded by '\'.
func splitComponents(s string) []string {
	if s == "" {
		return nil
	}
	var parts []string
	prev := 0
	for i := 0; i < len(s); i++ {
		if s[i] != ':' || (i > 0 && s[i-1] == '\\') {
			continue
		}
		parts = append(parts, s[prev:i])
		prev = i + 1
	}
	return append(parts, s[prev:])
}

// componentText is what tells apart the text forms of CompositeType and
// DynamicCompositeType (Cassandra's getString and fromString): how each
// component names its type.
type componentText interface {
	// headerText reads the header of component i, which starts b, and
	// returns the component's type, the name String shows for it before
	// an '@' (nil for none) and the bytes after the header; ok is false
	// when the header cannot be read.
	headerText(i int, b []byte) (t codec, name, rest []byte, ok bool)
	// parseHeaderText reads the name in part, the text of component i of
	// s, appends the component's header to dst, and returns the
	// component's type and the text of its value.
	parseHeaderText(dst []byte, i int, s, part string) (out []byte, t codec, text string, err error)
}

// componentsString renders the components of b from rest on (b without a
// static marker) with h: each component's name and '@', if it has one,
// and its type's String, escaped; joined by ':' (and, as in Cassandra,
// preceded by one after a static marker). A non-zero EOC shows as ":!"
// (positive) or ":_" (negative) and ends the text; so does a header that
// cannot be read, after which the remaining bytes are shown in hex.
func componentsString(h componentText, b, rest []byte) string {
	var sb strings.Builder
	for i := 0; len(rest) > 0; i++ {
		if len(rest) != len(b) {
			sb.WriteByte(':')
		}
		t, name, after, ok := h.headerText(i, rest)
		if !ok {
			sb.WriteString(BytesType{}.String(rest))
			break
		}
		if name != nil {
			sb.Write(name)
			sb.WriteByte('@')
		}
		var v []byte
		var eoc byte
		v, eoc, rest = readComponent(after)
		sb.WriteString(escapeComponent(t.String(v)))
		if eoc != 0 {
			sb.WriteString(eocString(eoc))
			break
		}
	}
	return sb.String()
}

// componentsFromString parses the form componentsString produces.
func componentsFromString(h componentText, s string) ([]byte, error) {
	out := []byte{}
	eoc := byte(0)
	for i, part := range splitComponents(s) {
		if part == "!" || part == "_" {
			eoc = 1
			if part == "_" {
				eoc = 0xFF
			}
			break
		}
		withHeader, t, text, err := h.parseHeaderText(out, i, s, part)
		if err != nil {
			return nil, err
		}
		v, err := t.FromString(unescapeComponent(text))
		if err != nil {
			return nil, formatErrorf(err, "component %d of '%s': %s", i, s, err)
		}
		if len(v) > 0xFFFF {
			return nil, formatErrorf(nil, "component %d of '%s' is longer than 65535 bytes", i, s)
		}
		out = appendComponent(withHeader, v, 0)
	}
	if eoc != 0 {
		if len(out) == 0 {
			return nil, formatErrorf(nil, "no component before the end-of-component mark in '%s'", s)
		}
		out[len(out)-1] = eoc
	}
	return out, nil
}

// decodeComponentKey decodes a component value with t into dst, prefixed
// with its 2-byte length.
func decodeComponentKey(owner Type, t codec, dst []byte, r *keyReader) ([]byte, error) {
	lenAt := len(dst)
	out, err := decodeKeyOf(t, append(dst, 0, 0), r)
	if err != nil {
		return dst, err
	}
	n := len(out) - lenAt - 2
	if n > 0xFFFF {
		return dst, corruptKey(owner, "component longer than 65535 bytes")
	}
	out[lenAt], out[lenAt+1] = byte(n>>8), byte(n)
	return out, nil
}
