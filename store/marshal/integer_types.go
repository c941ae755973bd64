package marshal

// LongType is Cassandra's LongType: an 8-byte signed big-endian integer.
type LongType struct{ fixed[LongType] }

func (LongType) fixedSpec() fixedSpec           { return fixedSpec{8, kindInteger, &longNames} }
func (LongType) Compare(a, b []byte) int        { return compareSigned(a, b, 8) }
func (LongType) AppendKey(dst, b []byte) []byte { return appendFixedKey(dst, b, 8, true) }

var longNames = fixedNames{
	name: marshalPackage + "LongType", class: "LongType",
	sizeError: "Expected 8 or 0 byte long (%d)", what: "long", cqlType: "bigint", cast: "blobAsBigint",
}

// CounterColumnType is Cassandra's CounterColumnType. Through the Thrift API
// a counter's value is an 8-byte signed integer; it is validated, compared
// and rendered as LongType.
type CounterColumnType struct{ fixed[CounterColumnType] }

func (CounterColumnType) fixedSpec() fixedSpec           { return fixedSpec{8, kindInteger, &counterNames} }
func (CounterColumnType) Compare(a, b []byte) int        { return compareSigned(a, b, 8) }
func (CounterColumnType) AppendKey(dst, b []byte) []byte { return appendFixedKey(dst, b, 8, true) }

var counterNames = fixedNames{
	name: marshalPackage + "CounterColumnType", class: "CounterColumnType",
	sizeError: longNames.sizeError, what: longNames.what, cqlType: "counter", cast: longNames.cast,
}

// Int32Type is Cassandra's Int32Type: a 4-byte signed big-endian integer.
type Int32Type struct{ fixed[Int32Type] }

func (Int32Type) fixedSpec() fixedSpec           { return fixedSpec{4, kindInteger, &int32Names} }
func (Int32Type) Compare(a, b []byte) int        { return compareSigned(a, b, 4) }
func (Int32Type) AppendKey(dst, b []byte) []byte { return appendFixedKey(dst, b, 4, true) }

var int32Names = fixedNames{
	name: marshalPackage + "Int32Type", class: "Int32Type",
	sizeError: "Expected 4 or 0 byte int (%d)", what: "int", cqlType: "int", cast: "blobAsInt",
}
