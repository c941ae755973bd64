package cqlconn

import (
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// opaqueClasses are Cassandra marshal classes that CQL shows as custom
// types: the driver knows none of them, and their values travel as their
// serialised bytes.
var opaqueClasses = []string{"DynamicCompositeType", "CompositeType"}

// opaqueTypes returns the driver's types with opaqueClasses added.
func opaqueTypes() *gocql.RegisteredTypes {
	types := gocql.GlobalTypes.Copy()
	for _, class := range opaqueClasses {
		// An error is a class the driver knows already: it keeps its own.
		_ = types.RegisterCustom(class, gocql.SimpleCQLType{TypeInfo: opaqueType(class)})
	}
	return types
}

// opaqueType is a custom type whose values are their serialised bytes:
// values implementing gocql.Marshaler and gocql.Unmarshaler, or byte
// slices.
type opaqueType string

// Type implements gocql.TypeInfo.
func (opaqueType) Type() gocql.Type { return gocql.TypeCustom }

// Zero implements gocql.TypeInfo.
func (opaqueType) Zero() any { return []byte(nil) }

// Marshal implements gocql.TypeInfo.
func (o opaqueType) Marshal(value any) ([]byte, error) {
	switch v := value.(type) {
	case gocql.Marshaler:
		return v.MarshalCQL(o)
	case []byte:
		return v, nil
	case nil:
		return nil, nil
	}
	return nil, fmt.Errorf("cqlconn: a %s value is bytes, not %T", string(o), value)
}

// Unmarshal implements gocql.TypeInfo.
func (o opaqueType) Unmarshal(data []byte, value any) error {
	switch v := value.(type) {
	case gocql.Unmarshaler:
		return v.UnmarshalCQL(o, data)
	case *[]byte:
		*v = append((*v)[:0], data...)
		return nil
	}
	return fmt.Errorf("cqlconn: a %s value is bytes, not %T", string(o), value)
}
