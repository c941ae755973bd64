package conformance

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/internal/golden"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Random operations. Each test plays a seeded, random sequence of writes
// (insert, remove, batch_mutate with column, super column, row and range
// deletions) on a few rows, with timestamps drawn from a small range so
// that writes arrive out of order and tie, and values drawn so that ties
// between different values occur; every few writes it reads (get,
// get_slice by names and by ranges, reversed and counted, get_count,
// multiget_slice) and writes down what the server answered. The
// transcript must be the one Cassandra 3.11 gave, kept in
// testdata/cassandra-3.11/random (TestReference -update rewrites it from
// the node). Where the hand-written tests check the rules one at a time,
// these check their interplay: reconciliation by timestamp, then value;
// deletions shadowing older writes and not newer ones; ranges, counts and
// reversal over what survives. No TTLs: the CQL backend answers the
// remaining TTL (a documented divergence), and expiry would make the
// transcript depend on the clock.

// randomFamily is one family of the random tests, with the names its
// operations draw from.
type randomFamily struct {
	def func() *cassandra.CfDef
	// names are the column names (subcolumn names in a super family).
	names [][]byte
	// ranges are the bounds slice ranges draw from, in comparator order:
	// names, when nil; a composite family adds prefixes.
	ranges [][]byte
	// supers are the super column names; nil in a Standard family.
	supers [][]byte
	// show renders a column name, showSuper a super column name.
	show, showSuper func([]byte) string
	// writes is the length of a sequence (default 150).
	writes int
	// rising draws timestamps around the write's place in the sequence,
	// still out of order and tied nearby, and deletions' further back, so
	// that rows grow.
	rising bool
}

