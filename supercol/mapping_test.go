package supercol

import (
	"errors"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// mapCell is one legacy cell in text form (super empty in Standard families).
type mapCell struct{ key, super, name string }

func (c mapCell) bytes(t *testing.T, f *Family) (key, super, name []byte) {
	t.Helper()
	key = mustBytes(t, f.KeyValidator.FromString, c.key)
	if f.Def.Super {
		super = mustBytes(t, f.Comparator.FromString, c.super)
	}
	return key, super, mustBytes(t, nameTypeOf(f).FromString, c.name)
}

func TestMap(t *testing.T) {
	orders := FamilyDef{
		Name: "Orders", Super: true, KeyValidator: "UTF8Type", Comparator: "CompositeType(LongType,ReversedType(UTF8Type))",
		SubComparator: "UTF8Type", DefaultValidator: "UTF8Type",
		Columns: []ColumnDef{{Name: "item", Validator: "UTF8Type"}, {Name: "quantity", Validator: "Int32Type"}},
	}
	cases := []struct {
		name    string
		def     FamilyDef
		shape   Shape
		sample  []sampleCell
		cell    mapCell
		wantKey []string // column values in their types' text forms
		wantCol string
	}{
		{
			name: "dynamic", def: FamilyDef{Name: "Events", KeyValidator: "UTF8Type", Comparator: "TimeUUIDType", DefaultValidator: "UTF8Type"},
			cell:    mapCell{key: "server1", name: "e2d6b2a0-3f3c-11e0-9e2b-0800200c9a66"},
			wantKey: []string{"server1", "e2d6b2a0-3f3c-11e0-9e2b-0800200c9a66"}, wantCol: "value",
		},
		{
			name: "composite_full", def: FamilyDef{Name: "Likes", KeyValidator: "UTF8Type", Comparator: "CompositeType(TimeUUIDType,UTF8Type)"},
			cell:    mapCell{key: "alice", name: "e2d6b2a0-3f3c-11e0-9e2b-0800200c9a66:item\\:42"},
			wantKey: []string{"alice", "e2d6b2a0-3f3c-11e0-9e2b-0800200c9a66", "item:42"}, wantCol: "value",
		},
		{
			name: "composite_short_name", def: FamilyDef{Name: "Likes", KeyValidator: "UTF8Type", Comparator: "CompositeType(UTF8Type,LongType,UUIDType)"},
			cell:    mapCell{key: "alice", name: "only"},
			wantKey: []string{"alice", "only", "", ""}, wantCol: "value",
		},
		{
			name: "composite_row_key", def: FamilyDef{Name: "Passbook", KeyValidator: "CompositeType(UTF8Type,Int32Type)", Comparator: "LongType", DefaultValidator: "DecimalType"},
			cell:    mapCell{key: "bob:2024", name: "7"},
			wantKey: []string{"bob", "2024", "7"}, wantCol: "value",
		},
		{
			name: "composite_row_key_short", def: FamilyDef{Name: "Passbook", KeyValidator: "CompositeType(UTF8Type,Int32Type)", Comparator: "LongType"},
			cell:    mapCell{key: "bob", name: "7"},
			wantKey: []string{"bob", "", "7"}, wantCol: "value",
		},
		{
			name: "super_compact_split", def: FamilyDef{
				Name: "Readings", Super: true, KeyValidator: "UTF8Type", Comparator: "CompositeType(LongType,ReversedType(UTF8Type))",
				SubComparator: "CompositeType(UTF8Type,Int32Type)", DefaultValidator: "DoubleType", ValueAlias: "reading",
			},
			cell:    mapCell{key: "sensor", super: "17:north", name: "temp:3"},
			wantKey: []string{"sensor", "17", "north", "temp", "3"}, wantCol: "reading",
		},
		{
			name: "super_pivot_declared", def: orders, shape: ShapePivot,
			cell:    mapCell{key: "carol", super: "1:web", name: "quantity"},
			wantKey: []string{"carol", "1", "web"}, wantCol: "quantity",
		},
		{
			name: "super_pivot_sampled", def: addressBook, sample: []sampleCell{{"home", "street"}, {"home", "City"}},
			cell:    mapCell{key: "dave", super: "home", name: "City"},
			wantKey: []string{"dave", "home"}, wantCol: "City",
		},
		{
			name: "super_compact_counter", def: FamilyDef{Name: "Daily", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type", DefaultValidator: "CounterColumnType"},
			cell:    mapCell{key: "0a0b", super: "2024-01-01", name: "likes"},
			wantKey: []string{"0a0b", "2024-01-01", "likes"}, wantCol: "value",
		},
		{
			name: "static_declared", def: userProfile, sample: []sampleCell{{"", "age"}},
			cell:    mapCell{key: "erin", name: "age"},
			wantKey: []string{"erin"}, wantCol: "age",
		},
		{
			name: "mixed_declared_is_static", def: userProfile,
			cell:    mapCell{key: "erin", name: "email"},
			wantKey: []string{"erin"}, wantCol: "email",
		},
		{
			name: "mixed_undeclared_is_clustered", def: userProfile,
			cell:    mapCell{key: "erin", name: "nickname"},
			wantKey: []string{"erin", "nickname"}, wantCol: "value",
		},
		{
			name: "static_integer_names_by_value", def: FamilyDef{
				Name: "Slots", KeyValidator: "UTF8Type", Comparator: "IntegerType", DefaultValidator: "UTF8Type",
				Columns: []ColumnDef{{Name: "1", Validator: "UTF8Type"}, {Name: "-2", Validator: "LongType"}},
			},
			sample:  []sampleCell{{"", "1"}},
			cell:    mapCell{key: "k", name: "-2"},
			wantKey: []string{"k"}, wantCol: "_2",
		},
		{
			name: "aliases", def: FamilyDef{Name: "ev", KeyValidator: "UTF8Type", Comparator: "CompositeType(UTF8Type,UTF8Type)", KeyAlias: "src", ColumnAliases: []string{"kind"}},
			cell:    mapCell{key: "a", name: "x:y"},
			wantKey: []string{"a", "x", "y"}, wantCol: "value",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := mustFamily(t, "ks", tc.def)
			opts := Options{Shape: tc.shape}
			if tc.sample != nil {
				opts.Sample = sampleOf(t, f, tc.sample...)
			}
			m, err := Plan(f, opts)
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			key, super, name := tc.cell.bytes(t, f)
			dst := Placement{Key: make([][]byte, 0, 1)}
			if err := m.Map(key, super, name, &dst); err != nil {
				t.Fatalf("Map: %v", err)
			}
			cols := m.Table.Columns
			if got := cols[dst.Column].Name; got != tc.wantCol {
				t.Errorf("value goes to column %s, want %s", got, tc.wantCol)
			}
			if k := cols[dst.Column].Kind; k != Regular && k != Static {
				t.Errorf("value goes to a %s column", k)
			}
			if len(dst.Key) != len(tc.wantKey) {
				t.Fatalf("Key has %d values, want %d", len(dst.Key), len(tc.wantKey))
			}
			for i, v := range dst.Key {
				if err := cols[i].Type.Validate(v); err != nil {
					t.Errorf("Key[%d] (%s) is not a valid %s: %v", i, cols[i].Name, cols[i].Type.CQLType(), err)
				}
				if got := cols[i].Type.String(v); got != tc.wantKey[i] {
					t.Errorf("Key[%d] (%s) = %q, want %q", i, cols[i].Name, got, tc.wantKey[i])
				}
				if tc.wantKey[i] == "" && (v == nil || len(v) != 0) {
					t.Errorf("Key[%d] = %#v, want a non-nil empty value", i, v)
				}
			}
			checkPlacement(t, m, dst)
		})
	}
}

func TestMapReusesKeyBuffer(t *testing.T) {
	f := mustFamily(t, "ks", FamilyDef{Name: "c", KeyValidator: "UTF8Type", Comparator: "CompositeType(UTF8Type,UTF8Type)"})
	m, err := Plan(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dst := Placement{Key: make([][]byte, 0, 8)}
	key, name := []byte("k"), mustBytes(t, f.Comparator.FromString, "a:b")
	if err := m.Map(key, nil, name, &dst); err != nil {
		t.Fatal(err)
	}
	first := &dst.Key[:1][0]
	allocs := testing.AllocsPerRun(100, func() {
		if err := m.Map(key, nil, name, &dst); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Map allocates %.1f times per cell with a reused Placement", allocs)
	}
	if &dst.Key[:1][0] != first {
		t.Error("Map did not reuse dst.Key")
	}
}

func TestMapErrors(t *testing.T) {
	pivot := mustFamily(t, "Shop", FamilyDef{
		Name: "Orders", Super: true, KeyValidator: "UTF8Type", Comparator: "UTF8Type", SubComparator: "UTF8Type",
		Columns: []ColumnDef{{Name: "item", Validator: "UTF8Type"}, {Name: "quantity", Validator: "Int32Type"}},
	})
	pivotMapping, err := Plan(pivot, Options{})
	if err != nil || pivotMapping.Table.Shape != ShapePivot {
		t.Fatalf("Plan pivot: %v", err)
	}
	static := mustFamily(t, "Profiles", userProfile)
	staticMapping, err := Plan(static, Options{Sample: sampleOf(t, static, sampleCell{"", "age"})})
	if err != nil || staticMapping.Table.Shape != ShapeStatic || staticMapping.Mixed() {
		t.Fatalf("Plan static: %v", err)
	}
	composite := mustFamily(t, "ks", FamilyDef{Name: "c", KeyValidator: "CompositeType(UTF8Type,LongType)", Comparator: "CompositeType(UTF8Type,LongType)"})
	compositeMapping, err := Plan(composite, Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := func(s string) []byte { return []byte(s) }
	cases := []struct {
		name            string
		m               *Mapping
		key, super, col []byte
		target          error
		want            []string
	}{
		{"pivot_unknown_subcolumn", pivotMapping, u("carol"), u("order1"), u("discount"), ErrUnknownColumn,
			[]string{`family Shop.Orders`, `row key "carol"`, `super column "order1"`, `subcolumn "discount" is not one of the pivot columns (item, quantity)`}},
		{"static_undeclared", staticMapping, u("erin"), nil, u("nickname"), ErrUnknownColumn,
			[]string{`column "nickname" is not one of the static columns`}},
		{"pivot_missing_super", pivotMapping, u("carol"), nil, u("item"), ErrInvalidCell, []string{"needs a super column name"}},
		{"standard_with_super", staticMapping, u("erin"), u("x"), u("age"), ErrInvalidCell, []string{"has no super column name"}},
		{"empty_name", staticMapping, u("erin"), nil, u(""), ErrInvalidCell, []string{"empty column name"}},
		{"empty_key", compositeMapping, u(""), nil, []byte{0, 1, 'a', 0}, ErrInvalidCell, []string{"empty row key"}},
		{"bad_composite_name", compositeMapping, []byte{0, 1, 'a', 0}, nil, []byte{0, 5, 'a'}, ErrInvalidCell,
			[]string{"column name", "column 0x000561"}},
		{"too_many_components", compositeMapping, []byte{0, 1, 'a', 0}, nil,
			[]byte{0, 1, 'a', 0, 0, 0, 0, 0, 1, 'b', 0}, ErrInvalidCell, []string{"Too many bytes for comparator"}},
		{"bad_key_component", compositeMapping, []byte{0, 1, 'a', 0, 0, 3, 1, 2, 3, 0}, nil, []byte{0, 1, 'a', 0}, ErrInvalidCell,
			[]string{"row key"}},
		{"invalid_utf8_subcolumn", pivotMapping, u("carol"), u("o"), []byte{0xff}, ErrInvalidCell, []string{"subcolumn"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst := Placement{Key: make([][]byte, 0, 4)}
			err := tc.m.Map(tc.key, tc.super, tc.col, &dst)
			if err == nil {
				t.Fatalf("Map succeeded: %+v", dst)
			}
			if !errors.Is(err, tc.target) {
				t.Errorf("error %v does not wrap %v", err, tc.target)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestMapEveryShapeValidates(t *testing.T) {
	// Every fixture-like family maps a valid cell to values that its column
	// types accept, with Key covering the declared primary key prefix.
	for _, tc := range planCases() {
		t.Run(tc.name, func(t *testing.T) {
			f, m := tc.plan(t)
			key := sampleValue(t, f.KeyValidator)
			var super []byte
			if f.Def.Super {
				super = sampleValue(t, f.Comparator)
			}
			names := [][]byte{sampleValue(t, nameTypeOf(f))}
			for _, c := range f.Columns {
				names = append(names, c.Name)
			}
			for _, name := range names {
				var dst Placement
				err := m.Map(key, super, name, &dst)
				if errors.Is(err, ErrUnknownColumn) {
					continue
				}
				if err != nil {
					t.Fatalf("Map(%x, %x, %x): %v", key, super, name, err)
				}
				checkPlacement(t, m, dst)
			}
		})
	}
}

// sampleValue is a valid non-empty value of t, built from a text form its
// components accept.
func sampleValue(t *testing.T, typ marshal.Type) []byte {
	t.Helper()
	for _, s := range []string{"e2d6b2a0-3f3c-11e0-9e2b-0800200c9a66", "42", "true", "10.0.0.1", "2024-01-02 03:04:05+0000", "42:e2d6b2a0-3f3c-11e0-9e2b-0800200c9a66", "abc:42"} {
		if b, err := typ.FromString(s); err == nil && len(b) > 0 && typ.Validate(b) == nil {
			return b
		}
	}
	if _, ok := typ.(*marshal.DynamicComposite); ok {
		return []byte{0x80, 's', 0, 1, 'x', 0} // alias s, value "x"
	}
	t.Fatalf("no sample value for %s", typ.Name())
	return nil
}

// checkPlacement checks a successful placement against the table.
func checkPlacement(t *testing.T, m *Mapping, dst Placement) {
	t.Helper()
	cols := m.Table.Columns
	if dst.Column < 0 || dst.Column >= len(cols) {
		t.Fatalf("Column %d out of range", dst.Column)
	}
	target := cols[dst.Column]
	switch target.Kind {
	case Static:
		if len(dst.Key) != m.Table.PartitionKeyLen() {
			t.Errorf("static column %s with %d key values", target.Name, len(dst.Key))
		}
	case Regular:
		if len(dst.Key) != m.Table.PrimaryKeyLen() {
			t.Errorf("regular column %s with %d key values, want %d", target.Name, len(dst.Key), m.Table.PrimaryKeyLen())
		}
	default:
		t.Errorf("value goes to key column %s", target.Name)
	}
	for i, v := range dst.Key {
		if cols[i].Kind != PartitionKey && cols[i].Kind != Clustering {
			t.Fatalf("Key[%d] is for non-key column %s", i, cols[i].Name)
		}
		if v == nil {
			t.Errorf("Key[%d] is nil", i)
		}
		if err := cols[i].Type.Validate(v); err != nil {
			t.Errorf("Key[%d] %x is not a valid %s: %v", i, v, cols[i].Type.Name(), err)
		}
	}
}
