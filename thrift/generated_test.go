package thrift

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates the Go code from cassandra.thrift
// with the thrift compiler and compares it with the committed code, so the
// IDL and the code can never drift apart.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	compiler, err := exec.LookPath("thrift")
	if err != nil {
		t.Skip("SKIPPED: the thrift compiler is not installed (Debian package thrift-compiler); cannot check thrift/gen-go against cassandra.thrift")
	}
	out := t.TempDir()
	cmd := exec.Command(compiler, "-out", out,
		"--gen", "go:package_prefix=github.com/thriftbridge/thriftbridge/thrift/gen-go/,skip_remote", "cassandra.thrift")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("thrift compiler: %v\n%s", err, msg)
	}
	committed, err := filepath.Glob("gen-go/cassandra/*.go")
	if err != nil || len(committed) == 0 {
		t.Fatalf("no committed generated code: %v", err)
	}
	fresh, err := filepath.Glob(filepath.Join(out, "cassandra", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh) != len(committed) {
		t.Fatalf("the compiler generates %d files, %d are committed; run make thrift", len(fresh), len(committed))
	}
	for _, path := range committed {
		want, err := os.ReadFile(filepath.Join(out, "cassandra", filepath.Base(path)))
		if err != nil {
			t.Fatalf("%s is committed but not generated: %v", path, err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what cassandra.thrift generates; run make thrift", path)
		}
	}
}
