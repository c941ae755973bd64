package conformance

import "testing"

// runAPISuite runs the per-method tests.
func runAPISuite(t *testing.T, target Target) {
	t.Run("DescribeVersion", func(t *testing.T) {
		e := NewEnv(t, target, Options{})
		v, err := e.C.DescribeVersion(Ctx(t))
		if err != nil || v == "" {
			t.Fatalf("describe_version = %q, %v", v, err)
		}
	})
}
