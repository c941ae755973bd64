package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/fixtures"
)

// TestFixturesIntoCluster converts every fixture into a real Cassandra or
// ScyllaDB through the gocql sink and verifies the tables cell by cell:
// values, writetimes and remaining TTLs within 2 s.
func TestFixturesIntoCluster(t *testing.T) {
	hosts := os.Getenv("CASSANDRA_HOSTS")
	if hosts == "" {
		t.Skip("!!! SKIPPED: converting fixtures into a real cluster needs CASSANDRA_HOSTS (host:9042[,host:9042]) !!!")
	}
	stamp := time.Now().UnixNano()
	for _, name := range fixtures.Names() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := convert(t, "fixtures", "--name", name, "--out", dir); err != nil {
				t.Fatal(err)
			}
			from := []string{"--from", "json:" + filepath.Join(dir, "data"), "--schema", filepath.Join(dir, "schema.json"),
				"--now", fmt.Sprint(fixtureNow(t, name))}
			target := fmt.Sprintf("cql://%s/thriftbridge_%s_%d", hosts, name, stamp)
			if _, err := convert(t, append([]string{"data", "--to", target, "--quiet"}, from...)...); err != nil {
				t.Fatal(err)
			}
			out, err := convert(t, append([]string{"verify", "--to", target, "--tolerance", "2s"}, from...)...)
			if err != nil || !strings.Contains(out, "OK:") {
				t.Fatalf("verify against the cluster: %v\n%s", err, out)
			}
		})
	}
}

// fixtureNow is a model's reference time in Unix seconds.
func fixtureNow(t *testing.T, name string) int64 {
	t.Helper()
	m, err := fixtures.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return m.Now.Unix()
}
