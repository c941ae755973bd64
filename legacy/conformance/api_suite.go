package conformance

import "testing"

// runAPISuite runs the per-method tests. Each test starts its own server
// (a fresh store) through target; the expected answers are those of a
// single Cassandra 2.1 node (and, where they are more precise, the golden
// vectors observed on 3.11.9).
func runAPISuite(t *testing.T, target Target) {
	groups := []struct {
		name string
		run  func(*testing.T, Target)
	}{
		{"Session", runSessionTests},
		{"Describe", runDescribeTests},
		{"Keyspace", runKeyspaceTests},
		{"ColumnFamily", runColumnFamilyTests},
		{"ReadWrite", runReadWriteTests},
		{"Super", runSuperTests},
		{"Batch", runBatchTests},
		{"TTL", runTTLTests},
		{"Counters", runCounterTests},
		{"Ranges", runRangeTests},
		{"Indexes", runIndexTests},
		{"CAS", runCASTests},
		{"MultiSlice", runMultiSliceTests},
		{"RangeTombstones", runRangeTombstoneTests},
		{"CQL", runCQLTests},
		{"Blog", runBlogTests},
		{"Dtest", runDtestTests},
		{"Random", runRandomTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.run(t, target) })
	}
}
