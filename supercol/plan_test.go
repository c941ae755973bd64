package supercol

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/internal/golden"
)

// planCase is one family planned with optional shape and sample.
type planCase struct {
	name     string
	keyspace string
	def      FamilyDef
	shape    Shape
	sample   []sampleCell
	noSample bool // plan without a Sample (even an empty one)

	wantShape Shape
	wantMixed bool
	wantPK    int // PrimaryKeyLen
}

var (
	userProfile = FamilyDef{
		Name: "UserProfile", KeyValidator: "UTF8Type", Comparator: "UTF8Type", DefaultValidator: "UTF8Type",
		Columns: []ColumnDef{
			{Name: "first_name", Validator: "UTF8Type"},
			{Name: "email", Validator: "UTF8Type", IndexName: "UserProfile_email_idx"},
			{Name: "age", Validator: "Int32Type"},
			{Name: "birth_date", Validator: "DateType"},
		},
	}
	addressBook = FamilyDef{
		Name: "AddressBook", Super: true, KeyValidator: "UTF8Type", Comparator: "UTF8Type",
		SubComparator: "UTF8Type", DefaultValidator: "UTF8Type",
	}
	likeCounts = FamilyDef{
		Name: "LikeCounts", KeyValidator: "UTF8Type", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType",
	}
)