func longName(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func showLong(n []byte) string {
	if len(n) != 8 {
		return fmt.Sprintf("0x%x", n)
	}
	return fmt.Sprint(int64(binary.BigEndian.Uint64(n)))
}

func showText(n []byte) string { return string(n) }

// timeUUIDs are the names of the TimeUUID family (timeUUID, in
// api_blog.go), in TimeUUIDType's order: time first, whose fields a
// UUID stores low part first, then the node.
var timeUUIDs = [][]byte{
	timeUUID(5, 0), timeUUID(0xffffffff, 0), timeUUID(1<<32, 1), timeUUID(1<<32, 2),
	timeUUID(1<<48, 0), timeUUID(1<<48+1, 0),
}

func showTimeUUID(n []byte) string {
	for i, u := range timeUUIDs {
		if slices.Equal(n, u) {
			return fmt.Sprintf("u%d", i)
		}
	}
	return fmt.Sprintf("0x%x", n)
}

// compositeName encodes a CompositeType name or bound: each component
// with its 2-byte length and an end-of-component byte, 0 but for the
// last, which gets eoc.
func compositeName(eoc byte, components ...[]byte) []byte {
	var out []byte
	for i, c := range components {
		out = binary.BigEndian.AppendUint16(out, uint16(len(c)))
		out = append(out, c...)
		if i == len(components)-1 {
			out = append(out, eoc)
		} else {
			out = append(out, 0)
		}
	}
	return out
}

// compositeNames and compositeRanges are the names of the Composite
// family, CompositeType(UTF8Type,LongType), and the bounds its slice
// ranges draw from: each first component's prefix with end-of-component
// -1 (before its names), its names, and the prefix with 1 (after them).
var compositeNames, compositeRanges = func() (names, ranges [][]byte) {
	for _, first := range []string{"a", "b", "c"} {
		ranges = append(ranges, compositeName(0xff, b(first)))
		for _, second := range []int64{-1, 0, 7} {
			n := compositeName(0, b(first), longName(second))
			names, ranges = append(names, n), append(ranges, n)
		}
		ranges = append(ranges, compositeName(1, b(first)))
	}
	return names, ranges
}()

// showComposite renders a name of the Composite family as first:second,
// and a prefix bound as first< (end-of-component -1) or first> (1).
func showComposite(n []byte) string {
	var parts []string
	var eoc byte
	for len(n) >= 3 {
		l := int(binary.BigEndian.Uint16(n))
		if len(n) < 3+l {
			break
		}
		c := n[2 : 2+l]
		if len(parts) == 0 {
			parts = append(parts, string(c))
		} else {
			parts = append(parts, showLong(c))
		}
		eoc, n = n[2+l], n[3+l:]
	}
	if len(n) != 0 || len(parts) == 0 {
		return fmt.Sprintf("0x%x", n)
	}
	out := strings.Join(parts, ":")
	switch eoc {
	case 0xff:
		out += "<"
	case 1:
		out += ">"
	}
	return out
}

// randomFamilies are the families of the random tests, by name. Their
// names are listed in comparator order.
var randomFamilies = map[string]randomFamily{
	"Bytes": {
		def:   func() *cassandra.CfDef { return standardCF("Rand") },
		names: [][]byte{b("a"), b("b"), b("bb"), b("c"), b("d"), b("e"), b("f")},
		show:  showText,
	},
	"Long": {
		def: func() *cassandra.CfDef { return standardCF("Rand", comparator("LongType")) },
		names: [][]byte{longName(-9), longName(-2), longName(0), longName(1),
			longName(3), longName(40), longName(1 << 40)},
		show: showLong,
	},
	"TimeUUID": {
		def:   func() *cassandra.CfDef { return standardCF("Rand", comparator("TimeUUIDType")) },
		names: timeUUIDs,
		show:  showTimeUUID,
	},
	"Composite": {
		def:    func() *cassandra.CfDef { return standardCF("Rand", comparator("CompositeType(UTF8Type,LongType)")) },
		names:  compositeNames,
		ranges: compositeRanges,
		show:   showComposite,
	},
	"Super": {
		def:       func() *cassandra.CfDef { return superCF("Rand", subcomparator("LongType")) },
		names:     [][]byte{longName(-1), longName(0), longName(2), longName(5), longName(9)},
		supers:    [][]byte{b("s1"), b("s2"), b("s3"), b("s4")},
		show:      showLong,
		showSuper: showText,
	},
	// WideSuper grows super columns past 32 subcolumns: on the embedded
	// store their packs dissolve into entries of their own mid-sequence.
	"WideSuper": {
		def:       func() *cassandra.CfDef { return superCF("Rand", subcomparator("LongType")) },
		names:     wideNames,
		supers:    [][]byte{b("s1"), b("s2")},
		show:      showLong,
		showSuper: showText,
		writes:    400,
		rising:    true,
	},
}

// wideNames are the 40 subcolumn names of the WideSuper family.
var wideNames = func() (names [][]byte) {
	for i := range int64(40) {
		names = append(names, longName(3*i-20))
	}
	return names
}()

var randomKeys = []string{"k0", "k1", "k2", "k3"}

func runRandomTests(t *testing.T, target Target) {
	for _, family := range []string{"Bytes", "Long", "TimeUUID", "Composite", "Super", "WideSuper"} {
		for _, seed := range []uint64{1, 2, 3} {
			name := fmt.Sprintf("%s/seed%d", family, seed)
			t.Run(name, func(t *testing.T) {
				f := randomFamilies[family]
				a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", f.def())
				r := &randomRun{a: a, f: f, rng: rand.New(rand.NewPCG(seed, 0x7468726966746264))}
				writes := f.writes
				if writes == 0 {
					writes = 150
				}
				r.play(writes)
				golden.Check(t, "testdata/cassandra-3.11/random/"+strings.ReplaceAll(name, "/", "-")+".txt", []byte(r.out.String()))
			})
		}
	}
}

// randomRun is one sequence of random operations and its transcript.
type randomRun struct {
	a    *apiEnv
	f    randomFamily
	rng  *rand.Rand
	out  strings.Builder
	step int // the write being made
}

const randomCF = "Rand"

func (r *randomRun) printf(format string, args ...any) { fmt.Fprintf(&r.out, format, args...) }

// play makes n writes, reading after every few, and reads every row at
// the end.
func (r *randomRun) play(n int) {
	for i := range n {
		r.step = i
		r.printf("%d ", i)
		r.write()
		if r.rng.IntN(3) == 0 {
			r.read()
		}
	}
	r.printf("end ")
	r.readAll()
}

func (r *randomRun) key() string       { return randomKeys[r.rng.IntN(len(randomKeys))] }
func (r *randomRun) name() []byte      { return r.f.names[r.rng.IntN(len(r.f.names))] }
func (r *randomRun) superName() []byte { return r.f.supers[r.rng.IntN(len(r.f.supers))] }
func (r *randomRun) stamp() int64 {
	if r.f.rising {
		return int64(r.step) + 1 + r.rng.Int64N(12)
	}
	return 1 + r.rng.Int64N(12)
}

// deletionStamp is the timestamp of a deletion: with rising timestamps,
// some 40 writes behind, so that a deletion shadows the older writes it
// meets and rows still grow.
func (r *randomRun) deletionStamp() int64 {
	at := r.stamp()
	if r.f.rising {
		at = max(1, at-40)
	}
	return at
}

func (r *randomRun) column() *cassandra.Column {
	return col(r.name(), []byte(fmt.Sprintf("v%d", r.rng.IntN(4))), r.stamp())
}

func (r *randomRun) showCol(c *cassandra.Column) string {
	if c.Timestamp == nil {
		return fmt.Sprintf("%s=%s@none", r.f.show(c.Name), c.Value)
	}
	return fmt.Sprintf("%s=%s@%d", r.f.show(c.Name), c.Value, *c.Timestamp)
}

// bounds draws a slice range's start and finish from names (either may
// be empty, for the row's start or end), in the order the direction
// needs.
func (r *randomRun) bounds(names [][]byte, reversed bool) ([]byte, []byte) {
	i, j := r.rng.IntN(len(names)+1)-1, r.rng.IntN(len(names)+1)-1 // -1: empty
	pick := func(k int) []byte {
		if k < 0 {
			return []byte{}
		}
		return names[k]
	}
	if i >= 0 && j >= 0 && (i > j) != reversed && i != j {
		i, j = j, i
	}
	return pick(i), pick(j)
}

func (r *randomRun) showBounds(show func([]byte) string, start, finish []byte) string {
	s := func(n []byte) string {
		if len(n) == 0 {
			return "''"
		}
		return show(n)
	}
	return s(start) + ".." + s(finish)
}

// someNames draws up to four distinct names of list, in list order.
func (r *randomRun) someNames(list [][]byte) [][]byte {
	k := 1 + r.rng.IntN(4)
	picked := r.rng.Perm(len(list))[:min(k, len(list))]
	slices.Sort(picked)
	out := make([][]byte, len(picked))
	for i, p := range picked {
		out[i] = list[p]
	}
	return out
}

func (r *randomRun) showNames(show func([]byte) string, names [][]byte) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = show(n)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// write makes one random write and describes it.
func (r *randomRun) write() {
	switch k := r.rng.IntN(10); {
	case k < 4:
		key, c := r.key(), r.column()
		p := parent(randomCF)
		if r.f.supers != nil {
			p = superParent(randomCF, r.superName())
			r.printf("insert %s %s/%s\n", key, r.f.showSuper(p.SuperColumn), r.showCol(c))
		} else {
			r.printf("insert %s %s\n", key, r.showCol(c))
		}
		r.a.insert(key, p, c)
	case k < 6:
		key, at := r.key(), r.deletionStamp()
		path := &cassandra.ColumnPath{ColumnFamily: randomCF}
		what := "row"
		switch {
		case r.f.supers != nil && r.rng.IntN(3) > 0:
			path.SuperColumn = r.superName()
			what = r.f.showSuper(path.SuperColumn)
			if r.rng.IntN(2) == 0 {
				path.Column = r.name()
				what += "/" + r.f.show(path.Column)
			}
		case r.f.supers == nil && r.rng.IntN(4) > 0:
			path.Column = r.name()
			what = r.f.show(path.Column)
		}
		r.printf("remove %s %s @%d\n", key, what, at)
		r.a.remove(key, path, at)
	default:
		rows := map[string][]*cassandra.Mutation{}
		var desc []string
		for range 1 + r.rng.IntN(2) {
			key := r.key()
			for range 1 + r.rng.IntN(3) {
				m, d := r.mutation()
				rows[key] = append(rows[key], m)
				desc = append(desc, key+":"+d)
			}
		}
		r.printf("batch %s\n", strings.Join(desc, " "))
		r.a.batch(mutationMap(randomCF, rows))
	}
}

// mutation draws one mutation of a batch and describes it.
func (r *randomRun) mutation() (*cassandra.Mutation, string) {
	at := r.deletionStamp()
	if r.f.supers == nil {
		switch r.rng.IntN(4) {
		case 0:
			names := r.someNames(r.f.names)
			return deletion(ts(at), nil, byNames(names...)), fmt.Sprintf("del%s@%d", r.showNames(r.f.show, names), at)
		case 1:
			start, finish := r.bounds(r.f.rangeBounds(), false)
			if len(start) == 0 && len(finish) == 0 {
				start = r.name() // ranges stay partial: remove covers the whole row
			}
			return deletion(ts(at), nil, byRange(start, finish, false, 100)),
				fmt.Sprintf("del(%s)@%d", r.showBounds(r.f.show, start, finish), at)
		}
		c := r.column()
		return insertMutation(c), r.showCol(c)
	}
	super := r.superName()
	switch r.rng.IntN(4) {
	case 0:
		names := r.someNames(r.f.names)
		return deletion(ts(at), super, byNames(names...)),
			fmt.Sprintf("del%s%s@%d", r.f.showSuper(super), r.showNames(r.f.show, names), at)
	case 1:
		if r.rng.IntN(2) == 0 {
			return deletion(ts(at), super, nil), fmt.Sprintf("del%s@%d", r.f.showSuper(super), at)
		}
		supers := r.someNames(r.f.supers)
		return deletion(ts(at), nil, byNames(supers...)), fmt.Sprintf("del%s@%d", r.showNames(r.f.showSuper, supers), at)
	}
	cols := []*cassandra.Column{r.column()}
	if r.rng.IntN(2) == 0 {
		if c := r.column(); !slices.Equal(c.Name, cols[0].Name) {
			cols = append(cols, c)
		}
	}
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = r.showCol(c)
	}
	return superMutation(super, cols...), fmt.Sprintf("%s{%s}", r.f.showSuper(super), strings.Join(parts, ","))
}

