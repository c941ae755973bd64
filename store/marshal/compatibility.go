package marshal

// IsCompatibleWith reports whether a family whose names were ordered and
// validated by previous may switch to next: every name valid for previous
// stays valid for next and keeps its order. That holds for the same type,
// for BytesType replacing AsciiType or UTF8Type, for UTF8Type replacing
// AsciiType, and for a CompositeType that keeps every component compatible
// and only adds components at the end.
func IsCompatibleWith(next, previous Type) bool {
	if Equal(next, previous) {
		return true
	}
	switch n := next.(type) {
	case BytesType:
		switch previous.(type) {
		case AsciiType, UTF8Type:
			return true
		}
	case UTF8Type:
		_, ok := previous.(AsciiType)
		return ok
	case *Reversed:
		if p, ok := previous.(*Reversed); ok {
			return IsCompatibleWith(n.base, p.base)
		}
	case *Composite:
		p, ok := previous.(*Composite)
		if !ok || len(n.types) < len(p.types) {
			return false
		}
		for i := range p.types {
			if !IsCompatibleWith(n.types[i], p.types[i]) {
				return false
			}
		}
		return true
	}
	return false
}
