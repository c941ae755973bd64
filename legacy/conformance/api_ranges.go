package conformance

import (
	"bytes"
	"fmt"
	"sort"
	"testing"

	"github.com/thriftbridge/thriftbridge/store/partition"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// fillRows writes column "c" into rows keys of Standard1 and into super
// column "sc" of Super1.
func fillRows(a *apiEnv, keys []string) {
	a.t.Helper()
	m := map[string]map[string][]*cassandra.Mutation{}
	for _, k := range keys {
		m[k] = map[string][]*cassandra.Mutation{
			"Standard1": {insertMutation(col(b("c"), b("v-"+k), 1)), insertMutation(col(b("d"), b("w-"+k), 1))},
			"Super1":    {superMutation(b("sc"), col(b("c"), b("v-"+k), 1))},
		}
	}
	a.batch(m)
}

func letterKeys() []string { return []string{"a", "b", "c", "d", "e"} }

func newRangeEnv(t *testing.T, target Target, partitioner string) *apiEnv {
	return newKeyspaceEnv(t, target, Options{Partitioner: partitioner}, "Keyspace1", standardCF("Standard1"), superCF("Super1"))
}

// rangeParents are the parents a range test reads through: a Standard
// family, a Super family at super level, and inside a super column.
func rangeParents() []*cassandra.ColumnParent {
	return []*cassandra.ColumnParent{parent("Standard1"), parent("Super1"), superParent("Super1", b("sc"))}
}

func parentName(p *cassandra.ColumnParent) string {
	if p.SuperColumn != nil {
		return p.ColumnFamily + "/" + string(p.SuperColumn)
	}
	return p.ColumnFamily
}

func hexToken(key string) string { return fmt.Sprintf("%x", key) }

func runRangeTests(t *testing.T, target Target) {
	t.Run("ByteOrderedKeys", func(t *testing.T) {
		a := newRangeEnv(t, target, "ByteOrderedPartitioner")
		fillRows(a, letterKeys())
		for _, p := range rangeParents() {
			for _, c := range []struct {
				start, end string
				count      int32
				want       []string
			}{
				{"", "", 100, letterKeys()},
				{"b", "d", 100, []string{"b", "c", "d"}},
				{"b", "", 100, []string{"b", "c", "d", "e"}},
				{"", "c", 100, []string{"a", "b", "c"}},
				{"bb", "dd", 100, []string{"c", "d"}},
				{"b", "", 2, []string{"b", "c"}},
				{"f", "", 100, []string{}},
				{"c", "c", 100, []string{"c"}},
			} {
				got := a.rangeSlices(p, everything(), keysRange(b(c.start), b(c.end), c.count))
				equalStrings(t, fmt.Sprintf("%s keys [%q, %q] count %d", parentName(p), c.start, c.end, c.count), keysOf(got), c.want)
			}
		}
		_, err := a.C.GetRangeSlices(Ctx(t), parent("Standard1"), everything(), keysRange(b("z"), b("a"), 10), one)
		expectIRE(t, "start key after end key", err, "start key must sort before (or equal to) finish key in your partitioner!")
		_, err = a.C.GetRangeSlices(Ctx(t), parent("Standard1"), everything(), keysRange(b("a"), b(""), 0), one)
		expectIRE(t, "count 0", err, "maxRows must be positive")
		_, err = a.C.GetRangeSlices(Ctx(t), parent("Standard1"), everything(), &cassandra.KeyRange{StartKey: b("a"), Count: 10}, one)
		expectIRE(t, "no end", err, "exactly one each of {start key, start token} and {end key, end token} must be specified")
		start, end := hexToken("a"), "e"
		_, err = a.C.GetRangeSlices(Ctx(t), parent("Standard1"), everything(), &cassandra.KeyRange{StartToken: &start, EndKey: b(end), Count: 10}, one)
		expectIRE(t, "start token with end key", err, "start token + end key is not a supported key range")
	})
	t.Run("ByteOrderedTokens", func(t *testing.T) {
		a := newRangeEnv(t, target, "ByteOrderedPartitioner")
		fillRows(a, letterKeys())
		for _, p := range rangeParents() {
			for _, c := range []struct {
				start, end string
				want       []string
			}{
				{"", "", letterKeys()},
				{hexToken("b"), hexToken("d"), []string{"c", "d"}},
				{hexToken("a"), hexToken("a"), []string{"b", "c", "d", "e", "a"}},
				{hexToken("c"), hexToken("c"), []string{"d", "e", "a", "b", "c"}},
				{hexToken("d"), hexToken("b"), []string{"e", "a", "b"}},
				{"", hexToken("b"), []string{"a", "b"}},
				{hexToken("c"), "", []string{"d", "e"}},
				{"00", "00", letterKeys()},
			} {
				got := a.rangeSlices(p, everything(), tokensRange(c.start, c.end, 100))
				equalStrings(t, fmt.Sprintf("%s tokens (%s, %s]", parentName(p), c.start, c.end), keysOf(got), c.want)
			}
		}
		// Start key with an end token.
		end := hexToken("c")
		got := a.rangeSlices(parent("Standard1"), everything(), &cassandra.KeyRange{StartKey: b("b"), EndToken: &end, Count: 100})
		equalStrings(t, "start key b, end token c", keysOf(got), []string{"b", "c"})
		bad := "not hex"
		_, err := a.C.GetRangeSlices(Ctx(t), parent("Standard1"), everything(), &cassandra.KeyRange{StartToken: &bad, EndToken: &bad, Count: 10}, one)
		a.expectRefused("malformed token", err, "")
		// The connection survives a refused token.
		a.slice("a", parent("Standard1"), everything())
	})
	t.Run("Columns", func(t *testing.T) {
		a := newRangeEnv(t, target, "ByteOrderedPartitioner")
		for _, k := range []string{"key1", "key2", "key3", "key4", "key5"} {
			for _, c := range []string{"col1", "col2", "col3", "col4", "col5"} {
				a.insert(k, parent("Standard1"), col(b(c), b("v-"+c), 0))
				a.insert(k, superParent("Super1", b("sc1")), col(b(c), b("v-"+c), 0))
			}
		}
		for _, p := range []*cassandra.ColumnParent{parent("Standard1"), superParent("Super1", b("sc1"))} {
			got := a.rangeSlices(p, byNames(b("col1"), b("col3")), keysRange(b("key2"), b("key4"), 5))
			equalStrings(t, "keys", keysOf(got), []string{"key2", "key3", "key4"})
			for _, r := range got {
				equalStrings(t, "names predicate", names(r.Columns), []string{"col1", "col3"})
			}
			got = a.rangeSlices(p, byRange(b("col2"), b("col4"), false, 2), keysRange(b("key1"), b("key2"), 5))
			for _, r := range got {
				equalStrings(t, "range predicate with count", names(r.Columns), []string{"col2", "col3"})
			}
			got = a.rangeSlices(p, byRange(b("col4"), b("col2"), true, 5), keysRange(b("key1"), b("key1"), 5))
			equalStrings(t, "reversed range predicate", names(got[0].Columns), []string{"col4", "col3", "col2"})
			got = a.rangeSlices(p, byNames(b("nope")), keysRange(b("key2"), b(""), 1))
			if len(got) != 1 || len(got[0].Columns) != 0 {
				t.Errorf("a row without the named columns: %v", got)
			}
			if got := a.rangeSlices(p, byNames(b("col1")), keysRange(b("key6"), b(""), 1)); len(got) != 0 {
				t.Errorf("range after the last key: %v", keysOf(got))
			}
		}
		got := a.rangeSlices(parent("Super1"), byNames(b("sc1")), keysRange(b("key2"), b("key4"), 5))
		for _, r := range got {
			equalStrings(t, "super names predicate", names(r.Columns), []string{"sc1"})
		}
	})
	t.Run("Ghosts", func(t *testing.T) {
		a := newRangeEnv(t, target, "ByteOrderedPartitioner")
		fillRows(a, []string{"key1", "key2", "key3"})
		a.remove("key2", &cassandra.ColumnPath{ColumnFamily: "Standard1"}, 5)
		a.remove("key2", &cassandra.ColumnPath{ColumnFamily: "Super1"}, 5)
		a.remove("key3", colPath("Standard1", b("c")), 5)
		a.remove("key3", colPath("Standard1", b("d")), 5)
		a.remove("key3", superPath("Super1", b("sc"), nil), 5)
		want := []string{"key1", "key2", "key3"}
		if a.OnBackend("range-ghosts") {
			want = []string{"key1"}
		}
		for _, p := range rangeParents() {
			got := a.rangeSlices(p, everything(), keysRange(nil, nil, 100))
			equalStrings(t, parentName(p)+" keys with ghosts", keysOf(got), want)
			for _, r := range got[1:] {
				if len(r.Columns) != 0 {
					t.Errorf("%s ghost row %s has columns %v", parentName(p), r.Key, names(r.Columns))
				}
			}
		}
	})
	for _, name := range []string{"Murmur3Partitioner", "RandomPartitioner"} {
		t.Run(name, func(t *testing.T) {
			a := newRangeEnv(t, target, name)
			p, err := partition.ByName(name)
			if err != nil {
				t.Fatalf("partitioner %s: %v", name, err)
			}
			var keys []string
			for i := 0; i < 30; i++ {
				keys = append(keys, fmt.Sprintf("key%02d", i))
			}
			fillRows(a, keys)
			sorted := append([]string(nil), keys...)
			sort.Slice(sorted, func(i, j int) bool {
				return bytes.Compare(p.Token(b(sorted[i])), p.Token(b(sorted[j]))) < 0
			})
			for _, par := range rangeParents() {
				got := keysOf(a.rangeSlices(par, everything(), keysRange(nil, nil, 100)))
				equalStrings(t, parentName(par)+" rows in token order", got, sorted)
			}
			// Paging by start key: the start key is included.
			var paged []string
			start := []byte{}
			for page := 0; page < 20 && len(paged) < len(keys); page++ {
				rows := a.rangeSlices(parent("Standard1"), everything(), keysRange(start, nil, 7))
				if len(paged) > 0 {
					if len(rows) == 0 || string(rows[0].Key) != paged[len(paged)-1] {
						t.Fatalf("page %d starts with %v, want the start key %q", page, keysOf(rows), paged[len(paged)-1])
					}
					rows = rows[1:]
				}
				if len(rows) == 0 {
					break
				}
				paged = append(paged, keysOf(rows)...)
				start = rows[len(rows)-1].Key
			}
			equalStrings(t, "paged by start key", paged, sorted)
			// Tokens: start exclusive, end inclusive.
			tok := func(k string) string { return p.FormatToken(p.Token(b(k))) }
			got := keysOf(a.rangeSlices(parent("Standard1"), everything(), tokensRange(tok(sorted[3]), tok(sorted[9]), 100)))
			equalStrings(t, "token range", got, sorted[4:10])
			got = keysOf(a.rangeSlices(parent("Standard1"), everything(), tokensRange(tok(sorted[25]), tok(sorted[2]), 100)))
			equalStrings(t, "wrapping token range", got, append(append([]string{}, sorted[26:]...), sorted[:3]...))
			got = keysOf(a.rangeSlices(parent("Standard1"), everything(), tokensRange(tok(sorted[10]), tok(sorted[10]), 100)))
			equalStrings(t, "Y..Y token range", got, append(append([]string{}, sorted[11:]...), sorted[:11]...))
			min := p.FormatToken(p.MinToken())
			got = keysOf(a.rangeSlices(parent("Standard1"), everything(), tokensRange(min, min, 100)))
			equalStrings(t, "min..min token range", got, sorted)
			// An end key whose token precedes the start key's is refused.
			_, err = a.C.GetRangeSlices(Ctx(t), parent("Standard1"), everything(), keysRange(b(sorted[20]), b(sorted[5]), 100), one)
			expectIRE(t, "end key token before start key token", err, "start key's token sorts after end key's token")
			got = keysOf(a.rangeSlices(parent("Standard1"), everything(), keysRange(b(sorted[5]), b(sorted[8]), 100)))
			equalStrings(t, "key range in token order", got, sorted[5:9])
		})
	}
	t.Run("PagedSlice", func(t *testing.T) {
		a := newRangeEnv(t, target, "ByteOrderedPartitioner")
		for _, k := range []string{"k1", "k2", "k3"} {
			for _, c := range []string{"a", "b", "c"} {
				a.insert(k, parent("Standard1"), col(b(c), b(k+c), 1))
			}
		}
		for i := 0; i < 10; i++ {
			a.insert("wide", parent("Standard1"), col(b(fmt.Sprintf("w%02d", i)), b("v"), 1))
		}
		rows, err := a.C.GetPagedSlice(Ctx(t), "Standard1", keysRange(b("k1"), b("k3"), 5), []byte{}, one)
		expectOK(t, "get_paged_slice", err)
		rowCount := a.Diverges("paged-slice-count")
		if rowCount {
			equalStrings(t, "paged rows", keysOf(rows), []string{"k1", "k2", "k3"})
			for _, r := range rows {
				equalStrings(t, "row "+string(r.Key), names(r.Columns), []string{"a", "b", "c"})
			}
		} else {
			equalStrings(t, "paged rows", keysOf(rows), []string{"k1", "k2"})
			if len(rows) == 2 {
				equalStrings(t, "first row", names(rows[0].Columns), []string{"a", "b", "c"})
				equalStrings(t, "second row cut by the count", names(rows[1].Columns), []string{"a", "b"})
			}
		}
		rows, err = a.C.GetPagedSlice(Ctx(t), "Standard1", keysRange(b("k2"), b("k3"), 5), b("c"), one)
		expectOK(t, "get_paged_slice from a start column", err)
		equalStrings(t, "resumed rows", keysOf(rows), []string{"k2", "k3"})
		if len(rows) == 2 {
			equalStrings(t, "resumed first row", names(rows[0].Columns), []string{"c"})
			equalStrings(t, "next row whole", names(rows[1].Columns), []string{"a", "b", "c"})
		}
		if rowCount {
			return
		}
		// Within a wide row, page by page.
		var seen []string
		start := []byte{}
		for page := 0; page < 10; page++ {
			rows, err := a.C.GetPagedSlice(Ctx(t), "Standard1", keysRange(b("wide"), b("wide"), 4), start, one)
			expectOK(t, "get_paged_slice of a wide row", err)
			if len(rows) != 1 {
				t.Fatalf("wide row page %d: %v", page, keysOf(rows))
			}
			cols := names(rows[0].Columns)
			if len(seen) > 0 {
				if len(cols) == 0 || cols[0] != seen[len(seen)-1] {
					t.Fatalf("page %d = %v does not start at %q", page, cols, seen[len(seen)-1])
				}
				cols = cols[1:]
			}
			seen = append(seen, cols...)
			if len(cols) == 0 || len(rows[0].Columns) < 4 {
				break
			}
			start = b(cols[len(cols)-1])
		}
		want := []string{}
		for i := 0; i < 10; i++ {
			want = append(want, fmt.Sprintf("w%02d", i))
		}
		equalStrings(t, "wide row paged", seen, want)
	})
}
