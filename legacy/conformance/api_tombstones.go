package conformance

import (
	"encoding/binary"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// composite encodes a CompositeType name: each component as a 2-byte
// length, its bytes and the end-of-component byte eoc.
func composite(eoc byte, components ...string) []byte {
	var out []byte
	for _, c := range components {
		out = binary.BigEndian.AppendUint16(out, uint16(len(c)))
		out = append(out, c...)
		out = append(out, eoc)
	}
	return out
}

func rangeDeletion(at int64, start, finish []byte) *cassandra.Mutation {
	return deletion(ts(at), nil, byRange(start, finish, false, 100))
}

func runRangeTombstoneTests(t *testing.T, target Target) {
	t.Run("Standard", func(t *testing.T) {
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", standardCF("Standard1"))
		for _, n := range []string{"c1", "c2", "c3", "c4", "c5"} {
			a.insert("key", parent("Standard1"), col(b(n), b("value"), 0))
		}
		a.insert("key", parent("Standard1"), col(b("c3b"), b("newer"), 5))
		a.batch(mutationMap("Standard1", map[string][]*cassandra.Mutation{"key": {rangeDeletion(1, b("c2"), b("c4"))}}))
		equalStrings(t, "after deleting c2..c4 at ts 1", names(a.slice("key", parent("Standard1"), everything())), []string{"c1", "c3b", "c5"})
		a.expectMissing("key", colPath("Standard1", b("c3")))
		a.insert("key", parent("Standard1"), col(b("c3"), b("older"), 1))
		a.expectMissing("key", colPath("Standard1", b("c3")))
		a.insert("key", parent("Standard1"), col(b("c3"), b("newer"), 2))
		a.mustGet("key", colPath("Standard1", b("c3")))
		if n := a.count("key", parent("Standard1"), everything()); n != 4 {
			t.Errorf("get_count after the range deletion = %d, want 4", n)
		}
		// Open bounds delete from the start or to the end.
		a.batch(mutationMap("Standard1", map[string][]*cassandra.Mutation{"key": {rangeDeletion(3, nil, b("c1"))}}))
		a.batch(mutationMap("Standard1", map[string][]*cassandra.Mutation{"key": {rangeDeletion(3, b("c5"), nil)}}))
		equalStrings(t, "after open-bounded deletions", names(a.slice("key", parent("Standard1"), everything())), []string{"c3", "c3b"})
		a.batch(mutationMap("Standard1", map[string][]*cassandra.Mutation{"key": {rangeDeletion(10, nil, nil)}}))
		if got := a.slice("key", parent("Standard1"), everything()); len(got) != 0 {
			t.Errorf("after deleting the whole range: %v", names(got))
		}
	})
	t.Run("SuperColumns", func(t *testing.T) {
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", superCF("Super1", subcomparator("LongType")))
		for i, sc := range []string{"sc1", "sc2", "sc3", "sc4", "sc5"} {
			a.insert("key", superParent("Super1", b(sc)), col(i64(int64(i)), b("value"), 0))
			a.insert("key", superParent("Super1", b(sc)), col(i64(int64(i+10)), b("value"), 0))
		}
		a.batch(mutationMap("Super1", map[string][]*cassandra.Mutation{"key": {rangeDeletion(1, b("sc2"), b("sc4"))}}))
		equalStrings(t, "after deleting super columns sc2..sc4", names(a.slice("key", parent("Super1"), everything())), []string{"sc1", "sc5"})
		a.expectMissing("key", superPath("Super1", b("sc3"), i64(2)))
		a.insert("key", superParent("Super1", b("sc3")), col(i64(2), b("back"), 2))
		equalStrings(t, "after a newer write", names(a.slice("key", parent("Super1"), everything())), []string{"sc1", "sc3", "sc5"})

		// A subcolumn range inside a super column is refused (as observed on
		// 3.11.9, super_slices.json step 49) and deletes nothing.
		err := a.C.BatchMutate(Ctx(t), mutationMap("Super1", map[string][]*cassandra.Mutation{
			"key": {deletion(ts(5), b("sc1"), byRange(i64(0), i64(20), false, 100))},
		}), one)
		expectIRE(t, "subcolumn range deletion", err, "Cannot delete a range of subcolumns in a super column")
		if n := len(a.slice("key", superParent("Super1", b("sc1")), everything())); n != 2 {
			t.Errorf("the refused subcolumn range deletion left %d subcolumns in sc1, want 2", n)
		}
	})
	t.Run("CompositeBounds", func(t *testing.T) {
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", standardCF("StandardComposite", comparator("CompositeType(AsciiType, AsciiType)")))
		p := parent("StandardComposite")
		digits := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
		for _, d := range digits {
			a.insert("key1", p, col(composite(0, d, d), b("value"), 10))
		}
		a.insert("key2", p, col(composite(0, "6"), b("value"), 10))
		for _, d := range digits {
			a.insert("key2", p, col(composite(0, d, d), b("value"), 10))
		}
		nameOf := func(components ...string) []byte { return composite(0, components...) }
		// From ("3") with EOC -1 (the start of the "3" prefix, inclusive) to
		// ("6", "\x01").
		a.batch(mutationMap("StandardComposite", map[string][]*cassandra.Mutation{
			"key1": {rangeDeletion(20, composite(0xff, "3"), composite(0, "6", "\x01"))},
		}))
		equalBytes(t, "key1 after deleting (3,-1)..(6,\\x01)", columnNamesOf(a.slice("key1", p, everything())),
			[][]byte{nameOf("0", "0"), nameOf("1", "1"), nameOf("2", "2"), nameOf("6", "6"), nameOf("7", "7"), nameOf("8", "8"), nameOf("9", "9")})
		// An end bound ("6") with EOC 0 covers the name ("6") exactly, not ("6", "6").
		a.batch(mutationMap("StandardComposite", map[string][]*cassandra.Mutation{
			"key2": {rangeDeletion(20, composite(0xff, "3"), composite(0, "6"))},
		}))
		equalBytes(t, "key2 after deleting (3,-1)..(6) with EOC 0", columnNamesOf(a.slice("key2", p, everything())),
			[][]byte{nameOf("0", "0"), nameOf("1", "1"), nameOf("2", "2"), nameOf("6", "6"), nameOf("7", "7"), nameOf("8", "8"), nameOf("9", "9")})
		a.batch(mutationMap("StandardComposite", map[string][]*cassandra.Mutation{
			"key2": {rangeDeletion(20, composite(0xff, "3"), composite(0, "6", "6"))},
		}))
		equalBytes(t, "key2 after deleting (3,-1)..(6,6)", columnNamesOf(a.slice("key2", p, everything())),
			[][]byte{nameOf("0", "0"), nameOf("1", "1"), nameOf("2", "2"), nameOf("7", "7"), nameOf("8", "8"), nameOf("9", "9")})
		// A start with EOC 0 is inclusive; an end bound with EOC 1 covers
		// the whole prefix.
		a.batch(mutationMap("StandardComposite", map[string][]*cassandra.Mutation{
			"key1": {rangeDeletion(20, composite(0, "7"), composite(1, "8"))},
		}))
		equalBytes(t, "key1 after deleting (7,0)..(8,1)", columnNamesOf(a.slice("key1", p, everything())),
			[][]byte{nameOf("0", "0"), nameOf("1", "1"), nameOf("2", "2"), nameOf("6", "6"), nameOf("9", "9")})
		// The deletions shadow older writes only.
		a.insert("key1", p, col(composite(0, "4", "4"), b("older"), 15))
		a.insert("key1", p, col(composite(0, "5", "5"), b("newer"), 25))
		equalBytes(t, "key1 after rewriting 4 (older) and 5 (newer)", columnNamesOf(a.slice("key1", p, everything())),
			[][]byte{nameOf("0", "0"), nameOf("1", "1"), nameOf("2", "2"), nameOf("5", "5"), nameOf("6", "6"), nameOf("9", "9")})
	})
}
