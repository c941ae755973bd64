package marshal

import (
	"bytes"
	"testing"
)

// fuzzTypeNames are the types the fuzz targets exercise: the 22
// comparators of ordering.json (first, in that order, so that vector seeds
// can name them), then the remaining types and nestings.
var fuzzTypeNames = []string{
	"BytesType", "AsciiType", "UTF8Type", "LongType", "Int32Type", "IntegerType",
	"DecimalType", "DoubleType", "FloatType", "BooleanType", "DateType",
	"TimestampType", "UUIDType", "TimeUUIDType", "LexicalUUIDType", "InetAddressType",
	"CompositeType(UTF8Type,LongType)", "CompositeType(TimeUUIDType,UTF8Type)",
	"CompositeType(LongType,ReversedType(UTF8Type))",
	"ReversedType(LongType)", "ReversedType(TimeUUIDType)",
	"DynamicCompositeType(s=>UTF8Type,l=>LongType,b=>BytesType)",
	"CounterColumnType", "EmptyType",
	"ReversedType(IntegerType)", "ReversedType(DecimalType)", "ReversedType(BytesType)",
	"CompositeType(IntegerType,DecimalType,ReversedType(DoubleType))",
	"CompositeType(InetAddressType,UUIDType,LexicalUUIDType,FloatType,BooleanType)",
	"CompositeType(CompositeType(UTF8Type,LongType),ReversedType(CompositeType(BytesType)))",
	"ReversedType(CompositeType(UTF8Type,LongType))",
	"DynamicCompositeType(d=>DateType,t=>TimestampType,c=>CompositeType(UTF8Type,LongType),r=>ReversedType(LongType),q=>ReversedType(UTF8Type),i=>IntegerType,x=>DecimalType,a=>AsciiType)",
	"CompositeType(DynamicCompositeType(s=>UTF8Type,l=>LongType),Int32Type)",
}

func fuzzTypes(tb testing.TB) []Type {
	types := make([]Type, len(fuzzTypeNames))
	for i, n := range fuzzTypeNames {
		types[i] = mustParse(tb, n)
	}
	return types
}

// addVectorSeeds adds pairs of neighbouring values of ordering.json and
// every validation vector name as seeds.
func addVectorSeeds(f *testing.F) {
	var ov orderingVectors
	loadVectors(f, "ordering.json", &ov)
	for i, vec := range ov.Types {
		for j := range vec.OrderHex {
			k := (j + 1) % len(vec.OrderHex)
			f.Add(uint8(i), unhex(f, vec.OrderHex[j]), unhex(f, vec.OrderHex[k]))
		}
		for _, g := range vec.EqualGroups {
			f.Add(uint8(i), unhex(f, g.Names[0]), unhex(f, g.Names[len(g.Names)-1]))
		}
	}
	addTextSeeds(f)
	var cs compositeSliceVectors
	loadVectors(f, "composite_slices.json", &cs)
	for _, q := range cs.Queries {
		for _, s := range cs.Stored {
			f.Add(uint8(16), unhex(f, q.Start), unhex(f, s))
		}
	}
}

// textSeeds are values, in String form, of the fuzz types that
// ordering.json does not cover, keyed by their index in fuzzTypeNames.
var textSeeds = map[int][]string{
	22: {"5", "-3", ""},
	23: {""},
	24: {"-129", "12345678901234567890", "0"},
	25: {"1.50", "-2E+3", "1.5", "0E-7"},
	26: {"00ff", "", "00"},
	27: {"5:1.5:NaN", "-5:0E+2:-0.0", "5:1.50", "5:!", "5:1.5:_"},
	28: {"10.0.0.1:5fe94000-f5bc-11ea-8000-000000000000:5fe94000-f5bc-11ea-8000-000000000000:1.5:true",
		"10.0.0.1:5fe94000-f5bc-11ea-8000-000000000000", "\\:\\:1"},
	30: {"a:5", "a:!", "b", "a:_"},
	31: {"d@1000:t@-5", "c@x:r@5", "q@abc:!", "i@-7:x@1.5", "a@abc", "UTF8Type@zz",
		"org.apache.cassandra.db.marshal.LongType@5", "ReversedType(LongType)@5:_", "DateType@-1"},
}

