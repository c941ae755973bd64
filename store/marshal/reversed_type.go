package marshal

// Reversed is Cassandra's ReversedType(T): T's values in the opposite order.
// Its key is the bitwise complement of T's key, which reverses the order
// and stays prefix-free.
type Reversed struct {
	base codec
	name string
}

// NewReversed returns ReversedType(base). base must be a type of this
// package. A CompositeType base is held as an opaque composite value (see
// Composite): Cassandra compares it raw, end-of-component bytes included.
func NewReversed(base Type) (*Reversed, error) {
	c, err := asComponent(base)
	if err != nil {
		return nil, err
	}
	return newReversed(c), nil
}

func newReversed(base codec) *Reversed {
	return &Reversed{base: base, name: marshalPackage + "ReversedType(" + base.Name() + ")"}
}

// Base returns the reversed type.
func (t *Reversed) Base() Type { return t.base }

func (t *Reversed) Name() string              { return t.name }
func (t *Reversed) className() string         { return "ReversedType" }
func (t *Reversed) Validate(b []byte) error   { return t.base.Validate(b) }
func (t *Reversed) Compare(a, b []byte) int   { return t.base.Compare(b, a) }
func (t *Reversed) Lossless() bool            { return t.base.Lossless() }
func (t *Reversed) Normalize(b []byte) []byte { return t.base.Normalize(b) }

func (t *Reversed) AppendKey(dst, b []byte) []byte {
	start := len(dst)
	dst = t.base.AppendKey(dst, b)
	complementBytes(dst[start:])
	return dst
}

func (t *Reversed) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := t.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}

func (t *Reversed) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	r.flip ^= 0xFF
	out, err := decodeKeyOf(t.base, dst, r)
	r.flip ^= 0xFF
	return out, err
}

func (t *Reversed) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}

func (t *Reversed) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}

func (t *Reversed) CQLType() string                     { return t.base.CQLType() }
func (t *Reversed) String(b []byte) string              { return t.base.String(b) }
func (t *Reversed) FromString(s string) ([]byte, error) { return t.base.FromString(s) }
func (t *Reversed) CQLLiteral(b []byte) string          { return t.base.CQLLiteral(b) }
