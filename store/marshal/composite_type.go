package marshal

import (
	"errors"
	"strings"
)

// Composite is Cassandra's CompositeType(T1,...,Tn).
//
// As a comparator (the type Parse returns for "CompositeType(...)"), a
// composite name is stored with every end-of-component byte set to 0
// (Normalize), and its key is, per component, 0x01 and the component's key,
// then 0x00: the end-of-component bytes are not part of it, so names with
// fewer components sort first. Slice bounds use the sign of the bound's last
// EOC (see AppendLowerBound and AppendUpperBound).
//
// Nested in another type (a component of a composite, a
// DynamicCompositeType component, the base of a ReversedType), Cassandra
// handles a composite as one opaque value compared raw: its end-of-component
// bytes are kept and take part in the order. Such an opaque composite keeps
// them in its key too (after each component's key, offset by 0x80), and its
// bounds are ordinary values.
type Composite struct {
	types    []codec
	opaque   bool
	lossless bool
	name     string
}

// NewComposite returns the comparator CompositeType(components...). The
// components must be types of this package.
func NewComposite(components ...Type) (*Composite, error) {
	if len(components) == 0 {
		return nil, errors.New("marshal: CompositeType needs at least one component")
	}
	types := make([]codec, len(components))
	for i, t := range components {
		c, err := asComponent(t)
		if err != nil {
			return nil, err
		}
		types[i] = c
	}
	return newComposite(types, false), nil
}

func newComposite(types []codec, opaque bool) *Composite {
	c := &Composite{types: types, opaque: opaque, lossless: true}
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Name()
		c.lossless = c.lossless && t.Lossless()
	}
	c.name = marshalPackage + "CompositeType(" + strings.Join(names, ",") + ")"
	return c
}

// asComponent checks that t is a type of this package and turns a
// comparator composite into an opaque one, as Cassandra nests it.
func asComponent(t Type) (codec, error) {
	switch v := t.(type) {
	case *Composite:
		if !v.opaque {
			return newComposite(v.types, true), nil
		}
		return v, nil
	case codec:
		return v, nil
	}
	return nil, errors.New("marshal: component type " + t.Name() + " is not a type of this package")
}

// Components returns the component types, in order.
func (c *Composite) Components() []Type {
	out := make([]Type, len(c.types))
	for i, t := range c.types {
		out[i] = t
	}
	return out
}

// typeAt returns the type of component i; components beyond the declared
// ones (never valid) are read as BytesType, as Cassandra does.
func (c *Composite) typeAt(i int) codec {
	if i < len(c.types) {
		return c.types[i]
	}
	return BytesType{}
}

func (c *Composite) Name() string      { return c.name }
func (c *Composite) className() string { return "CompositeType" }
func (c *Composite) Lossless() bool    { return c.lossless }

// staticNameMessage explains why a name with the static-column marker is
// refused (Cassandra 3.11 accepts it and then fails inside its write path).
const staticNameMessage = "Invalid composite name: the static column marker 0xffff is not supported"

// Validate checks the composite layout and every component with its type,
// with Cassandra's messages; a component's own error is returned unchanged.
func (c *Composite) Validate(b []byte) error {
	if isStaticName(b) {
		return invalid(staticNameMessage)
	}
	for i := 0; len(b) > 0; i++ {
		if i >= len(c.types) {
			return invalid("Too many bytes for comparator")
		}
		var err error
		if b, err = validateComponentTail(c.types[i], i, b); err != nil {
			return err
		}
	}
	return nil
}

// Compare orders as Cassandra: component by component with the component
// types, then by the signed EOC bytes; a composite that runs out first
// sorts first; the empty value and static names sort before all others.
func (c *Composite) Compare(a, b []byte) int {
	if x, done := compareEmptyFirst(a, b); done {
		return x
	}
	sa, sb := isStaticName(a), isStaticName(b)
	switch {
	case sa && !sb:
		return -1
	case sb && !sa:
		return 1
	case sa:
		a, b = a[2:], b[2:]
	}
	for i := 0; len(a) > 0 && len(b) > 0; i++ {
		va, ea, ra := readComponent(a)
		vb, eb, rb := readComponent(b)
		if x := c.typeAt(i).Compare(va, vb); x != 0 {
			return x
		}
		if ea != eb {
			return int(int8(ea)) - int(int8(eb))
		}
		a, b = ra, rb
	}
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0
	case len(a) == 0:
		return -1
	}
	return 1
}

