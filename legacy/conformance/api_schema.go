package conformance

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// runSessionTests covers login and set_keyspace.
func runSessionTests(t *testing.T, target Target) {
	t.Run("Login", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		auth := &cassandra.AuthenticationRequest{Credentials: map[string]string{"username": "alice", "password": "secret"}}
		expectOK(t, "login with authentication off", a.C.Login(Ctx(t), auth))
	})
	t.Run("SetKeyspace", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		err := a.C.Insert(Ctx(t), b("k"), parent("Standard1"), col(b("c"), b("v"), 1), one)
		expectIRE(t, "insert without a keyspace", err, "No keyspace has been specified")
		expectIRE(t, "set_keyspace of a missing keyspace", a.C.SetKeyspace(Ctx(t), "Missing"), "Keyspace 'Missing' does not exist")
		a.createKeyspace("Keyspace1", standardCF("Standard1"))
		a.insert("k", parent("Standard1"), col(b("c"), b("v"), 1))
		// The keyspace is per connection: a second connection has none.
		other := a.Dial()
		err = other.Insert(Ctx(t), b("k"), parent("Standard1"), col(b("c"), b("v"), 1), one)
		expectIRE(t, "insert on a fresh connection", err, "No keyspace has been specified")
		// The system keyspaces exist for set_keyspace.
		expectOK(t, "set_keyspace system", other.SetKeyspace(Ctx(t), "system"))
	})
}

