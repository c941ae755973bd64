// Package golden is the one convention of this module's tests for test
// data and golden files.
//
// Test data is named by its path from the module root, the directory of
// go.mod: Path(t, "supercol", "testdata", "plan", "x.cql") or
// Path(t, "testdata", "cassandra-3.11"), whichever package the test runs
// in. Data of one package lives in that package's testdata/ directory;
// data shared by several (the vectors observed on Cassandra 3.11) in
// testdata/ at the root.
//
// A golden file holds the expected output of a test. Check compares an
// output with its golden file and reports the first line that differs
// (FirstDifference). Run the tests with -update (go test ./supercol/
// -update) to rewrite the golden files from the outputs instead, then
// review the change; a test whose golden files are not single files (the
// fixtures' expected scripts) asks Update and writes them itself.
package golden

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// update is -update, registered in test binaries only.
var update *bool

func init() {
	if testing.Testing() {
		update = flag.Bool("update", false, "rewrite the golden files from the tests' outputs instead of comparing with them")
	}
}

// Update reports whether the test run rewrites golden files (-update).
func Update() bool { return update != nil && *update }

var root = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("golden: no go.mod at or above the working directory, so the module root and its test data cannot be located")
		}
		dir = parent
	}
})

// Root returns the module root: the nearest directory at or above the
// working directory (a package's own, under go test) that holds go.mod.
func Root() (string, error) { return root() }

// Path returns the path of elem, joined, from the module root. It fails
// tb if the root cannot be found.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	dir, err := Root()
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(append([]string{dir}, elem...)...)
}

// Check compares got with the golden file at path (from the module root,
// as Path names it) and fails tb on the first differing line. Under
// -update it writes got to the file instead, creating its directory.
func Check(tb testing.TB, path string, got []byte) {
	tb.Helper()
	file := Path(tb, path)
	if Update() {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		tb.Fatalf("%v (go test -update writes it)", err)
	}
	if d := FirstDifference(want, got); d != "" {
		tb.Errorf("%s differs from the test's output (go test -update rewrites it; review the change):\n%s", path, d)
	}
}

// FirstDifference describes the first line where got differs from want,
// unified-diff style; "" when they are equal.
func FirstDifference(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "@@ line %d @@\n", i+1)
	if i < len(w) {
		fmt.Fprintf(&sb, "-%s\n", w[i])
	}
	if i < len(g) {
		fmt.Fprintf(&sb, "+%s\n", g[i])
	}
	return sb.String()
}
