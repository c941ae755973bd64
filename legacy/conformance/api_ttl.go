package conformance

import (
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Expiry is counted in whole seconds from the second of the write (on
// Cassandra as on thriftd), so a column written with a TTL of 1 late in a
// second may be gone a millisecond later: columns read back before they
// expire get shortTTL, which leaves them at least a second.
const shortTTL = 2

// expiryWait bounds how long a test waits for a shortTTL to pass.
const expiryWait = 5 * time.Second

// eventually polls cond until it holds or expiryWait has passed, and
// reports whether it held.
func eventually(cond func() bool) bool {
	deadline := time.Now().Add(expiryWait)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func runTTLTests(t *testing.T, target Target) {
	t.Run("InsertExpires", func(t *testing.T) {
		t.Parallel()
		bothFamilies(t, target, func(t *testing.T, a *apiEnv, f family) {
			a.insert("key1", f.parent(), colTTL(b("short"), b("v"), 1, shortTTL))
			a.insert("key1", f.parent(), colTTL(b("long"), b("v"), 1, 3600))
			a.insert("key1", f.parent(), col(b("forever"), b("v"), 1))
			got := a.mustGet("key1", f.path(b("long")))
			if got.Column == nil || !a.TTLIs(got.Column.TTL, 3600) {
				t.Errorf("get of a TTL'd column = %s, want the original TTL 3600", describeCosc(got))
			}
			got = a.mustGet("key1", f.path(b("short")))
			if got.Column == nil || !a.TTLIs(got.Column.TTL, shortTTL) {
				t.Errorf("get of a TTL'd column = %s, want TTL %d", describeCosc(got), shortTTL)
			}
			gone := eventually(func() bool {
				_, found := a.get("key1", f.path(b("short")))
				return !found
			})
			if !gone {
				t.Fatalf("a column with TTL %d is still there after %v", shortTTL, expiryWait)
			}
			equalStrings(t, "slice after expiry", names(a.slice("key1", f.parent(), everything())), []string{"forever", "long"})
			if n := a.count("key1", f.parent(), everything()); n != 2 {
				t.Errorf("get_count after expiry = %d, want 2", n)
			}
		})
	})
	t.Run("BatchExpires", func(t *testing.T) {
		t.Parallel()
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", standardCF("Standard1"), superCF("Super1"))
		a.batch(map[string]map[string][]*cassandra.Mutation{"key1": {
			"Standard1": {insertMutation(colTTL(b("cttl4"), b("value1"), 0, shortTTL))},
			"Super1":    {superMutation(b("sc"), colTTL(b("cttl4"), b("value1"), 0, shortTTL))},
		}})
		c := a.mustGet("key1", colPath("Standard1", b("cttl4")))
		got := cellOf(c.Column)
		equalCells(t, "batch TTL column", []cell{{got.Name, got.Value, got.TS, 0}}, []cell{{"cttl4", "value1", 0, 0}})
		if !a.TTLIs(c.Column.TTL, shortTTL) {
			t.Errorf("batch TTL column = %s, want TTL %d", describeCosc(c), shortTTL)
		}
		gone := eventually(func() bool {
			return len(a.slice("key1", parent("Standard1"), everything())) == 0 &&
				len(a.slice("key1", parent("Super1"), everything())) == 0
		})
		if !gone {
			t.Errorf("columns written by batch_mutate with TTL %d are still there after %v", shortTTL, expiryWait)
		}
	})
	t.Run("OverwriteWithoutTTL", func(t *testing.T) {
		t.Parallel()
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", standardCF("Standard1"))
		a.insert("key1", parent("Standard1"), colTTL(b("cttl4"), b("value1"), 0, 1))
		a.insert("key1", parent("Standard1"), col(b("cttl4"), b("value1"), 1))
		// Wait until a column with TTL 1 written now has expired: the
		// overwritten one would be gone by then too.
		a.insert("key1", parent("Standard1"), colTTL(b("probe"), b("v"), 0, 1))
		if !eventually(func() bool { _, found := a.get("key1", colPath("Standard1", b("probe"))); return !found }) {
			t.Fatalf("the probe column did not expire within %v", expiryWait)
		}
		c := a.mustGet("key1", colPath("Standard1", b("cttl4")))
		equalCells(t, "overwritten column", []cell{cellOf(c.Column)}, []cell{{"cttl4", "value1", 1, 0}})
	})
	t.Run("RemoveExpiring", func(t *testing.T) {
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", standardCF("Standard1"))
		a.insert("key1", parent("Standard1"), colTTL(b("cttl5"), b("value1"), 0, 10))
		a.remove("key1", colPath("Standard1", b("cttl5")), 1)
		a.expectMissing("key1", colPath("Standard1", b("cttl5")))
	})
	t.Run("DefaultTimeToLive", func(t *testing.T) {
		t.Parallel()
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1",
			standardCF("Expiring", defaultTTL(shortTTL)), superCF("SuperExpiring", defaultTTL(shortTTL)), standardCF("Long", defaultTTL(3600)))
		a.insert("key1", parent("Long"), col(b("c"), b("v"), 0))
		if c := a.mustGet("key1", colPath("Long", b("c"))); !a.TTLIs(c.Column.TTL, 3600) {
			t.Errorf("a column of a family with default_time_to_live 3600 reads back as %s", describeCosc(c))
		}
		a.insert("key1", parent("Long"), colTTL(b("own"), b("v"), 0, 60))
		if c := a.mustGet("key1", colPath("Long", b("own"))); !a.TTLIs(c.Column.TTL, 60) {
			t.Errorf("an explicit TTL does not override default_time_to_live: %s", describeCosc(c))
		}
		a.insert("key1", parent("Expiring"), col(b("cttl3"), b("value1"), 0))
		a.insert("key1", superParent("SuperExpiring", b("sc")), col(b("cttl3"), b("value1"), 0))
		a.mustGet("key1", colPath("Expiring", b("cttl3")))
		gone := eventually(func() bool {
			_, f1 := a.get("key1", colPath("Expiring", b("cttl3")))
			_, f2 := a.get("key1", superPath("SuperExpiring", b("sc"), b("cttl3")))
			return !f1 && !f2
		})
		if !gone {
			t.Errorf("columns of families with default_time_to_live %d are still there after %v", shortTTL, expiryWait)
		}
	})
	t.Run("Limits", func(t *testing.T) {
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", standardCF("Standard1"), superCF("Super1"))
		const twentyYears = 20 * 365 * 24 * 60 * 60
		capped := a.Diverges("ttl-2038")
		for _, p := range []*cassandra.ColumnParent{parent("Standard1"), superParent("Super1", b("sc"))} {
			if capped {
				err := a.C.Insert(Ctx(t), b("key1"), p, colTTL(b("max"), b("v"), 0, twentyYears), one)
				expectIRE(t, "20-year TTL past 2038", err, "exceeds maximum supported expiration date of 2038-01-19T03:14:06+00:00")
			} else {
				a.insert("key1", p, colTTL(b("max"), b("v"), 0, twentyYears))
				got := a.slice("key1", p, byNames(b("max")))
				if len(got) != 1 || !a.TTLIs(got[0].Column.TTL, twentyYears) {
					t.Errorf("a 20-year TTL in %s reads back as %v", p.ColumnFamily, got)
				}
			}
			err := a.C.Insert(Ctx(t), b("key1"), p, colTTL(b("over"), b("v"), 0, twentyYears+1), one)
			expectIRE(t, "TTL above 20 years", err, "ttl is too large. requested (630720001) maximum (630720000)")
			err = a.C.Insert(Ctx(t), b("key1"), p, colTTL(b("neg"), b("v"), 0, -1), one)
			expectIRE(t, "negative TTL", err, "ttl must be greater or equal to 0")
		}
		_, err := a.C.SystemAddColumnFamily(Ctx(t), standardCF("TooLong", func(cf *cassandra.CfDef) { cf.Keyspace = "Keyspace1" }, defaultTTL(twentyYears+1)))
		expectIRE(t, "default_time_to_live above 20 years", err, "")
		a.addCF(standardCF("MaxDefault", defaultTTL(twentyYears)))
		if capped {
			err := a.C.Insert(Ctx(t), b("key1"), parent("MaxDefault"), col(b("c"), b("v"), 0), one)
			expectIRE(t, "default 20-year TTL past 2038", err, "exceeds maximum supported expiration date")
		} else {
			a.insert("key1", parent("MaxDefault"), col(b("c"), b("v"), 0))
		}
	})
}
