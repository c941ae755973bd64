package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/internal/testcluster"
)

// TestFixturesIntoCluster converts every fixture model, in every shape it
// has an expected script for, into a fresh keyspace of each test server
// through the gocql sink (`convert data --to cql://`), then checks the
// tables cell by cell with `convert verify`: values, writetimes, and the
// remaining TTLs within 2 s.
//
// A model's data is dated: its clock stands at the model's Now, in 2023,
// and most of its TTL'd cells expired long ago by the real clock, while a
// cluster counts every TTL down from its own clock, the real one. So each
// model is first moved to the present, every write and deletion by the
// same whole number of seconds (which moves every expiry alike and keeps
// each remaining TTL), and converted and verified with the real clock, as
// a live migration runs.
func TestFixturesIntoCluster(t *testing.T) {
	for _, c := range testcluster.Require(t, "converting the fixtures into a real cluster") {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel() // the servers are independent
			session := testcluster.Session(t, c)
			for _, name := range fixtures.Names() {
				m := loadModel(t, name)
				moveToNow(m)
				dir := t.TempDir()
				if err := exportFixture(m, dir, nil); err != nil {
					t.Fatal(err)
				}
				for _, shape := range m.ExpectedShapes() {
					t.Run(name+"/"+shape, func(t *testing.T) {
						keyspace := testcluster.Keyspace("tb_fx_" + name + "_" + shape)
						testcluster.DropWhenDone(t, session, keyspace)
						from := append(dumpSource(dir), shapeFlags(t, m, shape)...)
						if _, err := convert(t, append([]string{"data", "--to", c.URL(keyspace), "--quiet", "--no-metadata"}, from...)...); err != nil {
							t.Fatal(testcluster.Explain(err))
						}
						out, err := convert(t, append([]string{"verify", "--to", c.URL(keyspace), "--tolerance", "2s"}, from...)...)
						if err != nil || !strings.Contains(out, "OK:") {
							t.Fatalf("verify against %s: %s\n%s", c.Name, testcluster.Explain(err), out)
						}
						t.Logf("%s", strings.TrimSpace(out))
					})
				}
			}
		})
	}
}

// loadModel loads a fixture model.
func loadModel(t *testing.T, name string) *fixtures.Model {
	t.Helper()
	m, err := fixtures.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// moveToNow moves m forward in time so that its clock (m.Now) reads the
// present second: every write timestamp and row deletion moves by the
// same whole number of seconds, and with them every expiry (a fixture
// cell expires TTL seconds after its timestamp), so that what is live,
// what has expired and each remaining TTL stay as they were at m.Now.
func moveToNow(m *fixtures.Model) {
	shift := time.Now().Unix() - m.Now.Unix()
	micros := shift * 1_000_000
	for _, rows := range m.Rows {
		for i := range rows {
			if rows[i].DeletedAt != 0 {
				rows[i].DeletedAt += micros
			}
			for j := range rows[i].Cells {
				if rows[i].Cells[j].Timestamp != 0 {
					rows[i].Cells[j].Timestamp += micros
				}
			}
		}
	}
	m.Now = m.Now.Add(time.Duration(shift) * time.Second)
}

// dumpSource is the json: source of a model exported into dir.
func dumpSource(dir string) []string {
	return []string{"--from", "json:" + filepath.Join(dir, "data"), "--schema", filepath.Join(dir, "schema.json")}
}

// shapeFlags are the --shape flags of the expected script of shape.
func shapeFlags(t *testing.T, m *fixtures.Model, shape string) []string {
	t.Helper()
	forced, err := m.ForcedShapes(context.Background(), shape)
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, family := range m.FamilyNames() {
		if s, ok := forced[family]; ok {
			flags = append(flags, "--shape", family+"="+string(s))
		}
	}
	return flags
}
