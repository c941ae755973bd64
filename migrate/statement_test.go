package migrate

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/internal/golden"
	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/supercol"
)

func mustType(t testing.TB, name string) marshal.Type {
	t.Helper()
	typ, err := marshal.Parse(name)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// literalCases are values of every marshal type, as raw hex.
var literalCases = []struct{ typ, hex string }{
	{"BytesType", "00ff10"},
	{"BytesType", ""},
	{"AsciiType", hex.EncodeToString([]byte("plain ascii"))},
	{"UTF8Type", hex.EncodeToString([]byte("it's ünïcode"))},
	{"UTF8Type", hex.EncodeToString([]byte("two\nlines; and a ? mark"))},
	{"UTF8Type", "610062"},
	{"UTF8Type", ""},
	{"LongType", "fffffffffffffffe"},
	{"LongType", ""},
	{"Int32Type", "00000400"},
	{"IntegerType", "ff7f"},
	{"IntegerType", "0100000000000000000000"},
	{"DecimalType", "00000002ff6a"},
	{"DecimalType", "fffffffd" + "fe"},
	{"DoubleType", "3ff8000000000000"},
	{"DoubleType", "fff0000000000000"},
	{"FloatType", "3dcccccd"},
	{"BooleanType", "01"},
	{"BooleanType", "00"},
	{"DateType", "00000174876e8000"},
	{"TimestampType", "ffffffffffffffff"},
	{"UUIDType", "6ba7b8109dad11d180b400c04fd430c8"},
	{"TimeUUIDType", "d2177dd0eaa211e5a8370800200c9a66"},
	{"LexicalUUIDType", "00112233445566778899aabbccddeeff"},
	{"InetAddressType", "7f000001"},
	{"InetAddressType", "20010db8000000000000000000000001"},
	{"CounterColumnType", "0000000000000007"},
	{"ReversedType(LongType)", "0000000000000010"},
	{"CompositeType(UTF8Type,LongType)", "0003616263" + "00" + "0008" + "0000000000000001" + "00"},
	{"EmptyType", ""},
}

// TestLiterals renders a statement binding a value of every type, checks
// the text against the golden file and reads every literal back to an
// equal value.
func TestLiterals(t *testing.T) {
	var out bytes.Buffer
	for _, c := range literalCases {
		typ := mustType(t, c.typ)
		val := mustHex(t, c.hex)
		if err := typ.Validate(val); err != nil {
			t.Fatalf("%s %s: test value invalid: %v", c.typ, c.hex, err)
		}
		st := Statement{
			CQL:    "INSERT INTO ks.\"odd?name\" (k, v) VALUES (?, ?) USING TTL ? AND TIMESTAMP ?",
			Values: []Value{{Type: marshal.UTF8Type{}, Bytes: []byte("k")}, {Type: typ, Bytes: val}, {Type: marshal.Int32Type{}, Bytes: []byte{0, 0, 0, 60}}, {Type: marshal.LongType{}, Bytes: mustHex(t, "0005d4c2b5f0a9c0")}}, // 1641307624745408
		}
		text := st.Inline()
		fmt.Fprintf(&out, "%s 0x%s\n%s\n", c.typ, c.hex, text)

		lit := typ.CQLLiteral(val)
		if !strings.Contains(text, "VALUES ('k', "+lit+") USING TTL 60 AND TIMESTAMP 1641307624745408;") {
			t.Errorf("%s: %s does not bind the literal %s", c.typ, text, lit)
		}
		back, err := parseLiteral(typ, lit)
		if err != nil {
			t.Errorf("%s: read back %s: %v", c.typ, lit, err)
			continue
		}
		if !bytes.Equal(back, val) && typ.Compare(back, val) != 0 {
			t.Errorf("%s: literal %s reads back as %x, want %x", c.typ, lit, back, val)
		}
	}
	golden.Check(t, "migrate/testdata/literals.golden", out.Bytes())
}

func TestParseReplication(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"", DefaultReplication, ""},
		{`{"class": "NetworkTopologyStrategy", "dc1": 3, "dc2": 2}`, "{'class': 'NetworkTopologyStrategy', 'dc1': '3', 'dc2': '2'}", ""},
		{`{'class':'SimpleStrategy','replication_factor':1}`, "{'class': 'SimpleStrategy', 'replication_factor': '1'}", ""},
		{`{"dc1": 3}`, "", "missing 'class'"},
		{`class=Simple`, "", "expected a map"},
		{`{"class" "x"}`, "", "not key: value"},
	}
	for _, tt := range tests {
		got, err := ParseReplication(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseReplication(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseReplication(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// testFamilies is a keyspace of families of every kind.
func testKeyspace() supercol.KeyspaceDef {
	return supercol.KeyspaceDef{Name: "Blog", Families: []supercol.FamilyDef{
		{Name: "Users", KeyValidator: "UTF8Type", Comparator: "UTF8Type", DefaultValidator: "UTF8Type"},
		{Name: "Comments", Super: true, KeyValidator: "UTF8Type", Comparator: "TimeUUIDType", SubComparator: "UTF8Type", DefaultValidator: "UTF8Type"},
		{Name: "Likes", KeyValidator: "UTF8Type", Comparator: "CompositeType(TimeUUIDType,UTF8Type)", DefaultValidator: "BytesType"},
		{Name: "Hits", KeyValidator: "UTF8Type", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"},
	}}
}

// planTable maps one family of testKeyspace with its default shape.
func planTable(t testing.TB, family string) *supercol.Mapping {
	t.Helper()
	ks := testKeyspace()
	for _, def := range ks.Families {
		if def.Name != family {
			continue
		}
		f, err := supercol.NewFamily(ks.Name, def)
		if err != nil {
			t.Fatal(err)
		}
		m, err := supercol.Plan(f, supercol.Options{Shape: supercol.ShapeCompact})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Fatalf("no family %s", family)
	return nil
}

// TestFileSinkWritesInline checks that the script holds exactly the inline
// form of each statement, one per line, after the header and DDL.
func TestFileSinkWritesInline(t *testing.T) {
	users, hits := planTable(t, "Users"), planTable(t, "Hits")
	var a Arena
	var p supercol.Placement
	var stmts []Statement
	if err := users.Map([]byte("alice"), nil, []byte("email"), &p); err != nil {
		t.Fatal(err)
	}
	uts := NewTableStatements(users.Table)
	stmts = append(stmts,
		uts.Insert(&a, &p, []byte("alice@example.com"), 1600000000000000, 0),
		uts.Insert(&a, &p, []byte("it's\nmultiline"), 1600000000000001, 3600))
	if err := hits.Map([]byte("page"), nil, []byte("2024-01"), &p); err != nil {
		t.Fatal(err)
	}
	stmts = append(stmts, NewTableStatements(hits.Table).Increment(&a, &p, -3))

	path := filepath.Join(t.TempDir(), "out.cql")
	sink, err := CreateFileSink(path, func() time.Time { return time.Unix(1700000000, 0) })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	schema := &Schema{Keyspace: "Blog", Tables: []*supercol.Table{users.Table, hits.Table}}
	if err := sink.Prepare(ctx, schema); err != nil {
		t.Fatal(err)
	}
	if err := sink.Write(ctx, stmts); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := FileHeaderPrefix + "1700000000\n"
	for _, st := range schema.Statements() {
		want += st.Inline() + "\n"
	}
	for _, st := range stmts {
		want += st.Inline() + "\n"
	}
	if string(got) != want {
		t.Errorf("script:\n%s\nwant:\n%s", got, want)
	}
	golden.Check(t, "migrate/testdata/filesink.cql", got)
}
