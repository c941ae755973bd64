package conformance

import "testing"

// runVectorSuite replays the golden vectors.
func runVectorSuite(t *testing.T, target Target) {
	if _, ok := VectorsDir(); !ok {
		t.Skip("!!! SKIPPED: ../shared/vectors not found; set THRIFTBRIDGE_VECTORS !!!")
	}
}