// runDescribeTests covers the describe_* methods and trace_next_query.
func runDescribeTests(t *testing.T, target Target) {
	t.Run("Node", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		v, err := a.C.DescribeVersion(Ctx(t))
		expectOK(t, "describe_version", err)
		if !regexp.MustCompile(`^(19|20)\.\d+\.\d+$`).MatchString(v) {
			t.Errorf("describe_version = %q, want 19.x.y or 20.x.y", v)
		}
		name, err := a.C.DescribeClusterName(Ctx(t))
		expectOK(t, "describe_cluster_name", err)
		if name != "Test Cluster" {
			t.Errorf("describe_cluster_name = %q, want the default %q", name, "Test Cluster")
		}
		p, err := a.C.DescribePartitioner(Ctx(t))
		expectOK(t, "describe_partitioner", err)
		if p != "org.apache.cassandra.dht.Murmur3Partitioner" {
			t.Errorf("describe_partitioner = %q, want Murmur3Partitioner by default", p)
		}
		snitch, err := a.C.DescribeSnitch(Ctx(t))
		expectOK(t, "describe_snitch", err)
		if snitch != "org.apache.cassandra.locator.SimpleSnitch" {
			t.Errorf("describe_snitch = %q", snitch)
		}
		id, err := a.C.TraceNextQuery(Ctx(t))
		expectOK(t, "trace_next_query", err)
		if len(id) != 16 || id[6]>>4 != 1 {
			t.Errorf("trace_next_query = %x, want a version 1 UUID", id)
		}
	})
	t.Run("NodeOptions", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{Partitioner: "ByteOrderedPartitioner", ClusterName: "test"})
		name, err := a.C.DescribeClusterName(Ctx(t))
		expectOK(t, "describe_cluster_name", err)
		if name != "test" {
			t.Errorf("describe_cluster_name = %q, want %q", name, "test")
		}
		p, err := a.C.DescribePartitioner(Ctx(t))
		expectOK(t, "describe_partitioner", err)
		if p != "org.apache.cassandra.dht.ByteOrderedPartitioner" {
			t.Errorf("describe_partitioner = %q", p)
		}
	})
	t.Run("Keyspaces", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		before, err := a.C.DescribeKeyspaces(Ctx(t))
		expectOK(t, "describe_keyspaces", err)
		if !hasKeyspace(before, "system") {
			t.Errorf("describe_keyspaces lacks the system keyspace: %v", keyspaceNames(before))
		}
		a.createKeyspace("Keyspace1", standardCF("Standard1"), superCF("Super1"))
		after, err := a.C.DescribeKeyspaces(Ctx(t))
		expectOK(t, "describe_keyspaces", err)
		// A fresh thriftd is the test's alone: adding Keyspace1 adds exactly
		// it. A reference node is shared with other packages' tests, which
		// may add and drop keyspaces of their own meanwhile.
		grew := len(after) == len(before)+1
		if target.Cassandra {
			grew = !hasKeyspace(before, "Keyspace1")
		}
		if !grew || !hasKeyspace(after, "Keyspace1") {
			t.Errorf("describe_keyspaces after adding Keyspace1 = %v (before %v)", keyspaceNames(after), keyspaceNames(before))
		}
		ks, err := a.C.DescribeKeyspace(Ctx(t), "Keyspace1")
		expectOK(t, "describe_keyspace", err)
		if ks.StrategyClass != "org.apache.cassandra.locator.SimpleStrategy" || ks.StrategyOptions["replication_factor"] != "1" {
			t.Errorf("describe_keyspace strategy = %s %v", ks.StrategyClass, ks.StrategyOptions)
		}
		var cfNames []string
		for _, cf := range ks.CfDefs {
			cfNames = append(cfNames, cf.Name+":"+cf.ColumnType)
		}
		equalStrings(t, "families", cfNames, []string{"Standard1:Standard", "Super1:Super"})
		_, err = a.C.DescribeKeyspace(Ctx(t), "Missing")
		var nf *cassandra.NotFoundException
		if !errors.As(err, &nf) {
			t.Errorf("describe_keyspace of a missing keyspace: err = %v, want NotFoundException", err)
		}
	})
	t.Run("SchemaVersions", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		v1 := a.schemaVersion()
		a.createKeyspace("Keyspace1")
		v2 := a.schemaVersion()
		if v1 == v2 {
			t.Errorf("schema version %s did not change after system_add_keyspace", v1)
		}
	})
	t.Run("Ring", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		a.createKeyspace("Keyspace1", standardCF("Standard1"))
		for _, local := range []bool{false, true} {
			var ring []*cassandra.TokenRange
			var err error
			if local {
				ring, err = a.C.DescribeLocalRing(Ctx(t), "Keyspace1")
			} else {
				ring, err = a.C.DescribeRing(Ctx(t), "Keyspace1")
			}
			expectOK(t, "describe_ring", err)
			if len(ring) != 1 {
				t.Fatalf("describe_ring (local %v) = %d ranges, want one node owning the ring", local, len(ring))
			}
			r := ring[0]
			if r.StartToken != r.EndToken {
				t.Errorf("single-node range (%s, %s], want start == end (the whole ring)", r.StartToken, r.EndToken)
			}
			equalStrings(t, "endpoints", r.Endpoints, []string{"127.0.0.1"})
			if len(r.EndpointDetails) != 1 || r.EndpointDetails[0].Host != "127.0.0.1" {
				t.Errorf("endpoint_details = %+v", r.EndpointDetails)
			}
		}
		_, err := a.C.DescribeRing(Ctx(t), "system")
		expectIRE(t, "describe_ring system", err, "")
		_, err = a.C.DescribeRing(Ctx(t), "Missing")
		expectIRE(t, "describe_ring of a missing keyspace", err, "")
		tm, err := a.C.DescribeTokenMap(Ctx(t))
		expectOK(t, "describe_token_map", err)
		if len(tm) != 1 {
			t.Fatalf("describe_token_map = %v, want one token", tm)
		}
		for tok, node := range tm {
			if node != "127.0.0.1" {
				t.Errorf("describe_token_map %s -> %s, want 127.0.0.1", tok, node)
			}
		}
	})
	t.Run("Splits", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{Partitioner: "ByteOrderedPartitioner"})
		a.createKeyspace("Keyspace1", standardCF("Standard1"))
		const rows = 40
		m := map[string][]*cassandra.Mutation{}
		for i := 0; i < rows; i++ {
			m[fmt.Sprintf("key%02d", i)] = []*cassandra.Mutation{insertMutation(col(b("c"), b("v"), 1))}
		}
		a.batch(mutationMap("Standard1", m))
		start, end := "", ""
		ex, err := a.C.DescribeSplitsEx(Ctx(t), "Standard1", start, end, 10)
		expectOK(t, "describe_splits_ex", err)
		if len(ex) == 0 {
			t.Fatal("describe_splits_ex returned no split")
		}
		var total int64
		for i, s := range ex {
			total += s.RowCount
			if i > 0 && s.StartToken != ex[i-1].EndToken {
				t.Errorf("split %d starts at %q, previous ends at %q", i, s.StartToken, ex[i-1].EndToken)
			}
		}
		if ex[0].StartToken != start || ex[len(ex)-1].EndToken != end {
			t.Errorf("splits cover (%q, %q], want (%q, %q]", ex[0].StartToken, ex[len(ex)-1].EndToken, start, end)
		}
		switch {
		case a.OnBackend("size-estimates"):
			if total < 0 {
				t.Errorf("describe_splits_ex estimates %d rows", total)
			}
		case a.Diverges("exact-splits"):
			if total <= 0 {
				t.Errorf("describe_splits_ex estimates %d rows", total)
			}
		default:
			if total != rows {
				t.Errorf("describe_splits_ex row counts sum to %d, want %d", total, rows)
			}
			if len(ex) < 2 {
				t.Errorf("describe_splits_ex with 10 keys per split over %d rows gave %d split(s)", rows, len(ex))
			}
		}
		tokens, err := a.C.DescribeSplits(Ctx(t), "Standard1", start, end, 10)
		expectOK(t, "describe_splits", err)
		if len(tokens) != len(ex)+1 || tokens[0] != start || tokens[len(tokens)-1] != end {
			t.Errorf("describe_splits = %q, want the %d boundaries of describe_splits_ex", tokens, len(ex)+1)
		}
		_, err = a.C.DescribeSplitsEx(Ctx(t), "Missing", start, end, 10)
		a.expectRefused("describe_splits_ex of a missing family", err, "")
	})
}

