package supercol

import (
	"testing"
)

// FuzzMapComposite maps random keys and names under CompositeType families
// (Standard and Super, compact and pivot): Map must never panic, and must
// either fail or place the cell with values valid for their columns.
func FuzzMapComposite(f *testing.F) {
	standard := mustFamily(f, "ks", FamilyDef{
		Name: "likes", KeyValidator: "CompositeType(UTF8Type,Int32Type)",
		Comparator:       "CompositeType(TimeUUIDType,ReversedType(UTF8Type),LongType,BooleanType)",
		DefaultValidator: "BytesType",
	})
	super := mustFamily(f, "ks", FamilyDef{
		Name: "readings", Super: true, KeyValidator: "UTF8Type",
		Comparator: "CompositeType(LongType,UUIDType)", SubComparator: "CompositeType(UTF8Type,DecimalType,IntegerType)",
		DefaultValidator: "DoubleType",
	})
	pivot := mustFamily(f, "ks", FamilyDef{
		Name: "orders", Super: true, KeyValidator: "UTF8Type",
		Comparator: "CompositeType(TimestampType,AsciiType)", SubComparator: "UTF8Type",
		Columns: []ColumnDef{{Name: "item", Validator: "UTF8Type"}, {Name: "qty", Validator: "Int32Type"}},
	})
	var mappings []*Mapping
	for _, fam := range []*Family{standard, super, pivot} {
		m, err := Plan(fam, Options{})
		if err != nil {
			f.Fatal(err)
		}
		mappings = append(mappings, m)
	}
	if mappings[2].Table.Shape != ShapePivot {
		f.Fatalf("pivot family planned as %s", mappings[2].Table.Shape)
	}
	f.Add(uint8(0), []byte{0, 1, 'a', 0, 0, 4, 0, 0, 0, 7, 0}, []byte(nil),
		[]byte{0, 16, 0xe2, 0xd6, 0xb2, 0xa0, 0x3f, 0x3c, 0x11, 0xe0, 0x9e, 0x2b, 0x08, 0, 0x20, 0x0c, 0x9a, 0x66, 0, 0, 1, 'x', 0})
	f.Add(uint8(0), []byte{0, 1, 'a', 0}, []byte(nil), []byte{0, 0, 0})
	f.Add(uint8(1), []byte("k"), []byte{0, 8, 0, 0, 0, 0, 0, 0, 0, 1, 0}, []byte{0, 1, 'n', 0, 0, 5, 0, 0, 0, 2, 7, 0})
	f.Add(uint8(1), []byte("k"), []byte{0, 8, 0, 0, 0, 0, 0, 0, 0, 1, 1}, []byte{0, 1, 'n', 1})
	f.Add(uint8(2), []byte("k"), []byte{0, 8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 'w', 0}, []byte("qty"))
	f.Add(uint8(2), []byte("k"), []byte{0, 0, 0}, []byte("other"))
	f.Add(uint8(0), []byte{0xff, 0xff, 0, 1, 'a', 0}, []byte(nil), []byte{0, 2, 'a'})
	f.Fuzz(func(t *testing.T, which uint8, key, superName, name []byte) {
		m := mappings[int(which)%len(mappings)]
		if !m.Family.Def.Super {
			superName = nil
		}
		var dst Placement
		if err := m.Map(key, superName, name, &dst); err != nil {
			return
		}
		checkPlacement(t, m, dst)
	})
}