func addTextSeeds(f *testing.F) {
	types := fuzzTypes(f)
	for i, texts := range textSeeds {
		var values [][]byte
		for _, s := range texts {
			v, err := types[i].FromString(s)
			if err != nil {
				f.Fatalf("seed %q for %s: %v", s, types[i].Name(), err)
			}
			values = append(values, v)
		}
		for j := range values {
			f.Add(uint8(i), values[j], values[(j+1)%len(values)])
		}
	}
	inner := appendComponent(appendComponent(nil, []byte("a"), 0), make([]byte, 8), 1)
	nested := appendComponent(appendComponent(nil, inner, 0), appendComponent(nil, []byte{1}, 0xFF), 0)
	f.Add(uint8(29), nested, appendComponent(nil, inner[:len(inner)-1], 0))
	dyn := appendComponent([]byte{0x80, 's'}, []byte("x"), 0)
	f.Add(uint8(32), appendComponent(appendComponent(nil, dyn, 0), []byte{0, 0, 0, 1}, 0), appendComponent(nil, dyn, 0))
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// FuzzKeyOrder holds the central invariant: for valid (normalised) values,
// Compare and the byte order of the keys agree, and slice bounds include a
// name exactly when Cassandra's comparison puts it inside the bound.
func FuzzKeyOrder(f *testing.F) {
	addVectorSeeds(f)
	types := fuzzTypes(f)
	f.Fuzz(func(t *testing.T, which uint8, a, b []byte) {
		typ := types[int(which)%len(types)]
		if typ.Validate(a) != nil || typ.Validate(b) != nil {
			return
		}
		bound := a
		a, b = typ.Normalize(a), typ.Normalize(b)
		ka, kb := typ.AppendKey(nil, a), typ.AppendKey(nil, b)
		c := typ.Compare(a, b)
		if sign(c) != sign(bytes.Compare(ka, kb)) {
			t.Fatalf("%s: Compare(%x, %x) = %d but keys %x, %x", typ.Name(), a, b, c, ka, kb)
		}
		if sign(typ.Compare(b, a)) != -sign(c) {
			t.Fatalf("%s: Compare(%x, %x) is not antisymmetric", typ.Name(), a, b)
		}
		if len(bound) == 0 {
			return // an empty bound means "unbounded", handled by the caller
		}
		lower, upper := typ.AppendLowerBound(nil, bound), typ.AppendUpperBound(nil, bound)
		for _, suffix := range [][]byte{nil, {0x00}, {0x01, 0xff, 0xff}} {
			k := append(append([]byte(nil), kb...), suffix...)
			if got, want := bytes.Compare(k, lower) >= 0, typ.Compare(bound, b) <= 0; got != want {
				t.Fatalf("%s: lower bound %x (key %x) includes %x (key %x): %v, want %v", typ.Name(), bound, lower, b, k, got, want)
			}
			if got, want := bytes.Compare(k, upper) < 0, typ.Compare(b, bound) <= 0; got != want {
				t.Fatalf("%s: upper bound %x (key %x) includes %x (key %x): %v, want %v", typ.Name(), bound, upper, b, k, got, want)
			}
		}
	})
}

// FuzzDecodeKey: a key decodes to a value equal to the encoded one (the
// very bytes for Lossless types), the bytes after the key are returned
// untouched (the encoding is prefix-free), and re-encoding gives the same
// key. Decoding arbitrary bytes must not panic.
func FuzzDecodeKey(f *testing.F) {
	addVectorSeeds(f)
	types := fuzzTypes(f)
	f.Fuzz(func(t *testing.T, which uint8, a, tail []byte) {
		typ := types[int(which)%len(types)]
		if v, rest, err := typ.DecodeKey(nil, a); err == nil && len(rest) > len(a) {
			t.Fatalf("%s: DecodeKey(%x) = %x with a longer rest %x", typ.Name(), a, v, rest)
		}
		if typ.Validate(a) != nil {
			return
		}
		a = typ.Normalize(a)
		key := typ.AppendKey(nil, a)
		src := append(append([]byte(nil), key...), tail...)
		dst := []byte("prefix")
		v, rest, err := typ.DecodeKey(dst, src)
		if err != nil {
			t.Fatalf("%s: DecodeKey(%x) of %x: %v", typ.Name(), src, a, err)
		}
		if !bytes.Equal(rest, tail) {
			t.Fatalf("%s: DecodeKey(%x) left %x, want %x", typ.Name(), src, rest, tail)
		}
		if !bytes.HasPrefix(v, []byte("prefix")) {
			t.Fatalf("%s: DecodeKey did not append to dst: %q", typ.Name(), v)
		}
		v = v[len("prefix"):]
		if typ.Validate(v) != nil {
			t.Fatalf("%s: decoded %x of %x does not validate: %v", typ.Name(), v, a, typ.Validate(v))
		}
		if typ.Compare(v, a) != 0 {
			t.Fatalf("%s: decoded %x, encoded %x", typ.Name(), v, a)
		}
		if typ.Lossless() && !bytes.Equal(v, a) {
			t.Fatalf("%s (lossless): decoded %x, encoded %x", typ.Name(), v, a)
		}
		if k2 := typ.AppendKey(nil, v); !bytes.Equal(k2, key) {
			t.Fatalf("%s: key of decoded %x is %x, want %x", typ.Name(), v, k2, key)
		}
	})
}

// FuzzParse: Parse never panics and Parse(Name()) gives the same type.
func FuzzParse(f *testing.F) {
	for _, n := range fuzzTypeNames {
		f.Add(n)
		f.Add(mustParse(f, n).Name())
	}
	for _, s := range []string{"", "(", "CompositeType(", "DynamicCompositeType(a=>", "LongType(reversed=true)",
		"ReversedType(ReversedType(LongType))", "CompositeType(,)", "DynamicCompositeType(a=>LongType,a=>UTF8Type)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		typ, err := Parse(s)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("Parse(%q): error of type %T", s, err)
			}
			return
		}
		again, err := Parse(typ.Name())
		if err != nil {
			t.Fatalf("Parse(%q).Name() = %q does not parse: %v", s, typ.Name(), err)
		}
		if again.Name() != typ.Name() || !Equal(again, typ) {
			t.Fatalf("Parse(%q): Name %q parses back as %q", s, typ.Name(), again.Name())
		}
	})
}

