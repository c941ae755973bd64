package conformance

import (
	"encoding/hex"
	"sort"
	"testing"

	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// prefixNames is how a CQL backend stores CompositeType names (backend
// divergence composite-prefix-names): one clustering column per
// component, missing trailing components stored empty, and read back
// without empty trailing components.
type prefixNames struct {
	typ *marshal.Composite
	n   int
}

// newPrefixNames returns the naming of comparator on a CQL backend, or
// false for a comparator that is not a CompositeType.
func newPrefixNames(t testing.TB, comparator string) (prefixNames, bool) {
	t.Helper()
	typ, err := marshal.Parse(comparator)
	if err != nil {
		t.Fatalf("comparator %s: %v", comparator, err)
	}
	c, ok := typ.(*marshal.Composite)
	if !ok {
		return prefixNames{}, false
	}
	return prefixNames{typ: c, n: len(c.Components())}, true
}

// components splits a stored CompositeType name (end-of-component bytes
// ignored).
func (p prefixNames) components(t testing.TB, name []byte) [][]byte {
	t.Helper()
	var parts [][]byte
	for rest := name; len(rest) > 0; {
		if len(rest) < 3 {
			t.Fatalf("composite name %x: truncated", name)
		}
		l := int(rest[0])<<8 | int(rest[1])
		if len(rest) < 3+l {
			t.Fatalf("composite name %x: truncated", name)
		}
		parts = append(parts, rest[2:2+l])
		rest = rest[3+l:]
	}
	return parts
}

func encodeComposite(parts [][]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, byte(len(p)>>8), byte(len(p)))
		out = append(out, p...)
		out = append(out, 0)
	}
	return out
}

// stored is the name as the cluster holds it: every component, the
// missing ones empty.
func (p prefixNames) stored(t testing.TB, name []byte) []byte {
	parts := p.components(t, name)
	for len(parts) < p.n {
		parts = append(parts, []byte{})
	}
	return encodeComposite(parts)
}

// read is the name as the backend reads it back: without empty trailing
// components (one component at least).
func (p prefixNames) read(t testing.TB, name []byte) []byte {
	parts := p.components(t, name)
	for len(parts) > 1 && len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1]
	}
	return encodeComposite(parts)
}

// cells turns what Cassandra returned for a row of these names into what
// the backend returns: the names ordered as the cluster orders their
// stored forms, the cells of names stored alike merged into the one
// written last, each name as read back.
func (p prefixNames) cells(t testing.TB, cells []vecCell) []vecCell {
	t.Helper()
	type entry struct {
		cell   vecCell
		stored []byte
	}
	var es []entry
	for _, c := range cells {
		name, err := hex.DecodeString(c.NameHex)
		if err != nil {
			t.Fatalf("name %s: %v", c.NameHex, err)
		}
		c.NameHex = hex.EncodeToString(p.read(t, name))
		es = append(es, entry{c, p.stored(t, name)})
	}
	sort.SliceStable(es, func(i, j int) bool { return p.typ.Compare(es[i].stored, es[j].stored) < 0 })
	var out []vecCell
	for i, e := range es {
		if i > 0 && p.typ.Compare(es[i-1].stored, e.stored) == 0 {
			if e.cell.Timestamp > out[len(out)-1].Timestamp {
				out[len(out)-1] = e.cell
			}
			continue
		}
		out = append(out, e.cell)
	}
	return out
}

// find returns the cell of merged (cells' result) that holds name.
func (p prefixNames) find(t testing.TB, merged []vecCell, nameHex string) (vecCell, bool) {
	t.Helper()
	name, err := hex.DecodeString(nameHex)
	if err != nil {
		t.Fatalf("name %s: %v", nameHex, err)
	}
	want := p.stored(t, name)
	for _, c := range merged {
		n, err := hex.DecodeString(c.NameHex)
		if err != nil {
			t.Fatalf("name %s: %v", c.NameHex, err)
		}
		if p.typ.Compare(p.stored(t, n), want) == 0 {
			return c, true
		}
	}
	return vecCell{}, false
}

// readAll maps names to the names the backend reads back, in the same
// order.
func (p prefixNames) readAll(t testing.TB, namesHex []string) []string {
	t.Helper()
	out := make([]string, 0, len(namesHex))
	for _, h := range namesHex {
		name, err := hex.DecodeString(h)
		if err != nil {
			t.Fatalf("name %s: %v", h, err)
		}
		out = append(out, hex.EncodeToString(p.read(t, name)))
	}
	return out
}

// prefixNameResults are the results of the composite slice vectors
// (composite_slices.json, by query) that differ on a CQL backend beyond
// the names read back (backend divergence composite-prefix-names): the
// vectors store ("a", "") and not ("a"), which the backend holds as one
// name read back as ("a"), so the queries that tell the two apart find
// ("a") where Cassandra found nothing, and the reverse.
var prefixNameResults = map[string][]string{
	// ("a") EOC 0 .. ("a") EOC 0: the name ("a") exactly.
	"07": {"00016100"},
	"30": {"00016100"},
	// reversed, ("a") EOC 0 .. start: ("a") and the names before it.
	"32": {"00016100", "0000000008000000000000000000", "0000000008ffffffffffffffff00"},
	// ("a", "") .. ("a", ""): nothing is stored as ("a", "") any more.
	"42": {},
	// names ("a") finds the name read back as ("a").
	"names_0": {"00016100", "000161000008000000000000000100", "00016200"},
	"names_5": {"00016100"},
}
