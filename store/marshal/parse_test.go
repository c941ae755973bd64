package marshal

import (
	"errors"
	"strings"
	"testing"
)

const mp = "org.apache.cassandra.db.marshal."

func TestParseNames(t *testing.T) {
	tests := []struct{ in, name string }{
		{"BytesType", mp + "BytesType"},
		{mp + "AsciiType", mp + "AsciiType"},
		{"UTF8Type", mp + "UTF8Type"},
		{"LongType", mp + "LongType"},
		{"Int32Type", mp + "Int32Type"},
		{"IntegerType", mp + "IntegerType"},
		{"DecimalType", mp + "DecimalType"},
		{"DoubleType", mp + "DoubleType"},
		{"FloatType", mp + "FloatType"},
		{"BooleanType", mp + "BooleanType"},
		{"DateType", mp + "TimestampType"},
		{mp + "DateType", mp + "TimestampType"},
		{"TimestampType", mp + "TimestampType"},
		{"UUIDType", mp + "UUIDType"},
		{"TimeUUIDType", mp + "TimeUUIDType"},
		{"LexicalUUIDType", mp + "LexicalUUIDType"},
		{"InetAddressType", mp + "InetAddressType"},
		{"CounterColumnType", mp + "CounterColumnType"},
		{"EmptyType", mp + "EmptyType"},
		{"", mp + "BytesType"},
		{"  \t", mp + "BytesType"},
		{"LongType trailing garbage", mp + "LongType"},
		{"CompositeType(UTF8Type,LongType)", mp + "CompositeType(" + mp + "UTF8Type," + mp + "LongType)"},
		{" CompositeType ( UTF8Type ,\n LongType ) ", mp + "CompositeType(" + mp + "UTF8Type," + mp + "LongType)"},
		{"CompositeType(UTF8Type LongType)", mp + "CompositeType(" + mp + "UTF8Type," + mp + "LongType)"},
		{"CompositeType(LongType,ReversedType(UTF8Type))", mp + "CompositeType(" + mp + "LongType," + mp + "ReversedType(" + mp + "UTF8Type))"},
		{"ReversedType(TimeUUIDType)", mp + "ReversedType(" + mp + "TimeUUIDType)"},
		{"ReversedType(DateType)", mp + "ReversedType(" + mp + "TimestampType)"},
		{"CompositeType(DateType,ReversedType(DateType))", mp + "CompositeType(" + mp + "TimestampType," + mp + "ReversedType(" + mp + "TimestampType))"},
		// Nested composites and DynamicCompositeType parameters are kept
		// verbatim by Cassandra, DateType included.
		{"CompositeType(CompositeType(DateType),LongType)", mp + "CompositeType(" + mp + "CompositeType(" + mp + "DateType)," + mp + "LongType)"},
		{"ReversedType(CompositeType(DateType))", mp + "ReversedType(" + mp + "CompositeType(" + mp + "DateType))"},
		{"DynamicCompositeType(d=>DateType)", mp + "DynamicCompositeType(d=>" + mp + "DateType)"},
		{"LongType(reversed=true)", mp + "ReversedType(" + mp + "LongType)"},
		{"LongType(reversed)", mp + "ReversedType(" + mp + "LongType)"},
		{"LongType(reversed=false)", mp + "LongType"},
		{"LongType()", mp + "LongType"},
		{"DynamicCompositeType", mp + "DynamicCompositeType()"},
		{"DynamicCompositeType()", mp + "DynamicCompositeType()"},
		// Cassandra prints the aliases in java.util.HashMap order.
		{"DynamicCompositeType(s=>UTF8Type,l=>LongType,b=>BytesType)",
			mp + "DynamicCompositeType(b=>" + mp + "BytesType,s=>" + mp + "UTF8Type,l=>" + mp + "LongType)"},
		{"DynamicCompositeType( a => AsciiType , b=>BytesType,a=>UTF8Type)",
			mp + "DynamicCompositeType(a=>" + mp + "UTF8Type,b=>" + mp + "BytesType)"},
	}
	for _, tt := range tests {
		typ, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if typ.Name() != tt.name {
			t.Errorf("Parse(%q).Name() =\n %s, want\n %s", tt.in, typ.Name(), tt.name)
		}
		again, err := Parse(typ.Name())
		if err != nil || again.Name() != typ.Name() || !Equal(again, typ) {
			t.Errorf("Parse(Name()) of %q: %v, %v", tt.in, again, err)
		}
	}
}

