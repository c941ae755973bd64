package marshal

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// TestDecimalAgainstBigRat compares DecimalType's Compare and keys with
// exact rational arithmetic on random values, including non-minimal
// unscaled encodings and scales at the int32 limits.
func TestDecimalAgainstBigRat(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	scales := []int32{0, 1, -1, 2, 5, -7, 18, 19, 20, -19, -20, 40, -40, math.MaxInt32, math.MinInt32, math.MaxInt32 - 3, math.MinInt32 + 3}
	randDecimal := func() []byte {
		n := rng.Intn(24)
		u := make([]byte, n)
		rng.Read(u)
		if rng.Intn(4) == 0 && n > 1 {
			u[0] = 0 // redundant sign byte (sometimes)
		}
		var s int32
		if rng.Intn(2) == 0 {
			s = scales[rng.Intn(len(scales))]
		} else {
			s = int32(rng.Intn(60) - 30)
		}
		return append(binary.BigEndian.AppendUint32(nil, uint32(s)), u...)
	}
	rat := func(b []byte) *big.Rat {
		s := int64(int32(binary.BigEndian.Uint32(b)))
		r := new(big.Rat).SetInt(varintToBig(b[4:]))
		if s > 1000 || s < -1000 {
			return nil // too large to evaluate exactly here
		}
		p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(absInt64(s)), nil))
		if s >= 0 {
			return r.Quo(r, p)
		}
		return r.Mul(r, p)
	}
	var d DecimalType
	for i := 0; i < 20000; i++ {
		a, b := randDecimal(), randDecimal()
		c := d.Compare(a, b)
		if ra, rb := rat(a), rat(b); ra != nil && rb != nil {
			if want := ra.Cmp(rb); sign(c) != want {
				t.Fatalf("Compare(%x, %x) = %d, exact %d", a, b, c, want)
			}
		}
		ka, kb := d.AppendKey(nil, a), d.AppendKey(nil, b)
		if sign(c) != sign(bytes.Compare(ka, kb)) {
			t.Fatalf("Compare(%x, %x) = %d, keys %x %x", a, b, c, ka, kb)
		}
		v, rest, err := d.DecodeKey(nil, ka)
		if err != nil || len(rest) != 0 || d.Compare(v, a) != 0 {
			t.Fatalf("DecodeKey(%x) of %x = %x, %v", ka, a, v, err)
		}
	}
}

// TestIntegerAgainstBigInt compares IntegerType with math/big.
func TestIntegerAgainstBigInt(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	randVarint := func() []byte {
		b := make([]byte, 1+rng.Intn(12))
		rng.Read(b)
		if rng.Intn(3) == 0 {
			pad := byte(0)
			if b[0] >= 0x80 {
				pad = 0xFF
			}
			b = append([]byte{pad, pad}, b...)
		}
		return b
	}
	var it IntegerType
	for i := 0; i < 20000; i++ {
		a, b := randVarint(), randVarint()
		c := it.Compare(a, b)
		if want := varintToBig(a).Cmp(varintToBig(b)); sign(c) != want {
			t.Fatalf("Compare(%x, %x) = %d, want %d", a, b, c, want)
		}
		if ka, kb := it.AppendKey(nil, a), it.AppendKey(nil, b); sign(c) != sign(bytes.Compare(ka, kb)) {
			t.Fatalf("keys of %x, %x disagree with Compare", a, b)
		}
		if s := it.String(a); s != varintToBig(a).String() {
			t.Fatalf("String(%x) = %s", a, s)
		}
	}
}

// TestDynamicCompositeTypeOrder checks components of different and nested
// types against the class-name rule.
func TestDynamicCompositeTypeOrder(t *testing.T) {
	typ := mustParse(t, "DynamicCompositeType(a=>AsciiType,r=>ReversedType(UTF8Type),q=>ReversedType(LongType),c=>CompositeType(UTF8Type),d=>DateType,t=>TimestampType)")
	comp := func(alias byte, value []byte) []byte {
		return appendComponent([]byte{0x80, alias}, value, 0)
	}
	named := func(name string, value []byte) []byte {
		b := []byte{byte(len(name) >> 8), byte(len(name))}
		return appendComponent(append(b, name...), value, 0)
	}
	long := func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
	ordered := [][]byte{
		comp('a', []byte("z")),                          // AsciiType
		comp('c', appendComponent(nil, []byte("a"), 0)), // CompositeType
		named(mp+"CompositeType("+mp+"UTF8Type)", appendComponent(nil, []byte("b"), 0)),
		comp('d', long(1)),                                   // DateType: unsigned
		comp('d', long(-1)),                                  //   so -1 after 1
		named("ReversedType(Int32Type)", []byte{0, 0, 0, 1}), // ReversedType, base Int32Type
		comp('q', long(5)),                                   // ReversedType, base LongType
		comp('q', long(-5)),
		comp('r', []byte("b")), // ReversedType, base UTF8Type
		comp('r', []byte("a")),
		comp('t', long(-1)), // TimestampType: signed
		comp('t', long(1)),
		named("UTF8Type", []byte("a")),
	}
	for i, v := range ordered {
		if err := typ.Validate(v); err != nil {
			t.Fatalf("%x: %v", v, err)
		}
		if i == 0 {
			continue
		}
		p := ordered[i-1]
		if typ.Compare(p, v) >= 0 {
			t.Errorf("Compare(%x, %x) >= 0", p, v)
		}
		if bytes.Compare(typ.AppendKey(nil, p), typ.AppendKey(nil, v)) >= 0 {
			t.Errorf("keys of %x, %x not increasing", p, v)
		}
	}
}
