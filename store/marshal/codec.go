package marshal

// marshalPackage is the Java package of Cassandra's marshal types; Name()
// values are fully qualified with it.
const marshalPackage = "org.apache.cassandra.db.marshal."

// codec is implemented by every Type of this package. Composite types only
// accept codecs as components.
type codec interface {
	Type
	// className is the simple name of Cassandra's Java class for the type
	// (DynamicCompositeType orders components of different types by it).
	className() string
	// decodeKey decodes one value encoded by AppendKey from r and appends
	// it to dst.
	decodeKey(dst []byte, r *keyReader) ([]byte, error)
}

// compareEmptyFirst handles the empty value the way most of Cassandra's
// types do: it sorts before every other value. done is false when both
// values are non-empty.
func compareEmptyFirst(a, b []byte) (c int, done bool) {
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0, true
	case len(a) == 0:
		return -1, true
	case len(b) == 0:
		return 1, true
	}
	return 0, false
}

// simpleLowerBound and simpleUpperBound are the slice bounds of every type
// whose bound is an ordinary value: the lower bound includes the bound, and
// so does the upper one, since 0xFF sorts after any suffix (0x00/0x01...)
// the store appends to the bound's own key, and before the key of any
// greater value (the encoding is prefix-free).
func simpleLowerBound(t Type, dst, bound []byte) []byte {
	return t.AppendKey(dst, bound)
}

func simpleUpperBound(t Type, dst, bound []byte) []byte {
	return append(t.AppendKey(dst, bound), 0xFF)
}
