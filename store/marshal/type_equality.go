package marshal

// Equal reports whether a and b are the same type: the same simple type,
// or parameterised types with equal parameters (DynamicCompositeType
// aliases compared as a set; a comparator CompositeType differs from the
// opaque composite of the same name nested in other types).
func Equal(a, b Type) bool {
	switch x := a.(type) {
	case *Composite:
		y, ok := b.(*Composite)
		if !ok || x.opaque != y.opaque || len(x.types) != len(y.types) {
			return false
		}
		for i := range x.types {
			if !Equal(x.types[i], y.types[i]) {
				return false
			}
		}
		return true
	case *Reversed:
		y, ok := b.(*Reversed)
		return ok && Equal(x.base, y.base)
	case *DynamicComposite:
		y, ok := b.(*DynamicComposite)
		if !ok || len(x.order) != len(y.order) {
			return false
		}
		for _, k := range x.order {
			if y.aliases[k] == nil || !Equal(x.aliases[k], y.aliases[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// IsCounter reports whether t is CounterColumnType, the validator of
// counter column families.
func IsCounter(t Type) bool {
	_, ok := t.(CounterColumnType)
	return ok
}
