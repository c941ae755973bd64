package supercol

import (
	"errors"
	"fmt"
	"strings"

	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// ErrShapeNotApplicable is wrapped by Plan's error when the requested shape
// does not fit the family.
var ErrShapeNotApplicable = errors.New("shape does not fit the family")

// ShapeMixed may be given in Options.Shape to ask for the static shape in
// its mixed form (declared columns static, every other name in a
// clustering column and a value column) whatever the sample shows. The
// table's Shape is then ShapeStatic.
const ShapeMixed Shape = "mixed"

// Options steer Plan.
type Options struct {
	// Shape is the requested shape; "" lets Plan choose.
	Shape Shape
	// Sample is what a scan of the first rows showed; it may be nil.
	Sample *Sample
}

// shapeError explains why a shape does not fit; it matches
// ErrShapeNotApplicable.
type shapeError struct {
	shape Shape
	why   string
}

func (e *shapeError) Error() string {
	return fmt.Sprintf("%s shape does not fit: %s", e.shape, e.why)
}

func (e *shapeError) Is(target error) bool { return target == ErrShapeNotApplicable }

func notApplicable(shape Shape, format string, args ...any) error {
	return &shapeError{shape: shape, why: fmt.Sprintf(format, args...)}
}

// Plan chooses the shape of the CQL table for f (or applies opts.Shape,
// refusing one that does not fit with an error wrapping
// ErrShapeNotApplicable) and builds the mapping of its cells.
//
// The automatic choice: a Super family becomes pivot when its subcolumn
// names form a small known set (declared, or seen by the sample), else
// compact; a Standard family with column_metadata becomes static (pure
// when the sample saw only declared names, else mixed); every other
// family becomes compact. Counter families become compact or static.
func Plan(f *Family, opts Options) (*Mapping, error) {
	if f == nil {
		return nil, errors.New("supercol: plan: nil family")
	}
	fail := func(err error) (*Mapping, error) {
		return nil, fmt.Errorf("family %s.%s: %w", f.Keyspace, f.Def.Name, err)
	}
	if !isSchemaName(f.Keyspace) {
		return fail(fmt.Errorf("keyspace name %q is not a valid CQL keyspace name (1 to %d characters among letters, digits and _)", f.Keyspace, maxSchemaNameLen))
	}
	if !isSchemaName(f.Def.Name) {
		return fail(fmt.Errorf("family name %q is not a valid CQL table name (1 to %d characters among letters, digits and _)", f.Def.Name, maxSchemaNameLen))
	}
	if opts.Sample != nil && !opts.Sample.belongsTo(f) {
		return fail(fmt.Errorf("the sample was taken for family %s.%s", opts.Sample.keyspace, opts.Sample.family))
	}
	var m *Mapping
	var err error
	switch opts.Shape {
	case "":
		m, err = choose(f, opts.Sample)
	case ShapeCompact:
		m, err = planCompact(f, "compact shape requested")
	case ShapePivot:
		m, err = planPivot(f, opts.Sample, true)
	case ShapeStatic:
		m, err = planStatic(f, opts.Sample, false)
	case ShapeMixed:
		m, err = planStatic(f, opts.Sample, true)
	default:
		err = fmt.Errorf("unknown shape %q (want %s, %s or %s)", opts.Shape, ShapeCompact, ShapePivot, ShapeStatic)
	}
	if err != nil {
		return fail(err)
	}
	m.finish()
	return m, nil
}

// choose picks the shape automatically.
func choose(f *Family, s *Sample) (*Mapping, error) {
	switch {
	case f.Def.Super && f.Counter():
		return planCompact(f, "Super counter family: counters convert to the compact shape (key, column1, column2, value counter)")
	case f.Def.Super:
		m, err := planPivot(f, s, false)
		if err == nil || !errors.Is(err, ErrShapeNotApplicable) {
			return m, err
		}
		return planCompact(f, "Super family: "+err.Error()+"; compact keeps every subcolumn as (column1, column2, value)")
	case len(f.Columns) > 0:
		m, err := planStatic(f, s, false)
		if err == nil || !errors.Is(err, ErrShapeNotApplicable) {
			return m, err
		}
		return planCompact(f, "Standard family with column_metadata: "+err.Error()+"; compact keeps every column as (column1, value)")
	}
	return planCompact(f, "Standard family without column_metadata: each column becomes one row clustered by its name, with its value in the value column")
}

// builder accumulates the columns of a table and the parts of a mapping.
type builder struct {
	f      *Family
	m      *Mapping
	clust  int               // clustering columns added so far
	origin map[string]string // column name -> what it comes from
}

func newBuilder(f *Family, shape Shape, reason string) *builder {
	t := &Table{Keyspace: f.Keyspace, Name: f.Def.Name, Shape: shape, Reason: reason, Counter: f.Counter()}
	return &builder{
		f:      f,
		m:      &Mapping{Family: f, Table: t, valueColumn: -1},
		origin: map[string]string{},
	}
}

// add appends a column, refusing a name already used.
func (b *builder) add(c TableColumn, origin string) (int, error) {
	if prev, dup := b.origin[c.Name]; dup {
		return 0, fmt.Errorf("column name %s is used twice (%s and %s)", QuoteIdent(c.Name), prev, origin)
	}
	b.origin[c.Name] = origin
	b.m.Table.Columns = append(b.m.Table.Columns, c)
	return len(b.m.Table.Columns) - 1, nil
}

// componentsOf lists the column types a value of t spreads over: the
// components of a CompositeType comparator or key validator, else t.
func componentsOf(t marshal.Type) []marshal.Type {
	if c, ok := t.(*marshal.Composite); ok {
		return c.Components()
	}
	return []marshal.Type{t}
}

// columnType is the CQL column type for t: the base of a ReversedType, with
// descending order reported.
func columnType(t marshal.Type) (marshal.Type, bool) {
	if r, ok := t.(*marshal.Reversed); ok {
		return r.Base(), true
	}
	return t, false
}

// addPartitionKey adds the key columns: key (or key_alias), or key1..keyN
// for a CompositeType key validator; key_aliases name them in order and
// key_alias names the first.
func (b *builder) addPartitionKey() error {
	parts := componentsOf(b.f.KeyValidator)
	for i, pt := range parts {
		name := "key"
		if len(parts) > 1 {
			name = fmt.Sprintf("key%d", i+1)
		}
		origin := "row key"
		if i < len(b.f.Def.KeyAliases) && b.f.Def.KeyAliases[i] != "" {
			name, origin = b.f.Def.KeyAliases[i], "key_aliases"
		}
		if i == 0 && b.f.Def.KeyAlias != "" {
			name, origin = b.f.Def.KeyAlias, "key_alias"
		}
		typ, _ := columnType(pt)
		if _, err := b.add(TableColumn{Name: name, Type: typ, Kind: PartitionKey}, origin); err != nil {
			return err
		}
	}
	b.m.key = keyPart{what: "row key", whole: b.f.KeyValidator, split: splitCount(b.f.KeyValidator)}
	return nil
}

// addClustering adds the clustering columns for names of type t (one per
// component of a CompositeType), named column<N> or by column_aliases.
func (b *builder) addClustering(t marshal.Type, what string) (keyPart, error) {
	for _, ct := range componentsOf(t) {
		pos := b.clust
		b.clust++
		name, origin := fmt.Sprintf("column%d", pos+1), what
		if pos < len(b.f.Def.ColumnAliases) && b.f.Def.ColumnAliases[pos] != "" {
			name, origin = b.f.Def.ColumnAliases[pos], "column_aliases"
		}
		typ, desc := columnType(ct)
		if _, err := b.add(TableColumn{Name: name, Type: typ, Kind: Clustering, Descending: desc}, origin); err != nil {
			return keyPart{}, err
		}
	}
	return keyPart{what: what, whole: t, split: splitCount(t)}, nil
}

// addValue adds the value column (value or value_alias).
func (b *builder) addValue(t marshal.Type) error {
	name, origin := "value", "value column"
	if b.f.Def.ValueAlias != "" {
		name, origin = b.f.Def.ValueAlias, "value_alias"
	}
	typ, _ := columnType(t)
	i, err := b.add(TableColumn{Name: name, Type: typ, Kind: Regular}, origin)
	b.m.valueColumn = i
	return err
}

func (b *builder) warn(format string, args ...any) {
	b.m.Table.Warnings = append(b.m.Table.Warnings, fmt.Sprintf(format, args...))
}

// warnAliases reports column aliases beyond the clustering columns.
func (b *builder) warnAliases() {
	if extra := len(b.f.Def.ColumnAliases) - b.clust; extra > 0 {
		b.warn("column_aliases has %d more name(s) than the table's %d clustering column(s); the extra aliases are not used", extra, b.clust)
	}
	if b.f.Def.ValueAlias != "" && b.m.valueColumn < 0 {
		b.warn("value_alias %q is not used: the %s shape has no value column", b.f.Def.ValueAlias, b.m.Table.Shape)
	}
}

// warnIndexesDropped reports declared KEYS indexes the shape cannot carry.
func (b *builder) warnIndexesDropped() {
	nt := nameTypeOf(b.f)
	for _, c := range b.f.Columns {
		if c.IndexName != "" {
			b.warn("KEYS index %s on column %s is not carried: in the %s shape that column is not a CQL column of its own", c.IndexName, nt.String(c.Name), b.m.Table.Shape)
		}
	}
}

// planCompact builds the compact shape, which fits every family.
func planCompact(f *Family, reason string) (*Mapping, error) {
	b := newBuilder(f, ShapeCompact, reason)
	if err := b.addPartitionKey(); err != nil {
		return nil, err
	}
	var err error
	if f.Def.Super {
		if b.m.super, err = b.addClustering(f.Comparator, "super column name"); err != nil {
			return nil, err
		}
		if b.m.name, err = b.addClustering(f.SubComparator, "subcolumn name"); err != nil {
			return nil, err
		}
	} else if b.m.name, err = b.addClustering(f.Comparator, "column name"); err != nil {
		return nil, err
	}
	if err := b.addValue(compactValueType(b)); err != nil {
		return nil, err
	}
	b.warnIndexesDropped()
	b.warnAliases()
	return b.m, nil
}

// compactValueType is the type of the one value column: the default
// validator, counter in counter families, and blob when declared columns
// have other validators (one column cannot hold several types, and every
// legacy value is a valid blob).
func compactValueType(b *builder) marshal.Type {
	f := b.f
	if f.Counter() {
		return marshal.CounterColumnType{}
	}
	var differ []string
	nt := nameTypeOf(f)
	for _, c := range f.Columns {
		if !marshal.Equal(c.Validator, f.DefaultValidator) {
			differ = append(differ, fmt.Sprintf("%s %s", nt.String(c.Name), shortName(c.Validator)))
		}
	}
	if len(differ) == 0 {
		return f.DefaultValidator
	}
	b.warn("declared columns have validators other than default_validation_class %s (%s); the single value column is blob so that every value fits", shortName(f.DefaultValidator), strings.Join(differ, ", "))
	return marshal.BytesType{}
}

// shortName is a type's name without Cassandra's package prefix.
func shortName(t marshal.Type) string {
	return strings.ReplaceAll(t.Name(), "org.apache.cassandra.db.marshal.", "")
}

// splitCount is the number of components a value of t is split into, or 0
// when it maps to one column.
func splitCount(t marshal.Type) int {
	if c, ok := t.(*marshal.Composite); ok {
		return len(c.Components())
	}
	return 0
}

// isTextType reports whether names of t render as themselves.
func isTextType(t marshal.Type) bool {
	switch t.(type) {
	case marshal.UTF8Type, marshal.AsciiType:
		return true
	}
	return false
}

// hasCompositeNames reports whether declared names are not used under t.
func hasCompositeNames(t marshal.Type) bool {
	switch t.(type) {
	case *marshal.Composite, *marshal.DynamicComposite:
		return true
	}
	return false
}

// namedColumn is a legacy name that becomes a CQL column of its own.
type namedColumn struct {
	name     []byte
	ident    string
	typ      marshal.Type
	index    string
	declared bool
}

// valueTypeFor is the column type of a declared or sampled name: its
// validator, counter in counter families. It refuses a counter validator
// in a family that is not a counter family.
func valueTypeFor(f *Family, shape Shape, validator marshal.Type, ident string) (marshal.Type, error) {
	if f.Counter() {
		return marshal.CounterColumnType{}, nil
	}
	if marshal.IsCounter(validator) {
		return nil, notApplicable(shape, "declared column %s is a counter in a family that is not a counter family; a CQL table cannot mix counters and other columns", ident)
	}
	t, _ := columnType(validator)
	return t, nil
}

// declaredColumns turns column_metadata into named columns.
func declaredColumns(f *Family, shape Shape) ([]namedColumn, error) {
	nt := nameTypeOf(f)
	out := make([]namedColumn, 0, len(f.Columns))
	for _, c := range f.Columns {
		text := nt.String(c.Name)
		ident, ok := columnIdent(text)
		if !ok {
			return nil, notApplicable(shape, "declared column %q does not give a column name", text)
		}
		typ, err := valueTypeFor(f, shape, c.Validator, ident)
		if err != nil {
			return nil, err
		}
		if f.Counter() && !marshal.IsCounter(c.Validator) {
			return nil, notApplicable(shape, "declared column %s has validator %s in a counter family", ident, shortName(c.Validator))
		}
		out = append(out, namedColumn{name: c.Name, ident: ident, typ: typ, index: c.IndexName, declared: true})
	}
	return out, nil
}

// containsName reports whether name equals (in the comparator's sense) one
// of the named columns.
func containsName(cols []namedColumn, t marshal.Type, name []byte) bool {
	for _, c := range cols {
		if t.Compare(c.name, name) == 0 {
			return true
		}
	}
	return false
}

// planPivot builds the pivot shape of a Super family. forced relaxes the
// checks the automatic choice makes on sampled names (text subcomparator,
// field-like names, at most pivotMaxColumns).
func planPivot(f *Family, s *Sample, forced bool) (*Mapping, error) {
	switch {
	case !f.Def.Super:
		return nil, notApplicable(ShapePivot, "only Super families pivot")
	case f.Counter():
		return nil, notApplicable(ShapePivot, "counter families convert to the compact or static shape only")
	}
	var cols []namedColumn
	var err error
	if !hasCompositeNames(f.SubComparator) {
		if cols, err = declaredColumns(f, ShapePivot); err != nil {
			return nil, err
		}
	}
	declared := len(cols)
	if s != nil {
		if s.Overflow() {
			return nil, notApplicable(ShapePivot, "the sample saw more than %d distinct subcolumn names", sampleNameCap)
		}
		for _, name := range s.Names() {
			if containsName(cols, f.SubComparator, name) {
				continue
			}
			text := f.SubComparator.String(name)
			if !forced && !(isTextType(f.SubComparator) && isFieldLike(text)) {
				return nil, notApplicable(ShapePivot, "sampled subcolumn name %q is not a field-like text name", text)
			}
			ident, ok := columnIdent(text)
			if !ok {
				return nil, notApplicable(ShapePivot, "sampled subcolumn name %q does not give a column name", text)
			}
			typ, _ := columnType(f.DefaultValidator)
			cols = append(cols, namedColumn{name: name, ident: ident, typ: typ})
		}
	}
	sampled := len(cols) - declared
	switch {
	case len(cols) == 0 && s == nil:
		return nil, notApplicable(ShapePivot, "no subcolumns are declared and no sample was taken")
	case len(cols) == 0:
		return nil, notApplicable(ShapePivot, "no subcolumns are declared and the sample saw none")
	case !forced && len(cols) > pivotMaxColumns:
		return nil, notApplicable(ShapePivot, "%d subcolumn names is more than %d", len(cols), pivotMaxColumns)
	}
	var reason string
	switch {
	case s == nil:
		reason = fmt.Sprintf("Super family with %s and no sample: each super column becomes one row with a typed column per subcolumn; a subcolumn outside them stops the conversion", plural(int64(declared), "declared subcolumn"))
	default:
		reason = fmt.Sprintf("Super family whose subcolumn names form a small set (%d declared, %d more seen in a sample of %s): each super column becomes one row with a typed column per subcolumn; a subcolumn outside them stops the conversion", declared, sampled, plural(s.Cells(), "cell"))
	}
	if forced {
		reason = "pivot shape requested; " + reason
	}
	b := newBuilder(f, ShapePivot, reason)
	if err := b.addPartitionKey(); err != nil {
		return nil, err
	}
	if b.m.super, err = b.addClustering(f.Comparator, "super column name"); err != nil {
		return nil, err
	}
	if err := b.addNamed(cols, Regular, ShapePivot); err != nil {
		return nil, err
	}
	b.warnIndexesDropped()
	b.warnAliases()
	return b.m, nil
}

// addNamed adds one column per named legacy column; a name clash makes the
// shape not applicable.
func (b *builder) addNamed(cols []namedColumn, kind ColumnKind, shape Shape) error {
	b.m.nameType = nameTypeOf(b.f)
	b.m.byName = make(map[string]int, len(cols))
	for _, c := range cols {
		i, err := b.add(TableColumn{Name: c.ident, Type: c.typ, Kind: kind}, fmt.Sprintf("column %q", b.m.nameType.String(c.name)))
		if err != nil {
			return notApplicable(shape, "%s", err.Error())
		}
		b.m.byName[string(c.name)] = i
		b.m.named = append(b.m.named, namedRef{name: c.name, column: i})
	}
	return nil
}

// planStatic builds the static shape of a Standard family with
// column_metadata: pure (PRIMARY KEY (key)) when the sample saw only
// declared names, else mixed. mixed forces the mixed form.
func planStatic(f *Family, s *Sample, mixed bool) (*Mapping, error) {
	switch {
	case f.Def.Super:
		return nil, notApplicable(ShapeStatic, "Super families convert to the compact or pivot shape")
	case len(f.Columns) == 0:
		return nil, notApplicable(ShapeStatic, "no column_metadata is declared")
	case hasCompositeNames(f.Comparator):
		return nil, notApplicable(ShapeStatic, "declared names are not used under the comparator %s", shortName(f.Comparator))
	}
	cols, err := declaredColumns(f, ShapeStatic)
	if err != nil {
		return nil, err
	}
	var reason string
	switch {
	case mixed:
		reason = "mixed static shape requested: declared columns become static columns, other names (column1, value) rows"
	case s == nil:
		mixed = true
		reason = "Standard family with column_metadata and no sample: mixed static shape (declared columns static, other names as (column1, value) rows) so that no undeclared column is lost"
	case s.Cells() == 0:
		mixed = true
		reason = "Standard family with column_metadata; the sample saw no cells: mixed static shape (declared columns static, other names as (column1, value) rows) so that no undeclared column is lost"
	case s.Undeclared() > 0:
		mixed = true
		reason = fmt.Sprintf("Standard family with column_metadata; the sample saw %d of %s under undeclared names: mixed static shape (declared columns static, other names as (column1, value) rows)", s.Undeclared(), plural(s.Cells(), "cell"))
	default:
		reason = fmt.Sprintf("Standard family with column_metadata; a sample of %s saw only declared names: one typed column per declared column, PRIMARY KEY (key)", plural(s.Cells(), "cell"))
	}
	b := newBuilder(f, ShapeStatic, reason)
	b.m.mixed = mixed
	if err := b.addPartitionKey(); err != nil {
		return nil, err
	}
	kind := Regular
	if mixed {
		kind = Static
		if b.m.name, err = b.addClustering(f.Comparator, "column name"); err != nil {
			return nil, err
		}
	}
	if err := b.addNamed(cols, kind, ShapeStatic); err != nil {
		return nil, err
	}
	if mixed {
		vt := f.DefaultValidator
		if f.Counter() {
			vt = marshal.CounterColumnType{}
		}
		if err := b.addValue(vt); err != nil {
			return nil, notApplicable(ShapeStatic, "%s", err.Error())
		}
	}
	for _, c := range cols {
		switch {
		case c.index == "":
		case f.Counter():
			b.warn("KEYS index %s on counter column %s is not carried: CQL cannot index counters", c.index, c.ident)
		default:
			b.m.Table.Indexes = append(b.m.Table.Indexes, Index{Name: c.index, Column: c.ident})
		}
	}
	b.warnAliases()
	return b.m, nil
}

// finish adds the warnings every shape shares.
func (m *Mapping) finish() {
	t := m.Table
	for _, c := range t.Columns {
		if strings.HasPrefix(c.Type.CQLType(), "'") {
			t.Warnings = append(t.Warnings, fmt.Sprintf("column %s: %s has no CQL type; it is declared as the custom type %s, which ScyllaDB and CQL drivers may not support", QuoteIdent(c.Name), shortName(c.Type), c.Type.CQLType()))
		}
	}
	if ttl := m.Family.Def.DefaultTTL; ttl > 0 {
		t.Warnings = append(t.Warnings, fmt.Sprintf("default_time_to_live %d is not set on the table: converted cells carry their own remaining TTL; run ALTER TABLE %s WITH default_time_to_live = %d after the conversion if new writes should expire", ttl, t.QualifiedName(), ttl))
	}
}

// plural renders a count with its noun, adding "s" unless n is 1.
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
