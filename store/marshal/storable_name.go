package marshal

// UnstorableName explains why a valid value of t must not be used as a
// cell or super column name, or returns "". Cassandra accepts these names
// and then fails on them: a DecimalType value of exactly 4 bytes (a scale
// and no unscaled digits) makes every later comparison throw and poisons
// the commit log; a CompositeType name starting with 0xffff (the marker of
// static columns) crashes the write path.
func UnstorableName(t Type, b []byte) string {
	switch x := t.(type) {
	case *Reversed:
		return UnstorableName(x.base, b)
	case DecimalType:
		if len(b) == 4 {
			return "DecimalType name of 4 bytes has a scale but no unscaled value; Cassandra cannot compare such a name, so it is refused"
		}
	case *Composite:
		if x.opaque {
			return ""
		}
		if isStaticName(b) {
			return "composite column name starts with 0xffff, the marker reserved for static columns; such a name cannot be stored"
		}
		rest := b
		for _, ct := range x.Components() {
			if len(rest) == 0 {
				break
			}
			var v []byte
			v, _, rest = readComponent(rest)
			if why := UnstorableName(ct, v); why != "" {
				return why
			}
		}
	}
	return ""
}
