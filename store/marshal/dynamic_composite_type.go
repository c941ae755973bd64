package marshal

import (
	"bytes"
	"errors"
	"slices"
	"strings"
)

// DynamicComposite is Cassandra's DynamicCompositeType(a=>T1,b=>T2,...).
// Each component of a value names its own type in a 2-byte header: with
// the top bit set, the low byte is an alias of the type's parameters;
// otherwise the header is the length of a type name that follows.
//
// Components of different types sort by the simple class name of their
// types (AsciiType < BytesType < ... < UTF8Type); an alias and the class
// name of the same type are the same type. Values keep their
// end-of-component bytes as given (they are not normalised) and the bytes
// take part in the order, so a slice bound is an ordinary value.
type DynamicComposite struct {
	aliases [128]codec // by alias byte
	order   []byte     // the aliases in Name() order
	name    string
}

// NewDynamicComposite returns DynamicCompositeType with the given aliases.
// Alias bytes must be characters Cassandra's type parser accepts
// ([0-9A-Za-z-+._&]); types must be types of this package.
func NewDynamicComposite(aliases map[byte]Type) (*DynamicComposite, error) {
	keys := make([]byte, 0, len(aliases))
	for k := range aliases {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	types := make([]codec, len(keys))
	for i, k := range keys {
		if !isIdentifierChar(k) {
			return nil, errors.New("marshal: invalid DynamicCompositeType alias " + string(rune(k)))
		}
		c, err := asComponent(aliases[k])
		if err != nil {
			return nil, err
		}
		types[i] = c
	}
	return newDynamicComposite(keys, types), nil
}

// newDynamicComposite builds the type from aliases listed in the order
// they were declared.
func newDynamicComposite(keys []byte, types []codec) *DynamicComposite {
	d := &DynamicComposite{order: javaHashMapOrder(keys)}
	for i, k := range keys {
		d.aliases[k] = types[i]
	}
	parts := make([]string, len(d.order))
	for i, k := range d.order {
		parts[i] = string(rune(k)) + "=>" + d.aliases[k].Name()
	}
	d.name = marshalPackage + "DynamicCompositeType(" + strings.Join(parts, ",") + ")"
	return d
}

// javaHashMapOrder returns distinct byte keys (all below 0x80), put in the
// given order into a java.util.HashMap<Byte,...>, in that map's iteration
// order, which is how Cassandra prints the aliases: by bucket (a Byte's
// hash is its value, masked by the table size, which starts at 16 and
// doubles whenever the map is more than 3/4 full), then in insertion order.
// (With at most 8 aliases sharing a bucket, which identifier characters
// guarantee, no bucket ever turns into a tree.)
func javaHashMapOrder(keys []byte) []byte {
	size := 16
	for len(keys) > size*3/4 {
		size *= 2
	}
	out := slices.Clone(keys)
	slices.SortStableFunc(out, func(a, b byte) int {
		return int(a)&(size-1) - int(b)&(size-1)
	})
	return out
}

// Aliases returns a copy of the alias map.
func (d *DynamicComposite) Aliases() map[byte]Type {
	m := make(map[byte]Type, len(d.order))
	for _, k := range d.order {
		m[k] = d.aliases[k]
	}
	return m
}

// Alias returns the type of an alias.
func (d *DynamicComposite) Alias(a byte) (Type, bool) {
	if a < 0x80 && d.aliases[a] != nil {
		return d.aliases[a], true
	}
	return nil, false
}

func (d *DynamicComposite) Name() string      { return d.name }
func (d *DynamicComposite) className() string { return "DynamicCompositeType" }
func (d *DynamicComposite) Lossless() bool    { return false }

// readHeader reads the type header of the component starting b.
func (d *DynamicComposite) readHeader(b []byte) (t codec, rest []byte, ok bool) {
	if len(b) < 2 {
		return nil, nil, false
	}
	h := int(b[0])<<8 | int(b[1])
	if h&0x8000 != 0 {
		if a := b[1]; a < 0x80 && d.aliases[a] != nil {
			return d.aliases[a], b[2:], true
		}
		return nil, b[2:], false
	}
	if len(b)-2 < h {
		return nil, nil, false
	}
	t, ok = lookupClassName(b[2 : 2+h])
	return t, b[2+h:], ok
}

// Validate checks the layout, the component types and every component
// value with Cassandra's messages.
func (d *DynamicComposite) Validate(b []byte) error {
	for i := 0; len(b) > 0; i++ {
		if len(b) < 2 {
			return invalidf("Not enough bytes to header of the comparator part of component %d", i)
		}
		if h := int(b[0])<<8 | int(b[1]); h&0x8000 == 0 && len(b)-2 < h {
			return invalidf("Not enough bytes to read comparator name of component %d", i)
		}
		t, rest, ok := d.readHeader(b)
		if !ok {
			return invalidf("Cannot find comparator for component %d", i)
		}
		var err error
		if b, err = validateComponentTail(t, i, rest); err != nil {
			return err
		}
	}
	return nil
}

// compareComponentTypes orders the types of two components: by simple
// class name, then (for ReversedTypes) by their base types, then by full
// name. Cassandra compares two distinct types of the same class with the
// first one's comparator, which is not a consistent order; the full name
// settles those cases here.
func compareComponentTypes(a, b codec) int {
	if a == b {
		return 0
	}
	if c := strings.Compare(a.className(), b.className()); c != 0 {
		return c
	}
	ra, aRev := a.(*Reversed)
	rb, bRev := b.(*Reversed)
	if aRev && bRev {
		return compareComponentTypes(ra.base, rb.base)
	}
	return strings.Compare(a.Name(), b.Name())
}

func (d *DynamicComposite) Compare(a, b []byte) int {
	if x, done := compareEmptyFirst(a, b); done {
		return x
	}
	for len(a) > 0 && len(b) > 0 {
		ta, ra, okA := d.readHeader(a)
		tb, rb, okB := d.readHeader(b)
		if !okA || !okB {
			return bytes.Compare(a, b) // not valid values
		}
		if x := compareComponentTypes(ta, tb); x != 0 {
			return x
		}
		va, ea, restA := readComponent(ra)
		vb, eb, restB := readComponent(rb)
		if x := ta.Compare(va, vb); x != 0 {
			return x
		}
		if ea != eb {
			return int(int8(ea)) - int(int8(eb))
		}
		a, b = restA, restB
	}
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0
	case len(a) == 0:
		return -1
	}
	return 1
}

