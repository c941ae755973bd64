package partition

// Token is a partitioner token in its order-preserving byte encoding:
// bytes.Compare on two Tokens of one partitioner orders them as Cassandra
// orders the tokens. The minimum token of a partitioner encodes as the empty
// Token, which sorts before every real token.
type Token []byte

// Partitioner is one of Cassandra's partitioners.
type Partitioner interface {
	// Name is the fully qualified class name, e.g.
	// "org.apache.cassandra.dht.Murmur3Partitioner".
	Name() string

	// Ordered reports whether keys are ordered by their bytes
	// (ByteOrderedPartitioner, OrderPreservingPartitioner).
	Ordered() bool

	// Token returns the token of a (non-empty) row key.
	Token(key []byte) Token

	// MinToken is the partitioner's minimum token (the empty Token).
	MinToken() Token

	// FormatToken renders a token as Thrift clients see it (describe_ring,
	// KeyRange.start_token): a signed decimal for Murmur3, a non-negative
	// decimal for Random ("-1" for the minimum), lowercase hex for
	// ByteOrdered, the string itself for OrderPreserving.
	FormatToken(t Token) string

	// ParseToken parses FormatToken's form; an invalid string is an error
	// whose message names the partitioner and the input.
	ParseToken(s string) (Token, error)

	// AppendRowKey appends the storage prefix of a row: an order-preserving,
	// prefix-free encoding of (token, key) that sorts rows as Cassandra's
	// DecoratedKey does (token first, then key bytes unsigned).
	AppendRowKey(dst, key []byte) []byte

	// DecodeRowKey reads a prefix written by AppendRowKey from the start of
	// src and returns the row key (appended to dst) and the bytes after it.
	DecodeRowKey(dst, src []byte) (key, rest []byte, err error)

	// AppendTokenBound appends the smallest row prefix of the rows whose
	// token is >= t (inclusive) or > t (exclusive). For the minimum token,
	// inclusive and exclusive both mean "from the first row" and nothing is
	// appended.
	AppendTokenBound(dst []byte, t Token, inclusive bool) []byte

	// Midpoint returns a token halfway between left and right on the ring
	// (wrapping when right <= left), used to compute splits.
	Midpoint(left, right Token) Token
}