// FuzzArbitraryBytes: no method panics on bytes that are not valid values.
func FuzzArbitraryBytes(f *testing.F) {
	addVectorSeeds(f)
	types := fuzzTypes(f)
	f.Fuzz(func(t *testing.T, which uint8, a, b []byte) {
		typ := types[int(which)%len(types)]
		_ = typ.Validate(a)
		_ = typ.Compare(a, b)
		_ = typ.AppendKey(nil, a)
		_ = typ.AppendLowerBound(nil, a)
		_ = typ.AppendUpperBound(nil, a)
		_ = typ.Normalize(a)
		_ = typ.String(a)
		_ = typ.CQLLiteral(a)
		_, _ = typ.FromString(string(a))
		_, _, _ = typ.DecodeKey(nil, a)
	})
}

// FuzzTextRoundTrip: FromString(String(v)) equals v for valid values of
// the simple types (composites are left out: Cassandra's text form cannot
// tell one empty component from none, or a "_" component from an EOC).
func FuzzTextRoundTrip(f *testing.F) {
	addVectorSeeds(f)
	types := fuzzTypes(f)
	f.Fuzz(func(t *testing.T, which uint8, a, _ []byte) {
		typ := types[int(which)%len(types)]
		switch typ.(type) {
		case *Composite, *DynamicComposite, *Reversed:
			return
		case BooleanType:
			if len(a) == 0 {
				return // Cassandra reads "" as false
			}
		}
		if typ.Validate(a) != nil {
			return
		}
		s := typ.String(a)
		back, err := typ.FromString(s)
		if err != nil {
			t.Fatalf("%s: FromString(%q) of %x: %v", typ.Name(), s, a, err)
		}
		if typ.Compare(back, a) != 0 {
			t.Fatalf("%s: FromString(String(%x) = %q) = %x", typ.Name(), a, s, back)
		}
	})
}