func (a *apiEnv) schemaVersion() string {
	a.t.Helper()
	versions, err := a.C.DescribeSchemaVersions(Ctx(a.t))
	expectOK(a.t, "describe_schema_versions", err)
	if len(versions) != 1 {
		a.t.Fatalf("describe_schema_versions = %v, want one version", versions)
	}
	for v, hosts := range versions {
		equalStrings(a.t, "schema version hosts", hosts, []string{"127.0.0.1"})
		return v
	}
	return ""
}

func hasKeyspace(defs []*cassandra.KsDef, name string) bool {
	for _, d := range defs {
		if d.Name == name {
			return true
		}
	}
	return false
}

func keyspaceNames(defs []*cassandra.KsDef) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

// runKeyspaceTests covers system_add/update/drop_keyspace.
func runKeyspaceTests(t *testing.T, target Target) {
	t.Run("AddUpdateDrop", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		ks := ksDef("CreateKeyspace", standardCF("CreateKsCf"))
		ks.StrategyOptions["replication_factor"] = "10" // a large RF is accepted
		_, err := a.C.SystemAddKeyspace(Ctx(t), ks)
		expectOK(t, "system_add_keyspace", err)
		_, err = a.C.SystemAddKeyspace(Ctx(t), ksDef("CreateKeyspace"))
		expectIRE(t, "adding an existing keyspace", err, "")
		_, err = a.C.SystemAddKeyspace(Ctx(t), ksDef("createkeyspace"))
		expectIRE(t, "adding a keyspace differing only by case", err, "")

		mod := ksDef("CreateKeyspace")
		mod.StrategyClass = "org.apache.cassandra.locator.NetworkTopologyStrategy"
		mod.StrategyOptions = map[string]string{"datacenter1": "1"}
		mod.DurableWrites = false
		_, err = a.C.SystemUpdateKeyspace(Ctx(t), mod)
		expectOK(t, "system_update_keyspace", err)
		got, err := a.C.DescribeKeyspace(Ctx(t), "CreateKeyspace")
		expectOK(t, "describe_keyspace", err)
		if got.StrategyClass != mod.StrategyClass || got.StrategyOptions["datacenter1"] != "1" || got.DurableWrites {
			t.Errorf("after update: strategy %s %v durable %v", got.StrategyClass, got.StrategyOptions, got.DurableWrites)
		}
		if len(got.CfDefs) != 1 || got.CfDefs[0].Name != "CreateKsCf" {
			t.Errorf("update kept families %v, want [CreateKsCf]", got.CfDefs)
		}

		bad := ksDef("CreateKeyspace")
		bad.StrategyOptions = map[string]string{}
		_, err = a.C.SystemUpdateKeyspace(Ctx(t), bad)
		expectIRE(t, "SimpleStrategy without replication_factor", err, "replication_factor")
		_, err = a.C.SystemUpdateKeyspace(Ctx(t), ksDef("CreateKeyspace", standardCF("Other")))
		expectIRE(t, "keyspace update with families", err, "")

		_, err = a.C.SystemDropKeyspace(Ctx(t), "CreateKeyspace")
		expectOK(t, "system_drop_keyspace", err)
		_, err = a.C.DescribeKeyspace(Ctx(t), "CreateKeyspace")
		var nf *cassandra.NotFoundException
		if !errors.As(err, &nf) {
			t.Errorf("describe_keyspace after drop: err = %v, want NotFoundException", err)
		}
		_, err = a.C.SystemDropKeyspace(Ctx(t), "CreateKeyspace")
		expectIRE(t, "dropping a missing keyspace", err, "")
	})
	t.Run("Invalid", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		_, err := a.C.SystemAddKeyspace(Ctx(t), ksDef("in-valid"))
		expectIRE(t, "invalid keyspace name", err, "")
		bad := ksDef("ValidKs")
		bad.StrategyClass = "InvalidStrategyClass"
		_, err = a.C.SystemAddKeyspace(Ctx(t), bad)
		expectIRE(t, "unknown strategy", err, "Unable to find replication strategy")
		noRF := ksDef("ValidKs")
		noRF.StrategyOptions = map[string]string{}
		_, err = a.C.SystemAddKeyspace(Ctx(t), noRF)
		expectIRE(t, "SimpleStrategy without replication_factor", err, "")
		_, err = a.C.SystemAddKeyspace(Ctx(t), ksDef("ValidKs", standardCF("in-valid")))
		expectIRE(t, "invalid family name in a new keyspace", err, "")
		for _, sys := range []string{"system", "system_schema"} {
			_, err = a.C.SystemDropKeyspace(Ctx(t), sys)
			expectIRE(t, "dropping "+sys, err, "")
		}
		_, err = a.C.DescribeKeyspace(Ctx(t), "ValidKs")
		var nf *cassandra.NotFoundException
		if !errors.As(err, &nf) {
			t.Errorf("a refused keyspace exists: err = %v", err)
		}
	})
	t.Run("RecreateIsEmpty", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		for round := 0; round < 2; round++ {
			a.createKeyspace("Recreate", standardCF("recreate_cf"))
			got := a.slice("key0", parent("recreate_cf"), everything())
			if len(got) != 0 {
				t.Errorf("round %d: a recreated family holds %v", round, names(got))
			}
			a.insert("key0", parent("recreate_cf"), col(b("colA"), b("colA-value"), 0))
			_, err := a.C.SystemDropColumnFamily(Ctx(t), "recreate_cf")
			expectOK(t, "system_drop_column_family", err)
			a.addCF(standardCF("recreate_cf"))
			if got := a.slice("key0", parent("recreate_cf"), everything()); len(got) != 0 {
				t.Errorf("round %d: a family dropped and added again holds %v", round, names(got))
			}
			_, err = a.C.SystemDropKeyspace(Ctx(t), "Recreate")
			expectOK(t, "system_drop_keyspace", err)
		}
	})
}

