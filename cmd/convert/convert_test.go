package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/migrate"
)

// convert runs one command line, returning its stdout.
func convert(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	if err != nil {
		t.Logf("convert %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), err
}

// TestFixtureRoundTrip exports every fixture model as sstable2json dumps,
// plans, converts (with a checkpoint) and verifies it through the command
// line, then verifies a damaged script.
func TestFixtureRoundTrip(t *testing.T) {
	for _, name := range fixtures.Names() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := convert(t, "fixtures", "--name", name, "--out", dir); err != nil {
				t.Fatal(err)
			}
			from := []string{"--from", "json:" + filepath.Join(dir, "data"), "--schema", filepath.Join(dir, "schema.json")}
			planReport := filepath.Join(dir, "plan.json")
			out, err := convert(t, append([]string{"plan", "--report", planReport}, from...)...)
			if err != nil {
				t.Fatal(err)
			}
			var plan migrate.PlanReport
			readJSON(t, planReport, &plan)
			m, err := fixtures.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Families) != len(m.Keyspace.Families) || !strings.Contains(out, "CREATE TABLE IF NOT EXISTS") {
				t.Fatalf("plan lists %d families, the model has %d:\n%s", len(plan.Families), len(m.Keyspace.Families), out)
			}

			script := filepath.Join(dir, "out.cql")
			report := filepath.Join(dir, "report.json")
			args := append([]string{"data", "--to", "file:" + script, "--quiet", "--checkpoint", filepath.Join(dir, "ck.json"),
				"--report", report, "--plan", planReport}, from...)
			if _, err := convert(t, args...); err != nil {
				t.Fatal(err)
			}
			var rep migrate.Report
			readJSON(t, report, &rep)
			var planned int64
			for _, f := range plan.Families {
				planned += f.Cells
			}
			if rep.Cells != planned || len(rep.Errors) != 0 {
				t.Errorf("data wrote %d cells, the plan counted %d; errors %v", rep.Cells, planned, rep.Errors)
			}
			// The checkpoint says everything is done: a second run writes
			// the same script.
			first, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := convert(t, args...); err != nil {
				t.Fatal(err)
			}
			if again, _ := os.ReadFile(script); !bytes.Equal(first, again) {
				t.Errorf("re-running a finished conversion changed the script")
			}

			verifyArgs := append([]string{"verify", "--to", "file:" + script}, from...)
			if out, err := convert(t, verifyArgs...); err != nil || !strings.Contains(out, "OK:") {
				t.Fatalf("verify: %v\n%s", err, out)
			}
			if rep.Cells == 0 {
				return
			}
			// Drop the last data statement: verify must fail.
			text := strings.TrimSuffix(string(first), "\n")
			if i := strings.Index(text, "\n-- thriftd's catalog"); i >= 0 {
				text = text[:i] // the catalog's rows come after the data
			}
			cut := strings.LastIndex(text, "\nINSERT ")
			if u := strings.LastIndex(text, "\nUPDATE "); u > cut {
				cut = u
			}
			if cut < 0 {
				t.Fatalf("no data statement in the script")
			}
			if err := os.WriteFile(script, []byte(text[:cut+1]), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err = convert(t, verifyArgs...)
			if !errors.Is(err, errDifferences) || !strings.Contains(out, "missing") {
				t.Errorf("verify of a damaged script: %v\n%s", err, out)
			}
		})
	}
}

func TestCommandLineErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"data", "--from", "json:" + dir, "--schema", filepath.Join(dir, "missing.json"), "--to", "file:x.cql"}, "missing.json"},
		{[]string{"plan", "--from", "badger:" + filepath.Join(dir, "nostore") + "/Blog"}, "nostore"},
		{[]string{"data", "--from", "thrift://127.0.0.1:1/Blog"}, "--to is required"},
		{[]string{"plan"}, "--from is required"},
		{[]string{"plan", "--from", "ftp://x"}, "unknown source"},
		{[]string{"plan", "--from", "json:x", "--shape", "Users=wide"}, "unknown shape"},
		{[]string{"data", "--from", "json:x", "--schema", "s", "--to", "mysql://x"}, "expected cql://host:port/keyspace or file:OUT.cql"},
		{[]string{"frobnicate"}, "unknown command"},
	}
	for _, tt := range tests {
		_, err := convert(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("convert %s: error %v, want it to mention %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