func planCases() []planCase {
	manyNames := make([]sampleCell, 0, 40)
	for i := range 40 {
		manyNames = append(manyNames, sampleCell{"alice", fmt.Sprintf("field%02d", i)})
	}
	return []planCase{
		{
			name: "dynamic", keyspace: "Logs",
			def:       FamilyDef{Name: "ServerEvents", KeyValidator: "UTF8Type", Comparator: "TimeUUIDType", DefaultValidator: "UTF8Type"},
			wantShape: ShapeCompact, wantPK: 2,
		},
		{
			name: "dynamic_defaults", keyspace: "ks",
			def:       FamilyDef{Name: "raw"},
			wantShape: ShapeCompact, wantPK: 2,
		},
		{
			name: "composite", keyspace: "Likes",
			def:       FamilyDef{Name: "UserLikes", KeyValidator: "UTF8Type", Comparator: "CompositeType(TimeUUIDType,UTF8Type)", DefaultValidator: "BytesType"},
			wantShape: ShapeCompact, wantPK: 3,
		},
		{
			name: "reversed", keyspace: "ks",
			def:       FamilyDef{Name: "timeline", KeyValidator: "LongType", Comparator: "CompositeType(ReversedType(TimeUUIDType),UTF8Type,ReversedType(LongType))", DefaultValidator: "UTF8Type"},
			wantShape: ShapeCompact, wantPK: 4,
		},
		{
			name: "reversed_simple", keyspace: "ks",
			def:       FamilyDef{Name: "latest", KeyValidator: "UTF8Type", Comparator: "ReversedType(LongType)", DefaultValidator: "DoubleType"},
			wantShape: ShapeCompact, wantPK: 2,
		},
		{
			name: "super_compact", keyspace: "AddressBook", def: addressBook, noSample: true,
			wantShape: ShapeCompact, wantPK: 3,
		},
		{
			name: "super_compact_composite", keyspace: "ks",
			def: FamilyDef{
				Name: "readings", Super: true, KeyValidator: "UTF8Type", Comparator: "CompositeType(LongType,ReversedType(UTF8Type))",
				SubComparator: "CompositeType(UTF8Type,Int32Type)", DefaultValidator: "DoubleType",
			},
			wantShape: ShapeCompact, wantPK: 5,
		},
		{
			name: "super_compact_sample_overflow", keyspace: "AddressBook", def: addressBook, sample: manyNames,
			wantShape: ShapeCompact, wantPK: 3,
		},
		{
			name: "super_compact_bytes_names", keyspace: "Blog",
			def: FamilyDef{
				Name: "Comments", Super: true, KeyValidator: "UTF8Type", Comparator: "TimeUUIDType",
				SubComparator: "BytesType", DefaultValidator: "UTF8Type",
			},
			sample:    []sampleCell{{"e2d6b2a0-3f3c-11e0-9e2b-0800200c9a66", "617574686f72"}, {"e2d6b2a0-3f3c-11e0-9e2b-0800200c9a66", "626f6479"}},
			wantShape: ShapeCompact, wantPK: 3,
		},
		{
			name: "super_pivot_declared", keyspace: "ks", noSample: true,
			def: FamilyDef{
				Name: "Orders", Super: true, KeyValidator: "UTF8Type", Comparator: "TimeUUIDType",
				SubComparator: "UTF8Type", DefaultValidator: "UTF8Type",
				Columns: []ColumnDef{
					{Name: "item", Validator: "UTF8Type"},
					{Name: "quantity", Validator: "Int32Type"},
					{Name: "unitPrice", Validator: "DecimalType"},
					{Name: "shipped-at", Validator: "DateType"},
				},
			},
			wantShape: ShapePivot, wantPK: 2,
		},
		{
			name: "super_pivot_sampled", keyspace: "AddressBook", def: addressBook,
			sample: []sampleCell{
				{"alice", "street"}, {"alice", "city"}, {"alice", "zip"},
				{"bob", "street"}, {"bob", "phoneNumber"}, {"bob", "city"},
			},
			wantShape: ShapePivot, wantPK: 2,
		},
		{
			name: "super_pivot_forced_bytes", keyspace: "Blog", shape: ShapePivot,
			def: FamilyDef{
				Name: "Comments", Super: true, KeyValidator: "UTF8Type", Comparator: "TimeUUIDType",
				SubComparator: "BytesType", DefaultValidator: "UTF8Type",
			},
			sample:    []sampleCell{{"e2d6b2a0-3f3c-11e0-9e2b-0800200c9a66", "617574686f72"}, {"e2d6b2a0-3f3c-11e0-9e2b-0800200c9a66", "626f6479"}},
			wantShape: ShapePivot, wantPK: 2,
		},
		{
			name: "static", keyspace: "Profiles", def: userProfile,
			sample:    []sampleCell{{"", "first_name"}, {"", "email"}, {"", "age"}},
			wantShape: ShapeStatic, wantPK: 1,
		},
		{
			name: "static_mixed", keyspace: "Profiles", def: userProfile,
			sample:    []sampleCell{{"", "first_name"}, {"", "email"}, {"", "nickname"}},
			wantShape: ShapeStatic, wantMixed: true, wantPK: 2,
		},
		{
			name: "static_mixed_no_sample", keyspace: "Profiles", def: userProfile, noSample: true,
			wantShape: ShapeStatic, wantMixed: true, wantPK: 2,
		},
		{
			name: "static_mixed_requested", keyspace: "Profiles", def: userProfile, shape: ShapeMixed,
			sample:    []sampleCell{{"", "first_name"}},
			wantShape: ShapeStatic, wantMixed: true, wantPK: 2,
		},
		{
			name: "compact_requested_declared", keyspace: "Profiles", def: userProfile, shape: ShapeCompact,
			wantShape: ShapeCompact, wantPK: 2,
		},
		{
			name: "counter_standard", keyspace: "Counters", def: likeCounts,
			sample:    []sampleCell{{"", "2024-01-01"}},
			wantShape: ShapeCompact, wantPK: 2,
		},
		{
			name: "counter_super", keyspace: "Counters",
			def: FamilyDef{
				Name: "DailyLikeCounts", Super: true, KeyValidator: "UTF8Type", Comparator: "UTF8Type",
				SubComparator: "UTF8Type", DefaultValidator: "CounterColumnType",
				Columns: []ColumnDef{{Name: "likes", Validator: "CounterColumnType"}},
			},
			wantShape: ShapeCompact, wantPK: 3,
		},
		{
			name: "counter_static", keyspace: "Counters",
			def: FamilyDef{
				Name: "PageStats", KeyValidator: "UTF8Type", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType",
				Columns: []ColumnDef{{Name: "views", Validator: "CounterColumnType", IndexName: "views_idx"}, {Name: "clicks", Validator: "CounterColumnType"}},
			},
			sample:    []sampleCell{{"", "views"}, {"", "clicks"}},
			wantShape: ShapeStatic, wantPK: 1,
		},
		{
			name: "composite_row_key", keyspace: "Passbook",
			def:       FamilyDef{Name: "Passbook", KeyValidator: "CompositeType(UTF8Type,DateType)", Comparator: "TimeUUIDType", DefaultValidator: "DecimalType"},
			wantShape: ShapeCompact, wantPK: 3,
		},
		{
			name: "aliases", keyspace: "ks",
			def: FamilyDef{
				Name: "events", KeyValidator: "CompositeType(UTF8Type,Int32Type)", Comparator: "CompositeType(TimestampType,UTF8Type)",
				DefaultValidator: "BytesType", KeyAlias: "source", ColumnAliases: []string{"at", "Kind"}, ValueAlias: "payload",
			},
			wantShape: ShapeCompact, wantPK: 4,
		},
		{
			name: "aliases_extra", keyspace: "ks", noSample: true,
			def: FamilyDef{
				Name: "Orders", Super: true, KeyValidator: "UTF8Type", Comparator: "TimeUUIDType", SubComparator: "UTF8Type",
				DefaultValidator: "UTF8Type", KeyAlias: "customer", ColumnAliases: []string{"ordered_at", "unused"}, ValueAlias: "v",
				Columns: []ColumnDef{{Name: "item", Validator: "UTF8Type"}},
			},
			wantShape: ShapePivot, wantPK: 2,
		},
		{
			name: "quoting", keyspace: "MyApp",
			def: FamilyDef{
				Name: "Select", KeyValidator: "UTF8Type", Comparator: "UTF8Type", DefaultValidator: "UTF8Type",
				KeyAlias: "UserId",
				Columns: []ColumnDef{
					{Name: "select", Validator: "UTF8Type", IndexName: "select_idx"},
					{Name: "First Name", Validator: "UTF8Type"},
					{Name: "2fa", Validator: "BooleanType"},
					{Name: `say"hi"`, Validator: "UTF8Type"},
				},
			},
			sample:    []sampleCell{{"", "select"}},
			wantShape: ShapeStatic, wantPK: 1,
		},
		{
			name: "custom_types", keyspace: "ks",
			def: FamilyDef{
				Name: "legacy_ids", KeyValidator: "LexicalUUIDType", Comparator: "DynamicCompositeType(s=>UTF8Type,l=>LongType)",
				DefaultValidator: "CompositeType(UTF8Type,UTF8Type)",
			},
			wantShape: ShapeCompact, wantPK: 2,
		},
		{
			name: "validators_differ", keyspace: "ks",
			def: FamilyDef{
				Name: "mixed_types", KeyValidator: "UTF8Type", Comparator: "CompositeType(UTF8Type,LongType)", DefaultValidator: "UTF8Type",
				Columns: []ColumnDef{{Name: "a:1", Validator: "LongType", IndexName: "a_idx"}},
			},
			wantShape: ShapeCompact, wantPK: 3,
		},
		{
			name: "default_ttl", keyspace: "Logs",
			def: FamilyDef{
				Name: "Sessions", KeyValidator: "UUIDType", Comparator: "UTF8Type", DefaultValidator: "BytesType", DefaultTTL: 86400,
			},
			wantShape: ShapeCompact, wantPK: 2,
		},
		{
			name: "static_clash_falls_back", keyspace: "ks",
			def: FamilyDef{
				Name: "users", KeyValidator: "UTF8Type", Comparator: "UTF8Type", DefaultValidator: "UTF8Type",
				Columns: []ColumnDef{{Name: "e-mail", Validator: "UTF8Type"}, {Name: "e_mail", Validator: "UTF8Type"}},
			},
			wantShape: ShapeCompact, wantPK: 2,
		},
		{
			name: "static_declared_key_name", keyspace: "ks",
			def: FamilyDef{
				Name: "users", KeyValidator: "UTF8Type", Comparator: "UTF8Type", DefaultValidator: "UTF8Type",
				Columns: []ColumnDef{{Name: "key", Validator: "UTF8Type"}},
			},
			sample:    []sampleCell{{"", "key"}},
			wantShape: ShapeCompact, wantPK: 2,
		},
	}
}