// runColumnFamilyTests covers system_add/update/drop_column_family and
// the options describe_keyspace reports back.
func runColumnFamilyTests(t *testing.T, target Target) {
	t.Run("AddUpdateDrop", func(t *testing.T) {
		for _, super := range []bool{false, true} {
			t.Run(familyKind(super), func(t *testing.T) {
				a := newAPIEnv(t, target, Options{})
				a.createKeyspace("Keyspace1", standardCF("Standard1"))
				cf := standardCF("NewCF", columnDef(b("ValidationColumn"), "BytesType"))
				if super {
					cf = superCF("NewCF", subcomparator("LongType"), columnDef(i64(42), "BytesType"))
				}
				a.addCF(cf)
				err := func() error { _, err := a.C.SystemAddColumnFamily(Ctx(t), cf); return err }()
				expectIRE(t, "adding an existing family", err, "")

				got := a.describeCF("Keyspace1", "NewCF")
				if hasID := got.ID != nil; hasID == a.Diverges("cf-id") {
					t.Errorf("describe_keyspace: family id %v", got.ID)
				}
				// Cassandra 3.11 accepts a comparator change and keeps the
				// old comparator; thriftd refuses it.
				comparatorChangeRefused := func(what string, err error) {
					t.Helper()
					if super {
						// Cassandra 3.11 crashes on these.
						a.expectRefused(what, err, "")
						return
					}
					if !a.Diverges("comparator-change") {
						expectIRE(t, what, err, "")
						return
					}
					expectOK(t, what, err)
					if now := a.describeCF("Keyspace1", "NewCF"); now.ComparatorType != got.ComparatorType || deref(now.SubcomparatorType) != deref(got.SubcomparatorType) {
						t.Errorf("%s: Cassandra changed the comparators to %s / %s", what, now.ComparatorType, deref(now.SubcomparatorType))
					}
				}
				upd := standardCF("NewCF", comparator("LongType"))
				if super {
					upd = superCF("NewCF", comparator("LongType"), subcomparator("LongType"))
				}
				upd.Keyspace, upd.ID = "Keyspace1", got.ID
				_, err = a.C.SystemUpdateColumnFamily(Ctx(t), upd)
				comparatorChangeRefused("changing the comparator", err)
				if super {
					sub := superCF("NewCF", subcomparator("UTF8Type"))
					sub.Keyspace, sub.ID = "Keyspace1", got.ID
					_, err = a.C.SystemUpdateColumnFamily(Ctx(t), sub)
					comparatorChangeRefused("changing the subcomparator", err)
				}
				kind := standardCF("NewCF")
				if !super {
					kind = superCF("NewCF")
				}
				kind.Keyspace, kind.ID = "Keyspace1", got.ID
				_, err = a.C.SystemUpdateColumnFamily(Ctx(t), kind)
				if super && a.Diverges("comparator-change") {
					// Cassandra 3.11 accepts Super -> Standard and keeps Super.
					expectOK(t, "changing the column type", err)
				} else {
					a.expectRefused("changing the column type", err, "")
				}

				got.GcGraceSeconds = ptrTo(int32(1))
				got.Comment = ptrTo("updated")
				_, err = a.C.SystemUpdateColumnFamily(Ctx(t), got)
				expectOK(t, "system_update_column_family", err)
				after := a.describeCF("Keyspace1", "NewCF")
				if deref(after.GcGraceSeconds) != 1 || deref(after.Comment) != "updated" {
					t.Errorf("after update: gc_grace_seconds %v comment %v", after.GcGraceSeconds, after.Comment)
				}
				if after.ColumnType != map[bool]string{false: "Standard", true: "Super"}[super] {
					t.Errorf("column_type = %q", after.ColumnType)
				}

				_, err = a.C.SystemDropColumnFamily(Ctx(t), "NewCF")
				expectOK(t, "system_drop_column_family", err)
				ks, err := a.C.DescribeKeyspace(Ctx(t), "Keyspace1")
				expectOK(t, "describe_keyspace", err)
				if len(ks.CfDefs) != 1 || ks.CfDefs[0].Name != "Standard1" {
					t.Errorf("families after drop: %v", ks.CfDefs)
				}
				_, err = a.C.GetSlice(Ctx(t), b("k"), parent("NewCF"), everything(), one)
				expectIRE(t, "reading a dropped family", err, "unconfigured table NewCF")
				_, err = a.C.SystemDropColumnFamily(Ctx(t), "NewCF")
				expectIRE(t, "dropping a missing family", err, "")
			})
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		_, err := a.C.SystemAddColumnFamily(Ctx(t), &cassandra.CfDef{Keyspace: "Keyspace1", Name: "X", ComparatorType: "BytesType"})
		expectIRE(t, "system_add_column_family without a keyspace set", err, "")
		a.createKeyspace("Keyspace1")
		cases := []struct {
			what    string
			cf      *cassandra.CfDef
			why     string
			crashes bool // on Cassandra 3.11
		}{
			{"invalid name", standardCF("in-valid"), "ColumnFamily name must not be empty", false},
			{"unknown comparator", standardCF("X", comparator("NoSuchType")), "Unable to find abstract-type class", false},
			{"counter comparator", standardCF("X", comparator("CounterColumnType")), "", true},
			{"bad column type", standardCF("X", func(cf *cassandra.CfDef) { cf.ColumnType = "Hyper" }), "Invalid column type Hyper", false},
			{"duplicate index names", standardCF("X", indexedColumn(b("foo"), "BytesType", "i"), indexedColumn(b("bar"), "BytesType", "i")), "Duplicate index name i", false},
			{"bloom filter chance", standardCF("X", func(cf *cassandra.CfDef) { cf.BloomFilterFpChance = ptrTo(0.0) }), "bloom_filter_fp_chance must be larger than", false},
			{"column name the comparator refuses", standardCF("X", comparator("LongType"), columnDef(b("abc"), "BytesType")), "is not valid for comparator", false},
			{"subcolumn name the subcomparator refuses", superCF("X", subcomparator("LongType"), columnDef(b("abc"), "BytesType")), "is not valid for comparator", false},
		}
		for _, c := range cases {
			c.cf.Keyspace = "Keyspace1"
			_, err := a.C.SystemAddColumnFamily(Ctx(t), c.cf)
			if c.crashes {
				a.expectRefused(c.what, err, c.why)
			} else {
				expectIRE(t, c.what, err, c.why)
			}
		}
		missing := standardCF("X")
		missing.Keyspace = "Missing"
		_, err = a.C.SystemAddColumnFamily(Ctx(t), missing)
		expectIRE(t, "family of a missing keyspace", err, "")
		ks, err := a.C.DescribeKeyspace(Ctx(t), "Keyspace1")
		expectOK(t, "describe_keyspace", err)
		if len(ks.CfDefs) != 0 {
			t.Errorf("refused families were created: %v", ks.CfDefs)
		}
	})
	t.Run("OptionsRoundTrip", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		a.createKeyspace("Keyspace1")
		caching := "ALL"
		std := standardCF("Options",
			comparator("UTF8Type"),
			keyValidation("UTF8Type"),
			defaultValidation("LongType"),
			columnDef(b("age"), "Int32Type"),
			indexedColumn(b("email"), "UTF8Type", "options_email"),
			defaultTTL(3600),
			func(cf *cassandra.CfDef) {
				cf.Caching = caching
				cf.CompactionStrategy = ptrTo("org.apache.cassandra.db.compaction.LeveledCompactionStrategy")
				cf.CompactionStrategyOptions = map[string]string{"sstable_size_in_mb": "160"}
				cf.BloomFilterFpChance = ptrTo(0.05)
				cf.Comment = ptrTo("all the options")
				cf.ReadRepairChance = ptrTo(0.25)
				cf.GcGraceSeconds = ptrTo(int32(86400))
				cf.KeyAlias = b("user_id")
				cf.ColumnAliases = [][]byte{b("attribute")}
				cf.ValueAlias = b("content")
			})
		a.addCF(std)
		got := a.describeCF("Keyspace1", "Options")
		checks := []struct {
			what      string
			got, want any
		}{
			{"comparator_type", got.ComparatorType, marshalPrefix + "UTF8Type"},
			{"key_validation_class", deref(got.KeyValidationClass), marshalPrefix + "UTF8Type"},
			{"default_validation_class", deref(got.DefaultValidationClass), marshalPrefix + "LongType"},
			{"default_time_to_live", deref(got.DefaultTimeToLive), int32(3600)},
			{"caching", got.Caching, caching},
			{"compaction_strategy", deref(got.CompactionStrategy), "org.apache.cassandra.db.compaction.LeveledCompactionStrategy"},
			{"compaction_strategy_options", got.CompactionStrategyOptions["sstable_size_in_mb"], "160"},
			{"bloom_filter_fp_chance", deref(got.BloomFilterFpChance), 0.05},
			{"comment", deref(got.Comment), "all the options"},
			{"read_repair_chance", deref(got.ReadRepairChance), 0.25},
			{"gc_grace_seconds", deref(got.GcGraceSeconds), int32(86400)},
			{"key_alias", string(got.KeyAlias), "user_id"},
			{"column_type", got.ColumnType, "Standard"},
		}
		if a.Diverges("aliases") {
			checks = append(checks, []struct {
				what      string
				got, want any
			}{
				{"column_aliases", fmt.Sprintf("%q", got.ColumnAliases), "[]"},
				{"value_alias", string(got.ValueAlias), ""},
			}...)
		} else {
			checks = append(checks, []struct {
				what      string
				got, want any
			}{
				{"column_aliases", fmt.Sprintf("%q", got.ColumnAliases), fmt.Sprintf("%q", [][]byte{b("attribute")})},
				{"value_alias", string(got.ValueAlias), "content"},
			}...)
		}
		for _, c := range checks {
			if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
				t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
			}
		}
		meta := map[string]*cassandra.ColumnDef{}
		for _, cd := range got.ColumnMetadata {
			meta[string(cd.Name)] = cd
		}
		if cd := meta["age"]; cd == nil || cd.ValidationClass != marshalPrefix+"Int32Type" || cd.IndexType != nil {
			t.Errorf("column_metadata age = %+v, want Int32Type without index", cd)
		}
		if cd := meta["email"]; cd == nil || cd.ValidationClass != marshalPrefix+"UTF8Type" || cd.IndexType == nil ||
			*cd.IndexType != cassandra.IndexType_KEYS || deref(cd.IndexName) != "options_email" {
			t.Errorf("column_metadata email = %+v, want UTF8Type with KEYS index options_email", cd)
		}

		sup := superCF("SuperOptions", comparator("LongType"), subcomparator("UTF8Type"), defaultValidation("UTF8Type"),
			func(cf *cassandra.CfDef) { cf.Comment = ptrTo("super") })
		a.addCF(sup)
		sgot := a.describeCF("Keyspace1", "SuperOptions")
		if sgot.ColumnType != "Super" || sgot.ComparatorType != marshalPrefix+"LongType" ||
			deref(sgot.SubcomparatorType) != marshalPrefix+"UTF8Type" || deref(sgot.DefaultValidationClass) != marshalPrefix+"UTF8Type" ||
			deref(sgot.Comment) != "super" {
			t.Errorf("super family described as %s %s/%s validation %s comment %q", sgot.ColumnType, sgot.ComparatorType,
				deref(sgot.SubcomparatorType), deref(sgot.DefaultValidationClass), deref(sgot.Comment))
		}
		plain := a.describeCF("Keyspace1", "Options")
		if strings.Contains(plain.ComparatorType, "(") {
			t.Errorf("comparator_type %q", plain.ComparatorType)
		}
	})
	t.Run("ShortCompactionClass", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		a.createKeyspace("Keyspace1")
		a.addCF(standardCF("Short", func(cf *cassandra.CfDef) { cf.CompactionStrategy = ptrTo("LeveledCompactionStrategy") }))
		got := a.describeCF("Keyspace1", "Short")
		if deref(got.CompactionStrategy) != "org.apache.cassandra.db.compaction.LeveledCompactionStrategy" {
			t.Errorf("compaction_strategy = %q, want the fully qualified class name", deref(got.CompactionStrategy))
		}
	})
	t.Run("ColumnValidators", func(t *testing.T) {
		a := newAPIEnv(t, target, Options{})
		a.createKeyspace("Keyspace1",
			standardCF("Validated", columnDef(b("col"), "LongType")),
			superCF("SuperValidated", columnDef(b("col"), "LongType")),
			standardCF("DefaultValidated", columnDef(b("col"), "LongType"), defaultValidation("UTF8Type")))
		good, bad := col(b("col"), i64(42), 0), col(b("col"), b("not 64 bit"), 0)
		for _, p := range []*cassandra.ColumnParent{parent("Validated"), superParent("SuperValidated", b("sc1"))} {
			a.insert("key0", p, good)
			expectIRE(t, "a value failing its column validator in "+p.ColumnFamily, a.C.Insert(Ctx(t), b("key1"), p, bad, one), "")
		}
		p := parent("DefaultValidated")
		a.insert("key0", p, good)
		expectIRE(t, "a value failing the column validator", a.C.Insert(Ctx(t), b("key1"), p, bad, one), "")
		expectIRE(t, "a value failing the default validator", a.C.Insert(Ctx(t), b("key1"), p, col(b("fcol"), []byte{0xff, 0xfe}, 0), one), "")
		a.insert("key0", p, col(b("fcol"), b("a string"), 0))
	})
}

func familyKind(super bool) string {
	if super {
		return "Super"
	}
	return "Standard"
}

func ptrTo[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