func TestParseHashMapOrderLargeTables(t *testing.T) {
	// 13 aliases grow the table to 32 buckets: 'A' (0x41) and 'a' (0x61)
	// share bucket 1 in insertion order, '0' (0x30) lands in bucket 16.
	in := "DynamicCompositeType(A=>LongType,B=>LongType,C=>LongType,D=>LongType,E=>LongType,F=>LongType,G=>LongType,a=>LongType,b=>LongType,c=>LongType,d=>LongType,e=>LongType,0=>LongType)"
	typ, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, part := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(typ.Name(), mp+"DynamicCompositeType("), ")"), ",") {
		order = append(order, part[:1])
	}
	want := "A a B b C c D d E e F G 0"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("alias order %q, want %q", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ in, msg string }{
		{"NoSuchType", "Unable to find abstract-type class 'org.apache.cassandra.db.marshal.NoSuchType'"},
		{"com.example.MyType", "Unable to find abstract-type class 'com.example.MyType'"},
		{"longtype", "Unable to find abstract-type class 'org.apache.cassandra.db.marshal.longtype'"},
		{"ListType(Int32Type)", "Unsupported abstract-type class 'org.apache.cassandra.db.marshal.ListType'"},
		{"CompositeType(NoSuchType)", "Invalid definition for comparator org.apache.cassandra.db.marshal.CompositeType."},
		{"CompositeType(UTF8Type,ReversedType(NoSuchType))", "Invalid definition for comparator org.apache.cassandra.db.marshal.CompositeType."},
		{"CompositeType", "Invalid definition for comparator org.apache.cassandra.db.marshal.CompositeType."},
		{"CompositeType()", "Invalid definition for comparator org.apache.cassandra.db.marshal.CompositeType."},
		{"CompositeType(UTF8Type", "Invalid definition for comparator org.apache.cassandra.db.marshal.CompositeType."},
		{"CompositeType(UTF8Type,,LongType)", "Invalid definition for comparator org.apache.cassandra.db.marshal.CompositeType."},
		{"ReversedType", "Invalid definition for comparator org.apache.cassandra.db.marshal.ReversedType."},
		{"ReversedType(LongType,UTF8Type)", "Invalid definition for comparator org.apache.cassandra.db.marshal.ReversedType."},
		{"DynamicCompositeType(ss=>UTF8Type)", "Invalid definition for comparator org.apache.cassandra.db.marshal.DynamicCompositeType."},
		{"DynamicCompositeType(s=UTF8Type)", "Invalid definition for comparator org.apache.cassandra.db.marshal.DynamicCompositeType."},
		{"DynamicCompositeType(s=>", "Invalid definition for comparator org.apache.cassandra.db.marshal.DynamicCompositeType."},
		{"LongType(reversed", "Syntax error parsing 'LongType(reversed' at char 17: unexpected end of string"},
		{"LongType(reversed=true", "Syntax error parsing 'LongType(reversed=true' at char 22: unexpected end of string"},
		{"LongType(a(b))", "Syntax error parsing 'LongType(a(b))' at char 10: unexpected character '('"},
	}
	for _, tt := range tests {
		typ, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%q) = %s, want error %q", tt.in, typ.Name(), tt.msg)
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) || err.Error() != tt.msg {
			t.Errorf("Parse(%q) error %q (%T), want %q", tt.in, err, err, tt.msg)
		}
	}
	_, err := Parse("CompositeType(NoSuchType)")
	var inner *ParseError
	if pe := err.(*ParseError); !errors.As(pe.Unwrap(), &inner) || !strings.Contains(inner.Msg, "NoSuchType") {
		t.Errorf("nested error does not wrap the inner one: %v", pe.Unwrap())
	}
}

func TestConstructors(t *testing.T) {
	c, err := NewComposite(UTF8Type{}, LongType{})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Parse("CompositeType(UTF8Type,LongType)")
	if !Equal(c, p) || c.Name() != p.Name() {
		t.Errorf("NewComposite = %s, Parse = %s", c.Name(), p.Name())
	}
	if got := c.Components(); len(got) != 2 || got[1] != (LongType{}) {
		t.Errorf("Components() = %v", got)
	}
	r, _ := NewReversed(c)
	if _, ok := r.Base().(*Composite); !ok || Equal(r.Base(), c) {
		t.Errorf("a composite under ReversedType must be opaque: %v", r.Base())
	}
	d, err := NewDynamicComposite(map[byte]Type{'s': UTF8Type{}, 'l': LongType{}, 'b': BytesType{}})
	if err != nil {
		t.Fatal(err)
	}
	pd, _ := Parse("DynamicCompositeType(s=>UTF8Type,l=>LongType,b=>BytesType)")
	if !Equal(d, pd) {
		t.Errorf("NewDynamicComposite = %s, Parse = %s", d.Name(), pd.Name())
	}
	if at, ok := d.Alias('s'); !ok || at != (UTF8Type{}) {
		t.Errorf("Alias('s') = %v, %v", at, ok)
	}
	if len(d.Aliases()) != 3 {
		t.Errorf("Aliases() = %v", d.Aliases())
	}
	if _, err := NewDynamicComposite(map[byte]Type{'(': UTF8Type{}}); err == nil {
		t.Error("alias '(' accepted")
	}
	if _, err := NewComposite(); err == nil {
		t.Error("empty composite accepted")
	}
	if !IsCounter(CounterColumnType{}) || IsCounter(LongType{}) {
		t.Error("IsCounter")
	}
}

func TestClassNamesSorted(t *testing.T) {
	for i := 1; i < len(classNames); i++ {
		if classNames[i-1] >= classNames[i] {
			t.Errorf("classNames not in Java String order at %s, %s", classNames[i-1], classNames[i])
		}
	}
}