// plan parses the case's family and plans it with its shape and sample.
func (tc planCase) plan(t *testing.T) (*Family, *Mapping) {
	t.Helper()
	f := mustFamily(t, tc.keyspace, tc.def)
	opts := Options{Shape: tc.shape}
	if !tc.noSample {
		opts.Sample = sampleOf(t, f, tc.sample...)
	}
	m, err := Plan(f, opts)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	return f, m
}

func TestPlanGolden(t *testing.T) {
	for _, tc := range planCases() {
		t.Run(tc.name, func(t *testing.T) {
			f, m := tc.plan(t)
			if m.Table.Shape != tc.wantShape || m.Mixed() != tc.wantMixed {
				t.Errorf("shape %s (mixed %v), want %s (mixed %v); reason: %s", m.Table.Shape, m.Mixed(), tc.wantShape, tc.wantMixed, m.Table.Reason)
			}
			if got := m.Table.PrimaryKeyLen(); got != tc.wantPK {
				t.Errorf("PrimaryKeyLen = %d, want %d", got, tc.wantPK)
			}
			if m.Table.Counter != f.Counter() {
				t.Errorf("Counter = %v, family counter %v", m.Table.Counter, f.Counter())
			}
			checkTableInvariants(t, m.Table)
			golden.Check(t, "supercol/testdata/plan/"+tc.name+".cql", []byte(describe(m)))
		})
	}
}

