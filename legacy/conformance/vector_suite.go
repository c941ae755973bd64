package conformance

import "testing"

// runVectorSuite replays the golden vectors observed on Cassandra 3.11.9
// (testdata/cassandra-3.11) end to end, through the generated client: comparator
// ordering, composite slice bounds, super column reads and deletions, and
// request validation. Each file runs on its own server, its cases in file
// order as subtests.
//
// Where thriftd deliberately differs from 3.11.9 the case says so and
// checks thriftd's behaviour instead: no 2038 TTL cap, a clean
// InvalidRequestException where 3.11.9 crashed, hung or accepted a
// poisonous name, get_count inside a super column answering
// min(count, subcolumns) where 3.11.9 timed out, and no CQL3 tables (those
// cases are skipped loudly).
func runVectorSuite(t *testing.T, target Target) {
	dir, err := VectorsDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("Ordering", func(t *testing.T) { runOrderingVectors(t, target, dir) })
	t.Run("CompositeSlices", func(t *testing.T) { runCompositeVectors(t, target, dir) })
	t.Run("SuperSlices", func(t *testing.T) { runSuperVectors(t, target, dir) })
	t.Run("Validation", func(t *testing.T) { runValidationVectors(t, target, dir) })
}
