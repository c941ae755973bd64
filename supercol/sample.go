package supercol

import (
	"slices"

	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// sampleNameCap is the number of distinct column names a Sample keeps; it
// is above pivotMaxColumns so that a sample can tell "too many".
const sampleNameCap = 64

// pivotMaxColumns is the largest set of sampled subcolumn names that lets
// the automatic choice pick the pivot shape.
const pivotMaxColumns = 32

// Sample collects what a scan of the first rows of a family shows, to
// choose a shape: the distinct column names (subcolumn names in Super
// families) up to a cap, and how many cells carried names outside the
// declared columns. Its memory is bounded whatever is added.
type Sample struct {
	keyspace, family string
	super            bool
	nameType         marshal.Type
	declared         map[string]bool

	cells      int64
	invalid    int64
	undeclared int64
	seen       map[string]bool
	names      [][]byte
	overflow   bool
}

// NewSample returns an empty sample for f.
func NewSample(f *Family) *Sample {
	s := &Sample{
		keyspace: f.Keyspace,
		family:   f.Def.Name,
		super:    f.Def.Super,
		nameType: f.Comparator,
		declared: make(map[string]bool, len(f.Columns)),
		seen:     make(map[string]bool),
	}
	if f.Def.Super {
		s.nameType = f.SubComparator
	}
	for _, c := range f.Columns {
		s.declared[string(c.Name)] = true
	}
	return s
}

// Add records one cell seen: super is its super column name (nil in
// Standard families), name its column (or subcolumn) name.
func (s *Sample) Add(super, name []byte) {
	s.cells++
	if len(name) == 0 || s.nameType.Validate(name) != nil || (s.super && len(super) == 0) {
		s.invalid++
		return
	}
	if !s.declared[string(name)] {
		s.undeclared++
	}
	if s.seen[string(name)] {
		return
	}
	if len(s.names) >= sampleNameCap {
		s.overflow = true
		return
	}
	s.seen[string(name)] = true
	s.names = append(s.names, slices.Clone(name))
}

// Cells is the number of cells added.
func (s *Sample) Cells() int64 { return s.cells }

// Undeclared is the number of cells whose name is not a declared column
// (byte for byte).
func (s *Sample) Undeclared() int64 { return s.undeclared }

// Invalid is the number of cells whose name is empty or not a valid value
// of the comparator (subcomparator), or a Super family cell without a
// super column name.
func (s *Sample) Invalid() int64 { return s.invalid }

// Overflow reports whether more distinct names were seen than the sample
// keeps.
func (s *Sample) Overflow() bool { return s.overflow }

// Names returns the distinct valid names kept, in comparator order.
func (s *Sample) Names() [][]byte {
	out := slices.Clone(s.names)
	slices.SortFunc(out, s.nameType.Compare)
	return out
}

// belongsTo reports whether the sample was taken for f.
func (s *Sample) belongsTo(f *Family) bool {
	return s.keyspace == f.Keyspace && s.family == f.Def.Name && s.super == f.Def.Super &&
		marshal.Equal(s.nameType, nameTypeOf(f))
}

// nameTypeOf is the type of the names that carry values: the comparator in
// Standard families, the subcomparator in Super ones.
func nameTypeOf(f *Family) marshal.Type {
	if f.Def.Super {
		return f.SubComparator
	}
	return f.Comparator
}