// rangeBounds are the bounds of the family's column slice ranges.
func (f randomFamily) rangeBounds() [][]byte {
	if f.ranges != nil {
		return f.ranges
	}
	return f.names
}

// read makes one random read and writes down its answer.
func (r *randomRun) read() {
	key := r.key()
	p := parent(randomCF)
	names, bounds, show, level := r.f.names, r.f.rangeBounds(), r.f.show, ""
	if r.f.supers != nil {
		if r.rng.IntN(2) == 0 {
			names, bounds, show = r.f.supers, r.f.supers, r.f.showSuper
		} else {
			p = superParent(randomCF, r.superName())
			level = r.f.showSuper(p.SuperColumn) + "/"
		}
	}
	switch r.rng.IntN(5) {
	case 0:
		path := &cassandra.ColumnPath{ColumnFamily: randomCF, SuperColumn: p.SuperColumn}
		if r.f.supers != nil && p.SuperColumn == nil {
			path.SuperColumn = r.superName()
			r.printf("  get %s %s: ", key, r.f.showSuper(path.SuperColumn))
		} else {
			path.Column = r.name()
			r.printf("  get %s %s%s: ", key, level, r.f.show(path.Column))
		}
		if c, ok := r.a.get(key, path); ok {
			r.printf("%s\n", r.showCosc(c))
		} else {
			r.printf("not found\n")
		}
	case 1:
		picked := r.someNames(names)
		r.printf("  slice %s %s%s: %s\n", key, level, r.showNames(show, picked), r.showSlice(r.a.slice(key, p, byNames(picked...))))
	case 2:
		reversed := r.rng.IntN(2) == 0
		start, finish := r.bounds(bounds, reversed)
		r.printf("  count %s %s(%s rev=%v): %d\n", key, level, r.showBounds(show, start, finish), reversed,
			r.a.count(key, p, byRange(start, finish, reversed, 100)))
	default:
		reversed := r.rng.IntN(2) == 0
		start, finish := r.bounds(bounds, reversed)
		count := int32(1 + r.rng.IntN(6))
		r.printf("  slice %s %s(%s rev=%v count=%d): %s\n", key, level, r.showBounds(show, start, finish), reversed, count,
			r.showSlice(r.a.slice(key, p, byRange(start, finish, reversed, count))))
	}
}

// readAll reads every row whole, with one multiget_slice.
func (r *randomRun) readAll() {
	keys := make([][]byte, len(randomKeys))
	for i, k := range randomKeys {
		keys[i] = b(k)
	}
	rows, err := r.a.C.MultigetSlice(Ctx(r.a.t), keys, parent(randomCF), everything(), one)
	if err != nil {
		r.a.t.Fatalf("multiget_slice: %v", err)
	}
	for _, k := range randomKeys {
		r.printf("  %s: %s\n", k, r.showSlice(rows[k]))
	}
}

func (r *randomRun) showSlice(cs []*cassandra.ColumnOrSuperColumn) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = r.showCosc(c)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func (r *randomRun) showCosc(c *cassandra.ColumnOrSuperColumn) string {
	switch {
	case c.Column != nil:
		return r.showCol(c.Column)
	case c.SuperColumn != nil:
		parts := make([]string, len(c.SuperColumn.Columns))
		for i, sub := range c.SuperColumn.Columns {
			parts[i] = r.showCol(sub)
		}
		return r.f.showSuper(c.SuperColumn.Name) + "{" + strings.Join(parts, ",") + "}"
	}
	return describeCosc(c)
}