// AppendKey appends, per component, 0x01, the key of its type (see
// appendTypeKey), the key of its value and its EOC byte offset by 0x80;
// then 0x00.
func (d *DynamicComposite) AppendKey(dst, b []byte) []byte {
	for len(b) > 0 {
		t, rest, ok := d.readHeader(b)
		if !ok {
			// Not a valid value: key the remaining bytes as one
			// BytesType component so that AppendKey stays total.
			t, rest = BytesType{}, appendComponent(nil, b, 0)
		}
		dst = appendTypeKey(append(dst, compositeNext), t)
		var v []byte
		var eoc byte
		v, eoc, b = readComponent(rest)
		dst = append(t.AppendKey(dst, v), eoc^0x80)
	}
	return append(dst, compositeEnd)
}

// appendTypeKey appends a key ordering types as compareComponentTypes: the
// 1-based position of the class name in classNames, then for a
// ReversedType the key of its base, and for the other parameterised types
// their escaped full name.
func appendTypeKey(dst []byte, t codec) []byte {
	dst = append(dst, classOrdinal(t.className()))
	switch v := t.(type) {
	case *Reversed:
		return appendTypeKey(dst, v.base)
	case *Composite, *DynamicComposite:
		return appendEscaped(dst, []byte(v.Name()))
	}
	return dst
}

