package marshal

import (
	"slices"
	"unicode/utf8"
)

// classNames lists the simple Java class names of the supported types in
// Java String order, the order in which DynamicCompositeType sorts
// components of different types. A type's 1-based position here is the
// first byte of its type key in DynamicCompositeType keys.
var classNames = [...]string{
	"AsciiType",
	"BooleanType",
	"BytesType",
	"CompositeType",
	"CounterColumnType",
	"DateType",
	"DecimalType",
	"DoubleType",
	"DynamicCompositeType",
	"EmptyType",
	"FloatType",
	"InetAddressType",
	"Int32Type",
	"IntegerType",
	"LexicalUUIDType",
	"LongType",
	"ReversedType",
	"TimeUUIDType",
	"TimestampType",
	"UTF8Type",
	"UUIDType",
}

// simpleType returns the type of a class without parameters.
func simpleType(className string) (codec, bool) {
	switch className {
	case "AsciiType":
		return AsciiType{}, true
	case "BooleanType":
		return BooleanType{}, true
	case "BytesType":
		return BytesType{}, true
	case "CounterColumnType":
		return CounterColumnType{}, true
	case "DateType":
		return DateType{}, true
	case "DecimalType":
		return DecimalType{}, true
	case "DoubleType":
		return DoubleType{}, true
	case "EmptyType":
		return EmptyType{}, true
	case "FloatType":
		return FloatType{}, true
	case "InetAddressType":
		return InetAddressType{}, true
	case "Int32Type":
		return Int32Type{}, true
	case "IntegerType":
		return IntegerType{}, true
	case "LexicalUUIDType":
		return LexicalUUIDType{}, true
	case "LongType":
		return LongType{}, true
	case "TimeUUIDType":
		return TimeUUIDType{}, true
	case "TimestampType":
		return TimestampType{}, true
	case "UTF8Type":
		return UTF8Type{}, true
	case "UUIDType":
		return UUIDType{}, true
	}
	return nil, false
}

// classOrdinal is the 1-based position of a class name in classNames.
func classOrdinal(className string) byte {
	i, _ := slices.BinarySearch(classNames[:], className)
	return byte(i + 1)
}

// unsupportedClassNames are Cassandra marshal types that exist but that the
// Thrift-era API does not use; Parse reports them distinctly.
var unsupportedClassNames = [...]string{
	"ByteType", "CollectionType", "ColumnToCollectionType", "DurationType",
	"FrozenType", "ListType", "LocalByPartionerType", "MapType",
	"PartitionerDefinedOrder", "SetType", "ShortType", "SimpleDateType",
	"TimeType", "TupleType", "UserType",
}

// lookupClassName resolves the type named in a DynamicCompositeType
// component header. Cassandra decodes the name as strict UTF-8 and parses
// it as a type string; plain names of simple types skip the parser (and
// allocate nothing).
func lookupClassName(name []byte) (codec, bool) {
	if !utf8.Valid(name) {
		return nil, false
	}
	short := name
	if len(short) > len(marshalPackage) && string(short[:len(marshalPackage)]) == marshalPackage {
		short = short[len(marshalPackage):]
	}
	if t, ok := simpleType(string(short)); ok {
		return t, true
	}
	t, err := parseTypeString(string(name), ctxOpaque)
	if err != nil {
		return nil, false
	}
	return t, true
}
