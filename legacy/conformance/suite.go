package conformance

import "testing"

// Run runs the whole suite against target: the per-method API tests and the
// golden vectors of Cassandra 3.11.9.
func Run(t *testing.T, target Target) {
	t.Run("API", func(t *testing.T) { runAPISuite(t, target) })
	t.Run("Vectors", func(t *testing.T) { runVectorSuite(t, target) })
}
