package golden

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFirstDifference(t *testing.T) {
	cases := []struct{ want, got, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\n", "a\nc\n", "@@ line 2 @@\n-b\n+c\n"},
		{"a\n", "a\nb\n", "@@ line 2 @@\n-\n+b\n"},
		{"a\nb", "a", "@@ line 2 @@\n-b\n"},
	}
	for _, c := range cases {
		if d := FirstDifference([]byte(c.want), []byte(c.got)); d != c.diff {
			t.Errorf("FirstDifference(%q, %q) = %q, want %q", c.want, c.got, d, c.diff)
		}
	}
}

// TestPathFromModuleRoot: paths start at the directory of go.mod, which
// names this module, whatever package the test runs in.
func TestPathFromModuleRoot(t *testing.T) {
	b, err := os.ReadFile(Path(t, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "module github.com/thriftbridge/thriftbridge\n"; len(b) < len(want) || string(b[:len(want)]) != want {
		t.Errorf("go.mod at the root begins %q", b[:min(len(b), 60)])
	}
	if _, err := os.Stat(Path(t, "internal", "golden", "golden.go")); err != nil {
		t.Error(err)
	}
	if got, want := filepath.Base(Path(t, "testdata", "cassandra-3.11")), "cassandra-3.11"; got != want {
		t.Errorf("Path base %q, want %q", got, want)
	}
}
