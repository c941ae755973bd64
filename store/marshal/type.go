package marshal

// Type is one of Cassandra's marshal types.
//
// Values are raw bytes as they travel in Thrift. Every method is safe for
// concurrent use; a Type is immutable once parsed.
type Type interface {
	// Name is the fully qualified name Cassandra reports in describe_keyspace,
	// parameters included, e.g.
	// "org.apache.cassandra.db.marshal.ReversedType(org.apache.cassandra.db.marshal.LongType)".
	Name() string

	// Validate returns nil if b is a valid value of the type, else a
	// *ValidationError whose message is the text Cassandra uses.
	Validate(b []byte) error

	// Compare orders two valid values exactly as Cassandra does. For
	// composite types the end-of-component bytes take part, as in Cassandra.
	Compare(a, b []byte) int

	// AppendKey appends to dst the order-preserving, prefix-free encoding of
	// the valid value b. Values that compare equal encode identically. For
	// CompositeType the end-of-component bytes are ignored (stored names are
	// normalised to EOC 0).
	AppendKey(dst, b []byte) []byte

	// DecodeKey decodes the value encoded by AppendKey at the start of src,
	// appends it to dst and returns it with the bytes of src that follow.
	// For a Lossless type the value is byte-identical to the one encoded;
	// otherwise it is a member of the same equality class.
	DecodeKey(dst, src []byte) (value, rest []byte, err error)

	// Lossless reports whether DecodeKey returns exactly the bytes that
	// were encoded, for every valid value (after Normalize).
	Lossless() bool

	// Normalize returns the form in which a cell name is stored: for
	// CompositeType every end-of-component byte becomes 0; every other type
	// returns b itself. It may return b when nothing changes.
	Normalize(b []byte) []byte

	// AppendLowerBound appends the smallest key that a slice starting at
	// bound (in comparator order) includes: every stored name n with
	// AppendKey(n) >= the result is at or after the bound. For composite
	// types the bound's last end-of-component byte selects the semantics
	// (EOC <= 0 inclusive of the prefix and its extensions, EOC > 0 after
	// them).
	AppendLowerBound(dst, bound []byte) []byte

	// AppendUpperBound appends the exclusive end key of a slice ending at
	// bound (in comparator order): a stored name is included iff its key,
	// with anything the store appends after it, sorts below the result. For
	// simple types the bound itself is included. For composite types: EOC > 0
	// includes the prefix and all its extensions, EOC < 0 excludes both, and
	// EOC 0 includes a name equal to the bound but none of its extensions.
	AppendUpperBound(dst, bound []byte) []byte

	// CQLType is the CQL3 type of a column of this type: "bigint", "text",
	// "timeuuid", ... For types without a CQL3 equivalent it is the quoted
	// class name, e.g. "'org.apache.cassandra.db.marshal.DynamicCompositeType(...)'".
	CQLType() string

	// String renders a valid value as Cassandra's getString does (for
	// logs, CLIs and reports).
	String(b []byte) string

	// FromString parses the text form String produces (Cassandra's fromString).
	FromString(s string) ([]byte, error)

	// CQLLiteral renders a valid value as a CQL3 literal of CQLType: quoted
	// and escaped text, 0x-prefixed blobs, bare uuids, numbers, booleans,
	// timestamps as integers of milliseconds, inet addresses as quoted
	// strings. An empty value of a non-string type renders as a blob literal
	// cast to the type when CQL has no plain literal for it.
	CQLLiteral(b []byte) string
}

// ValidationError is a value that a Type refused; its text is Cassandra's.
type ValidationError struct {
	Msg string
}

func (e *ValidationError) Error() string { return e.Msg }