// checkTableInvariants checks what every table must satisfy: columns in
// key order, unique names, a non-key column, counters only with Counter.
func checkTableInvariants(t *testing.T, tb *Table) {
	t.Helper()
	seen := map[string]bool{}
	last := PartitionKey
	nonKey := 0
	for _, c := range tb.Columns {
		if seen[c.Name] {
			t.Errorf("column %s appears twice", c.Name)
		}
		seen[c.Name] = true
		if c.Kind < last && !(c.Kind == Static && last == Regular) {
			t.Errorf("column %s (%s) after a %s column", c.Name, c.Kind, last)
		}
		last = max(last, c.Kind)
		if c.Kind == Static || c.Kind == Regular {
			nonKey++
			if isCounter := c.Type.CQLType() == "counter"; isCounter != tb.Counter {
				t.Errorf("column %s of type %s in a table with Counter=%v", c.Name, c.Type.CQLType(), tb.Counter)
			}
		}
		if c.Descending && c.Kind != Clustering {
			t.Errorf("column %s is descending but not clustering", c.Name)
		}
	}
	if nonKey == 0 {
		t.Errorf("table %s has no static or regular column", tb.Name)
	}
	if tb.Columns[0].Kind != PartitionKey {
		t.Errorf("first column %s is not a partition key column", tb.Columns[0].Name)
	}
	for _, ix := range tb.Indexes {
		if !seen[ix.Column] {
			t.Errorf("index %s on unknown column %s", ix.Name, ix.Column)
		}
	}
}