// decodeTypeKey is the inverse of appendTypeKey.
func decodeTypeKey(r *keyReader) (codec, bool) {
	o, ok := r.byte()
	if !ok || o == 0 || int(o) > len(classNames) {
		return nil, false
	}
	switch class := classNames[o-1]; class {
	case "ReversedType":
		base, ok := decodeTypeKey(r)
		if !ok {
			return nil, false
		}
		return newReversed(base), true
	case "CompositeType", "DynamicCompositeType":
		name, ok := r.unescape(nil)
		if !ok {
			return nil, false
		}
		t, err := parseTypeString(string(name), ctxOpaque)
		if err != nil || t.className() != class {
			return nil, false
		}
		return t, true
	default:
		return simpleType(class)
	}
}

func (d *DynamicComposite) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := d.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}

// decodeKey writes each component with an alias header when an alias of
// the component's type exists (the smallest such alias), else with the
// type's full name.
func (d *DynamicComposite) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	out := dst
	for {
		m, ok := r.byte()
		switch {
		case !ok:
			return dst, corruptKey(d, "truncated")
		case m == compositeEnd:
			return out, nil
		case m != compositeNext:
			return dst, corruptKey(d, "bad component marker")
		}
		t, ok := decodeTypeKey(r)
		if !ok {
			return dst, corruptKey(d, "bad component type")
		}
		out = d.appendHeader(out, t)
		var err error
		if out, err = decodeComponentKey(d, t, out, r); err != nil {
			return dst, err
		}
		eoc, ok := r.byte()
		if !ok {
			return dst, corruptKey(d, "truncated")
		}
		out = append(out, eoc^0x80)
	}
}

func (d *DynamicComposite) appendHeader(dst []byte, t codec) []byte {
	for a := range d.aliases {
		if d.aliases[a] != nil && compareComponentTypes(d.aliases[a], t) == 0 {
			return append(dst, 0x80, byte(a))
		}
	}
	name := t.Name()
	dst = append(dst, byte(len(name)>>8), byte(len(name)))
	return append(dst, name...)
}

func (d *DynamicComposite) Normalize(b []byte) []byte { return b }

func (d *DynamicComposite) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(d, dst, bound)
}

func (d *DynamicComposite) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(d, dst, bound)
}

func (d *DynamicComposite) CQLType() string            { return quoteCQL(d.name) }
func (d *DynamicComposite) CQLLiteral(b []byte) string { return blobLiteral(b) }

// String renders each component as "<alias or type name>@<value>", joined
// by ':' as CompositeType does.
func (d *DynamicComposite) String(b []byte) string {
	return componentsString(d, b, b)
}

// FromString parses the form String produces. A one-character name is an
// alias when the type has it; any other name is parsed as a type name and
// kept as written.
func (d *DynamicComposite) FromString(s string) ([]byte, error) {
	return componentsFromString(d, s)
}

// headerText names a component by its alias or by its type name, as
// written.
func (d *DynamicComposite) headerText(_ int, b []byte) (codec, []byte, []byte, bool) {
	t, after, ok := d.readHeader(b)
	if !ok {
		return nil, nil, nil, false
	}
	if b[0]&0x80 != 0 {
		return t, b[1:2], after, true
	}
	return t, b[2 : len(b)-len(after)], after, true
}

func (d *DynamicComposite) parseHeaderText(dst []byte, i int, s, part string) ([]byte, codec, string, error) {
	typeName, text, found := strings.Cut(part, "@")
	if !found {
		return dst, nil, "", formatErrorf(nil, "Invalid component representation: %s", part)
	}
	if len(typeName) == 1 && typeName[0] < 0x80 && d.aliases[typeName[0]] != nil {
		return append(dst, 0x80, typeName[0]), d.aliases[typeName[0]], text, nil
	}
	t, err := parseTypeString(typeName, ctxOpaque)
	if err != nil {
		return dst, nil, "", formatErrorf(err, "component %d of '%s': %s", i, s, err)
	}
	dst = append(dst, byte(len(typeName)>>8), byte(len(typeName)))
	return append(dst, typeName...), t, text, nil
}