// appendPrefixKey appends 0x01 and the key of each component of b and
// returns the last EOC byte.
func (c *Composite) appendPrefixKey(dst, b []byte) ([]byte, byte) {
	var eoc byte
	for i := 0; len(b) > 0; i++ {
		var v []byte
		v, eoc, b = readComponent(b)
		dst = c.typeAt(i).AppendKey(append(dst, compositeNext), v)
		if c.opaque {
			dst = append(dst, eoc^0x80)
		}
	}
	return dst, eoc
}

func (c *Composite) AppendKey(dst, b []byte) []byte {
	dst, _ = c.appendPrefixKey(dst, b)
	return append(dst, compositeEnd)
}

func (c *Composite) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := c.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}

func (c *Composite) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	out := dst
	for i := 0; ; i++ {
		m, ok := r.byte()
		switch {
		case !ok:
			return dst, corruptKey(c, "truncated")
		case m == compositeEnd:
			return out, nil
		case m != compositeNext || i >= len(c.types):
			return dst, corruptKey(c, "bad component marker")
		}
		var err error
		if out, err = decodeComponentKey(c, c.types[i], out, r); err != nil {
			return dst, err
		}
		eoc := byte(0)
		if c.opaque {
			e, ok := r.byte()
			if !ok {
				return dst, corruptKey(c, "truncated")
			}
			eoc = e ^ 0x80
		}
		out = append(out, eoc)
	}
}

// Normalize sets every end-of-component byte of a comparator composite to
// 0, as Cassandra stores names; an opaque composite is returned unchanged.
func (c *Composite) Normalize(b []byte) []byte {
	if c.opaque {
		return b
	}
	var out []byte
	for pos := 0; pos < len(b); {
		if len(b)-pos < 2 {
			break
		}
		eocAt := pos + 2 + (int(b[pos])<<8 | int(b[pos+1]))
		if eocAt >= len(b) {
			break
		}
		if b[eocAt] != 0 {
			if out == nil {
				out = append([]byte(nil), b...)
			}
			out[eocAt] = 0
		}
		pos = eocAt + 1
	}
	if out == nil {
		return b
	}
	return out
}

// AppendLowerBound: with the bound's prefix P keyed as E(P) (its
// components without the final 0x00), a last EOC <= 0 includes P and
// everything extending it (E(P)); an EOC > 0 starts after them
// (E(P)+0x02).
func (c *Composite) AppendLowerBound(dst, bound []byte) []byte {
	if c.opaque {
		return simpleLowerBound(c, dst, bound)
	}
	dst, eoc := c.appendPrefixKey(dst, bound)
	if int8(eoc) > 0 {
		dst = append(dst, compositeAfterAll)
	}
	return dst
}

// AppendUpperBound: an EOC > 0 includes P and its extensions (E(P)+0x02),
// an EOC < 0 excludes both (E(P)), and EOC 0 includes a name equal to P
// but none of its extensions (E(P)+0x01), as Cassandra 3.x does
// (CASSANDRA-12423).
func (c *Composite) AppendUpperBound(dst, bound []byte) []byte {
	if c.opaque {
		return simpleUpperBound(c, dst, bound)
	}
	dst, eoc := c.appendPrefixKey(dst, bound)
	switch {
	case int8(eoc) > 0:
		dst = append(dst, compositeAfterAll)
	case eoc == 0:
		dst = append(dst, compositeNext)
	}
	return dst
}

func (c *Composite) CQLType() string            { return quoteCQL(c.name) }
func (c *Composite) CQLLiteral(b []byte) string { return blobLiteral(b) }

// String renders the components with their types' String, escaped and
// joined by ':'; a non-zero EOC shows as ":!" (positive) or ":_" (negative).
func (c *Composite) String(b []byte) string {
	rest := b
	if isStaticName(b) {
		rest = b[2:]
	}
	return componentsString(c, b, rest)
}

// FromString parses the form String produces.
func (c *Composite) FromString(s string) ([]byte, error) {
	return componentsFromString(c, s)
}

// A component of a composite has no header: its type is the declared one
// (BytesType beyond them, in String).
func (c *Composite) headerText(i int, b []byte) (codec, []byte, []byte, bool) {
	return c.typeAt(i), nil, b, true
}

func (c *Composite) parseHeaderText(dst []byte, i int, s, part string) ([]byte, codec, string, error) {
	if i >= len(c.types) {
		return dst, nil, "", formatErrorf(nil, "too many components in '%s' for %s", s, c.name)
	}
	return dst, c.types[i], part, nil
}