func TestPlanRefusesShapesThatDoNotFit(t *testing.T) {
	superCounter := FamilyDef{Name: "C", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type", DefaultValidator: "CounterColumnType"}
	clash := FamilyDef{
		Name: "Orders", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type",
		Columns: []ColumnDef{{Name: "unit-price", Validator: "LongType"}, {Name: "unit_price", Validator: "LongType"}},
	}
	cases := []struct {
		name   string
		def    FamilyDef
		shape  Shape
		sample []sampleCell
		want   string
	}{
		{"pivot_standard", userProfile, ShapePivot, nil, "only Super families pivot"},
		{"pivot_counter", superCounter, ShapePivot, []sampleCell{{"a", "b"}}, "counter families"},
		{"pivot_nothing_known", addressBook, ShapePivot, nil, "sample saw none"},
		{"pivot_clash", clash, ShapePivot, nil, "used twice"},
		{"pivot_clash_with_key", FamilyDef{Name: "S", Super: true, SubComparator: "UTF8Type", Comparator: "UTF8Type",
			Columns: []ColumnDef{{Name: "column1", Validator: "UTF8Type"}}}, ShapePivot, nil, "used twice"},
		{"static_super", addressBook, ShapeStatic, nil, "Super families"},
		{"static_no_metadata", likeCounts, ShapeStatic, nil, "no column_metadata"},
		{"static_composite", FamilyDef{Name: "c", Comparator: "CompositeType(UTF8Type,LongType)", Columns: []ColumnDef{{Name: "a:1", Validator: "UTF8Type"}}},
			ShapeStatic, nil, "not used under the comparator"},
		{"static_counter_in_plain", FamilyDef{Name: "c", Comparator: "UTF8Type", DefaultValidator: "UTF8Type", Columns: []ColumnDef{{Name: "n", Validator: "CounterColumnType"}}},
			ShapeStatic, nil, "cannot mix counters"},
		{"mixed_value_clash", FamilyDef{Name: "c", Comparator: "UTF8Type", Columns: []ColumnDef{{Name: "value", Validator: "UTF8Type"}}},
			ShapeMixed, nil, "used twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := mustFamily(t, "ks", tc.def)
			opts := Options{Shape: tc.shape}
			if tc.sample != nil {
				opts.Sample = sampleOf(t, f, tc.sample...)
			} else if tc.def.Super {
				opts.Sample = NewSample(f)
			}
			m, err := Plan(f, opts)
			if err == nil {
				t.Fatalf("Plan(%s) chose %s, want an error", tc.shape, m.Table.Shape)
			}
			if !errors.Is(err, ErrShapeNotApplicable) {
				t.Errorf("error %v does not wrap ErrShapeNotApplicable", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "family ks."+tc.def.Name) {
				t.Errorf("error %q does not name the family and say %q", err, tc.want)
			}
		})
	}
}

func TestPlanRejectsBadInput(t *testing.T) {
	good := mustFamily(t, "ks", userProfile)
	other := mustFamily(t, "ks", likeCounts)
	cases := []struct {
		name string
		f    *Family
		opts Options
		want string
	}{
		{"unknown_shape", good, Options{Shape: "wide"}, "unknown shape"},
		{"sample_of_other_family", good, Options{Sample: NewSample(other)}, "sample was taken for family ks.LikeCounts"},
		{"bad_table_name", mustFamily(t, "ks", FamilyDef{Name: "my-table"}), Options{}, "not a valid CQL table name"},
		{"bad_keyspace_name", mustFamily(t, "key space", FamilyDef{Name: "t"}), Options{}, "not a valid CQL keyspace name"},
		{"alias_clash", mustFamily(t, "ks", FamilyDef{Name: "t", KeyAlias: "k", ValueAlias: "k"}), Options{}, "used twice (key_alias and value_alias)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Plan(tc.f, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Plan error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := Plan(nil, Options{}); err == nil {
		t.Error("Plan(nil) succeeded")
	}
}

func TestSampleIsBounded(t *testing.T) {
	f := mustFamily(t, "ks", addressBook)
	s := NewSample(f)
	for i := range 10 * sampleNameCap {
		s.Add([]byte("sc"), fmt.Appendf(nil, "name%04d", i))
	}
	s.Add([]byte("sc"), nil)
	s.Add(nil, []byte("orphan"))
	s.Add([]byte("sc"), []byte{0xff, 0xfe})
	if got := len(s.Names()); got != sampleNameCap {
		t.Errorf("sample keeps %d names, want the cap %d", got, sampleNameCap)
	}
	if !s.Overflow() {
		t.Error("Overflow not reported")
	}
	if s.Cells() != int64(10*sampleNameCap+3) || s.Invalid() != 3 {
		t.Errorf("Cells = %d, Invalid = %d", s.Cells(), s.Invalid())
	}
	names := s.Names()
	for i := 1; i < len(names); i++ {
		if f.SubComparator.Compare(names[i-1], names[i]) >= 0 {
			t.Fatalf("Names not in comparator order at %d: %q, %q", i, names[i-1], names[i])
		}
	}
}

func TestParseShape(t *testing.T) {
	for in, want := range map[string]Shape{"compact": ShapeCompact, " Pivot ": ShapePivot, "STATIC": ShapeStatic, "mixed": ShapeMixed} {
		if got, ok := ParseShape(in); !ok || got != want {
			t.Errorf("ParseShape(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := ParseShape("wide"); ok {
		t.Error(`ParseShape("wide") succeeded`)
	}
}
