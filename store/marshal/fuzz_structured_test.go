package marshal

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// valueStream hands out choices taken from fuzz bytes (0 once exhausted).
type valueStream struct{ data []byte }

func (s *valueStream) pick(n int) int {
	if len(s.data) == 0 || n <= 1 {
		return 0
	}
	c := int(s.data[0]) % n
	s.data = s.data[1:]
	return c
}

// samplePool holds a few valid values of each simple type, tricky ones
// included (empty values, NaNs, non-minimal varints, equal decimals).
var samplePool = map[string][]string{
	"BytesType":         {"", "00", "0000", "01", "ff", "00ff"},
	"AsciiType":         {"", "61", "6100", "62", "7f"},
	"UTF8Type":          {"", "61", "6162", "62", "c080", "eda080", "f09f9880", "3a", "21", "5c"},
	"LongType":          {"", "0000000000000000", "0000000000000001", "ffffffffffffffff", "8000000000000000", "7fffffffffffffff"},
	"CounterColumnType": {"", "0000000000000001", "ffffffffffffffff"},
	"TimestampType":     {"", "0000000000000000", "ffffffffffffffff", "8000000000000000", "00000174876e8000"},
	"DateType":          {"", "0000000000000000", "ffffffffffffffff", "8000000000000000", "00000174876e8000"},
	"Int32Type":         {"", "00000000", "00000001", "ffffffff", "80000000"},
	"IntegerType":       {"", "00", "0000", "ff", "ffff", "7f", "007f", "0080", "80"},
	"DecimalType":       {"", "00000001", "0000000000", "000000010a", "0000000264", "0000000001", "fffffffe05", "fffffffd01", "00000000ff", "80000000ff", "7fffffff01"},
	"DoubleType":        {"", "7ff8000000000000", "ffffffffffffffff", "8000000000000000", "0000000000000000", "3ff0000000000000", "fff0000000000000"},
	"FloatType":         {"", "7fc00000", "ffffffff", "80000000", "00000000", "3f800000"},
	"BooleanType":       {"", "00", "01", "ff"},
	"UUIDType":          {"", "00000000000000000000000000000000", "5fe94000f5bc11ea8000000000000000", "5fe94000f5bc11ea0000000000000000", "123456789abc4ef00000000000000000", "ffffffffffffffffffffffffffffffff"},
	"TimeUUIDType":      {"", "5fe94000f5bc11ea8000000000000000", "5fe94000f5bc11ea0000000000000000", "5fe94001f5bc11ea0000000000000000"},
	"LexicalUUIDType":   {"", "00000000000000000000000000000000", "80000000000000000000000000000000", "7fffffffffffffffffffffffffffffff"},
	"InetAddressType":   {"", "7f000001", "00000000000000000000000000000001", "7f000001000000000000000000000000"},
	"EmptyType":         {""},
}

// dynamicHeaders are component type names used by generated
// DynamicCompositeType values besides the aliases.
var dynamicHeaders = []string{"UTF8Type", mp + "LongType", "ReversedType(LongType)", "ReversedType(UTF8Type)",
	"DateType", "TimestampType", "IntegerType", "DecimalType", "CompositeType(UTF8Type,LongType)",
	"ReversedType(CompositeType(UTF8Type))", "BooleanType", "DoubleType", "EmptyType", ""}

// generate builds a valid value of t from the stream.
func generate(tb testing.TB, t Type, s *valueStream, depth int) []byte {
	switch v := t.(type) {
	case *Reversed:
		return generate(tb, v.base, s, depth)
	case *Composite:
		n := s.pick(len(v.types) + 1)
		if depth > 2 {
			n = 0
		}
		var out []byte
		for i := 0; i < n; i++ {
			eoc := byte(0)
			if i == n-1 {
				eoc = []byte{0, 1, 0xff}[s.pick(3)]
			}
			out = appendComponent(out, generate(tb, v.types[i], s, depth+1), eoc)
		}
		return out
	case *DynamicComposite:
		n := s.pick(4)
		if depth > 2 {
			n = 0
		}
		var out []byte
		for i := 0; i < n; i++ {
			var ct codec
			if k := s.pick(len(v.order) + len(dynamicHeaders)); k < len(v.order) {
				ct = v.aliases[v.order[k]]
				out = append(out, 0x80, v.order[k])
			} else {
				name := dynamicHeaders[k-len(v.order)]
				ct, _ = lookupClassName([]byte(name))
				out = append(out, byte(len(name)>>8), byte(len(name)))
				out = append(out, name...)
			}
			eoc := byte(0)
			if i == n-1 {
				eoc = []byte{0, 1, 0xff, 5}[s.pick(4)]
			}
			out = appendComponent(out, generate(tb, ct, s, depth+1), eoc)
		}
		return out
	}
	pool := samplePool[t.(codec).className()]
	b, err := hex.DecodeString(pool[s.pick(len(pool))])
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// FuzzStructuredValues builds valid values of the composite and nested
// types from the fuzz bytes (random raw bytes rarely form valid composite
// values) and checks the key invariants on them: order, bounds, decoding.
func FuzzStructuredValues(f *testing.F) {
	types := fuzzTypes(f)
	for i := range types {
		for _, seed := range []string{"", "\x01\x02\x03\x04\x05\x06\x07\x08", "\xff\x10\x20\x30\x40\x50\x60\x70\x80\x90"} {
			f.Add(uint8(i), []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		typ := types[int(which)%len(types)]
		s := &valueStream{data: data}
		raw := [][]byte{generate(t, typ, s, 0), generate(t, typ, s, 0), generate(t, typ, s, 0)}
		for _, v := range raw {
			if err := typ.Validate(v); err != nil {
				t.Fatalf("%s: generated %x does not validate: %v", typ.Name(), v, err)
			}
		}
		vals := make([][]byte, len(raw))
		keys := make([][]byte, len(raw))
		for i, v := range raw {
			vals[i] = typ.Normalize(v)
			keys[i] = typ.AppendKey(nil, vals[i])
			got, rest, err := typ.DecodeKey(nil, append(append([]byte(nil), keys[i]...), 0x00, 0x01))
			if err != nil || !bytes.Equal(rest, []byte{0x00, 0x01}) || typ.Compare(got, vals[i]) != 0 ||
				(typ.Lossless() && !bytes.Equal(got, vals[i])) {
				t.Fatalf("%s: DecodeKey of %x (key %x) = %x, %x, %v", typ.Name(), vals[i], keys[i], got, rest, err)
			}
		}
		for i := range vals {
			for j := range vals {
				c := typ.Compare(vals[i], vals[j])
				if sign(c) != sign(bytes.Compare(keys[i], keys[j])) {
					t.Fatalf("%s: Compare(%x, %x) = %d, keys %x %x", typ.Name(), vals[i], vals[j], c, keys[i], keys[j])
				}
				bound := raw[i]
				if len(bound) == 0 {
					continue
				}
				k := append(append([]byte(nil), keys[j]...), 0x00)
				if got, want := bytes.Compare(k, typ.AppendLowerBound(nil, bound)) >= 0, typ.Compare(bound, vals[j]) <= 0; got != want {
					t.Fatalf("%s: lower bound %x and %x: %v, want %v", typ.Name(), bound, vals[j], got, want)
				}
				if got, want := bytes.Compare(k, typ.AppendUpperBound(nil, bound)) < 0, typ.Compare(vals[j], bound) <= 0; got != want {
					t.Fatalf("%s: upper bound %x and %x: %v, want %v", typ.Name(), bound, vals[j], got, want)
				}
			}
		}
	})
}
