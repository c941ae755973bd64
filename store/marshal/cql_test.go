package marshal

import (
	"encoding/hex"
	"strings"
	"testing"
)

func TestCQLType(t *testing.T) {
	tests := []struct{ typ, cql string }{
		{"BytesType", "blob"},
		{"AsciiType", "ascii"},
		{"UTF8Type", "text"},
		{"LongType", "bigint"},
		{"Int32Type", "int"},
		{"IntegerType", "varint"},
		{"DecimalType", "decimal"},
		{"DoubleType", "double"},
		{"FloatType", "float"},
		{"BooleanType", "boolean"},
		{"DateType", "timestamp"},
		{"TimestampType", "timestamp"},
		{"UUIDType", "uuid"},
		{"TimeUUIDType", "timeuuid"},
		{"InetAddressType", "inet"},
		{"CounterColumnType", "counter"},
		{"ReversedType(TimeUUIDType)", "timeuuid"},
		{"LongType(reversed=true)", "bigint"},
		{"EmptyType", "'org.apache.cassandra.db.marshal.EmptyType'"},
		{"LexicalUUIDType", "'org.apache.cassandra.db.marshal.LexicalUUIDType'"},
		{"CompositeType(UTF8Type,LongType)", "'org.apache.cassandra.db.marshal.CompositeType(org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.LongType)'"},
		{"DynamicCompositeType(s=>UTF8Type)", "'org.apache.cassandra.db.marshal.DynamicCompositeType(s=>org.apache.cassandra.db.marshal.UTF8Type)'"},
	}
	for _, tt := range tests {
		if got := mustParse(t, tt.typ).CQLType(); got != tt.cql {
			t.Errorf("%s.CQLType() = %s, want %s", tt.typ, got, tt.cql)
		}
	}
	if got := (DateType{}).CQLType(); got != "timestamp" {
		t.Errorf("DateType{}.CQLType() = %s", got)
	}
}

func TestCQLLiteral(t *testing.T) {
	tests := []struct{ typ, hex, lit string }{
		{"UTF8Type", hex.EncodeToString([]byte("it's")), "'it''s'"},
		{"UTF8Type", hex.EncodeToString([]byte("''")), "''''''"},
		{"UTF8Type", "", "''"},
		{"UTF8Type", hex.EncodeToString([]byte("line\nnext\ttab")), "'line\nnext\ttab'"},
		{"UTF8Type", "610062", "blobAsText(0x610062)"},
		{"UTF8Type", "c080", "blobAsText(0xc080)"},
		{"UTF8Type", "eda080", "blobAsText(0xeda080)"},
		{"AsciiType", "616263", "'abc'"},
		{"AsciiType", "", "''"},
		{"BytesType", "00ff", "0x00ff"},
		{"BytesType", "", "0x"},
		{"LongType", "fffffffffffffffe", "-2"},
		{"LongType", "", "blobAsBigint(0x)"},
		{"CounterColumnType", "0000000000000003", "3"},
		{"Int32Type", "", "blobAsInt(0x)"},
		{"IntegerType", "ff7f", "-129"},
		{"IntegerType", "", "blobAsVarint(0x)"},
		{"DecimalType", "00000002ff6a", "-1.50"},
		{"DecimalType", "fffffffd" + "fe", "-2E+3"},
		{"DecimalType", "", "blobAsDecimal(0x)"},
		{"DoubleType", "7ff8000000000000", "NaN"},
		{"DoubleType", "fff8000000000001", "NaN"},
		{"DoubleType", "7ff0000000000000", "Infinity"},
		{"DoubleType", "fff0000000000000", "-Infinity"},
		{"DoubleType", "8000000000000000", "-0.0"},
		{"DoubleType", "4202a05f20000000", "1.0E10"},
		{"DoubleType", "3ff8000000000000", "1.5"},
		{"DoubleType", "", "blobAsDouble(0x)"},
		{"FloatType", "7fc00000", "NaN"},
		{"FloatType", "3dcccccd", "0.1"},
		{"BooleanType", "00", "false"},
		{"BooleanType", "02", "true"},
		{"BooleanType", "", "blobAsBoolean(0x)"},
		{"TimestampType", "00000174876e8000", "1600000000000"},
		{"TimestampType", "ffffffffffffffff", "-1"},
		{"TimestampType", "", "blobAsTimestamp(0x)"},
		{"UUIDType", "5fe94000f5bc11ea8000000000000000", "5fe94000-f5bc-11ea-8000-000000000000"},
		{"UUIDType", "", "blobAsUuid(0x)"},
		{"TimeUUIDType", "", "blobAsTimeuuid(0x)"},
		{"LexicalUUIDType", "0102030405060708090a0b0c0d0e0f10", "0x0102030405060708090a0b0c0d0e0f10"},
		{"InetAddressType", "c0a80101", "'192.168.1.1'"},
		{"InetAddressType", "20010db8000000000000000000000001", "'2001:db8::1'"},
		{"InetAddressType", "00000000000000000000ffff0a000001", "blobAsInet(0x00000000000000000000ffff0a000001)"},
		{"InetAddressType", "", "blobAsInet(0x)"},
		{"EmptyType", "", "0x"},
		{"CompositeType(UTF8Type,LongType)", "000161000008000000000000000500", "0x000161000008000000000000000500"},
		{"DynamicCompositeType(s=>UTF8Type)", "807300016100", "0x807300016100"},
		{"ReversedType(UTF8Type)", hex.EncodeToString([]byte("o'k")), "'o''k'"},
	}
	for _, tt := range tests {
		b, _ := hex.DecodeString(tt.hex)
		if got := mustParse(t, tt.typ).CQLLiteral(b); got != tt.lit {
			t.Errorf("%s.CQLLiteral(%s) = %s, want %s", tt.typ, tt.hex, got, tt.lit)
		}
	}
}

// TestCQLLiteralReadsBack checks that numeric literals parse back (with
// FromString, which reads the same forms as CQL) to an equal value.
func TestCQLLiteralReadsBack(t *testing.T) {
	var v orderingVectors
	loadVectors(t, "ordering.json", &v)
	for _, vec := range v.Types {
		typ := mustParse(t, vec.Comparator)
		switch typ.CQLType() {
		case "bigint", "int", "varint", "decimal", "double", "float", "uuid", "timeuuid":
		default:
			continue
		}
		for _, h := range vec.InsertedHex {
			b := unhex(t, h)
			lit := typ.CQLLiteral(b)
			back, err := typ.FromString(lit)
			if err != nil || typ.Compare(back, b) != 0 {
				t.Errorf("%s: literal %s of %s reads back as %x, %v", vec.Comparator, lit, h, back, err)
			}
			if strings.ContainsAny(lit, "'") {
				t.Errorf("%s: numeric literal %s is quoted", vec.Comparator, lit)
			}
		}
	}
}
