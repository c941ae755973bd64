package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/fixtures"
)

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// expectedAndScript returns the model's expected script of shape and the
// script at path.
func expectedAndScript(t *testing.T, m *fixtures.Model, shape, path string) (want, got []byte) {
	t.Helper()
	want, err := m.Expected(shape)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	return want, got
}

// sameAsGolden fails the test when the script at path is not the model's
// expected script of shape byte for byte.
func sameAsGolden(t *testing.T, m *fixtures.Model, shape, source, path string) {
	t.Helper()
	want, got := expectedAndScript(t, m, shape, path)
	if d := firstDifference(want, got); d != "" {
		t.Errorf("%s: the script converted from %s differs from expected/%s.cql:\n%s", m.Name, source, shape, d)
	}
}

// TestFixturesRoundTripOverRealSockets loads every fixture into thriftd
// running in-process on 127.0.0.1 (its clock at the model's LoadTime while
// loading, then at its Now) with `convert fixtures --load`, and converts
// it with `convert data --now` from the live server over Thrift, from the
// server's Badger directory once it stopped, and from sstable2json dumps
// (`convert fixtures --out`): each script must be the expected "auto"
// script byte for byte, so the three sources agree exactly.
func TestFixturesRoundTripOverRealSockets(t *testing.T) {
	for _, name := range fixtures.Names() {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			m, err := fixtures.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			store := filepath.Join(dir, "store")
			now := strconv.FormatInt(m.Now.Unix(), 10)

			srv, err := startFixtureServer(ctx, store, m.LoadTime(), quietLogger)
			if err != nil {
				t.Fatal(err)
			}
			stopped := false
			t.Cleanup(func() {
				if !stopped {
					if err := srv.stop(context.Background()); err != nil {
						t.Error(err)
					}
				}
			})
			out, err := convert(t, "fixtures", "--name", name, "--load", "thrift://"+srv.addr())
			if err != nil || !strings.Contains(out, "loaded "+name) {
				t.Fatalf("load: %v\n%s", err, out)
			}
			srv.clock.set(m.Now)

			fromThrift := "thrift://" + srv.addr() + "/" + m.Keyspace.Name
			script := filepath.Join(dir, "thrift.cql")
			if _, err := convert(t, "data", "--from", fromThrift, "--to", "file:"+script, "--now", now, "--quiet"); err != nil {
				t.Fatal(err)
			}
			sameAsGolden(t, m, fixtures.AutoShape, fromThrift, script)
			// verify reads the script back against the live server.
			if out, err := convert(t, "verify", "--from", fromThrift, "--to", "file:"+script, "--now", now); err != nil || !strings.Contains(out, "OK:") {
				t.Errorf("verify against the server: %v\n%s", err, out)
			}

			stopped = true
			if err := srv.stop(ctx); err != nil {
				t.Fatal(err)
			}
			fromBadger := "badger:" + filepath.Join(store, m.Keyspace.Name)
			script = filepath.Join(dir, "badger.cql")
			if _, err := convert(t, "data", "--from", fromBadger, "--to", "file:"+script, "--now", now, "--quiet"); err != nil {
				t.Fatal(err)
			}
			sameAsGolden(t, m, fixtures.AutoShape, fromBadger, script)

			dumps := filepath.Join(dir, "dumps")
			if _, err := convert(t, "fixtures", "--name", name, "--out", dumps); err != nil {
				t.Fatal(err)
			}
			fromJSON := "json:" + filepath.Join(dumps, "data")
			script = filepath.Join(dir, "json.cql")
			if _, err := convert(t, "data", "--from", fromJSON, "--schema", filepath.Join(dumps, "schema.json"),
				"--to", "file:"+script, "--now", now, "--quiet"); err != nil {
				t.Fatal(err)
			}
			sameAsGolden(t, m, fixtures.AutoShape, fromJSON, script)
		})
	}
}

// TestRealClockServerOverThrift follows the README's walk-through: a
// thriftd on today's clock loads every model, so the cells the model says
// had expired by its Now are still live on the server; `convert data
// --now <Now>` over Thrift must still write the expected script (the
// Thrift source estimates expiry from writetime + TTL, and expired cells
// neither get converted nor shape a table).
func TestRealClockServerOverThrift(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := startFixtureServer(ctx, t.TempDir(), time.Now(), quietLogger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	for _, name := range fixtures.Names() {
		m, err := fixtures.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := convert(t, "fixtures", "--name", name, "--load", "thrift://"+srv.addr()); err != nil {
			t.Fatal(err)
		}
		from := "thrift://" + srv.addr() + "/" + m.Keyspace.Name
		script := filepath.Join(t.TempDir(), name+".cql")
		if _, err := convert(t, "data", "--from", from, "--to", "file:"+script, "--now", strconv.FormatInt(m.Now.Unix(), 10), "--quiet"); err != nil {
			t.Fatal(err)
		}
		sameAsGolden(t, m, fixtures.AutoShape, from, script)
	}
}

// TestFixturesSelfCheck runs `convert fixtures` as a user does: every
// model, every source, every shape with an expected script.
func TestFixturesSelfCheck(t *testing.T) {
	out, err := convert(t, "fixtures")
	if err != nil {
		t.Fatalf("convert fixtures: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if want := 3 * len(fixtures.Names()); len(lines) != want {
		t.Fatalf("%d result lines, want %d (one per model and source):\n%s", len(lines), want, out)
	}
	for _, name := range fixtures.Names() {
		m, err := fixtures.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, source := range []fixtureSource{sourceThrift, sourceBadger, sourceJSON} {
			want := strings.Join(m.ExpectedShapes(), " ")
			found := false
			for _, l := range lines {
				f := strings.Fields(l)
				if len(f) >= 3 && f[0] == "OK" && f[1] == name && f[2] == string(source) && strings.Join(f[3:], " ") == want {
					found = true
				}
			}
			if !found {
				t.Errorf("no OK line for %s from %s with shapes %q:\n%s", name, source, want, out)
			}
		}
	}
}

// TestFixturesCheckReportsADifference gives the check an expected script
// with one statement changed: every source must fail on that line, with
// the expected and the converted line shown, and the check must end with
// errDifferences (exit status 1).
func TestFixturesCheckReportsADifference(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m, err := fixtures.Load("eventlog")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := m.Expected(fixtures.AutoShape)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(golden), "\n"), "\n")
	// The last data statement (thriftd's catalog rows come after it).
	at := len(lines) - 1
	for at > 0 && !strings.Contains(lines[at], "USING TTL ") {
		at--
	}
	last := lines[at]
	changed := strings.Replace(last, "USING TTL ", "USING TTL 1", 1)
	if changed == last {
		t.Fatalf("no statement carries a TTL: %s", last)
	}
	lines[at] = changed
	tampered := []byte(strings.Join(lines, "\n") + "\n")
	expected := func(m *fixtures.Model, shape string) ([]byte, error) {
		if shape == fixtures.AutoShape {
			return tampered, nil
		}
		return m.Expected(shape)
	}
	var out bytes.Buffer
	err = checkFixtures(ctx, []*fixtures.Model{m}, expected, &out, quietLogger)
	if !errors.Is(err, errDifferences) {
		t.Errorf("check of a changed script: %v, want errDifferences", err)
	}
	for _, source := range []fixtureSource{sourceThrift, sourceBadger, sourceJSON} {
		if !strings.Contains(out.String(), "FAIL eventlog     "+string(source)) {
			t.Errorf("no FAIL line for %s:\n%s", source, out.String())
		}
	}
	if n := strings.Count(out.String(), "    -"+changed+"\n"); n != 3 {
		t.Errorf("the changed line is shown %d times, want once per source:\n%s", n, out.String())
	}
	if n := strings.Count(out.String(), "    +"+last); n != 3 {
		t.Errorf("the converted line is shown %d times, want once per source:\n%s", n, out.String())
	}
}

func TestFixturesCommandLine(t *testing.T) {
	out, err := convert(t, "fixtures", "--list")
	if err != nil || strings.Fields(out)[0] != fixtures.Names()[0] || len(strings.Fields(out)) != len(fixtures.Names()) {
		t.Errorf("fixtures --list: %v\n%s", err, out)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"fixtures", "--out", t.TempDir()}, "need --name"},
		{[]string{"fixtures", "--name", "nope"}, "nope"},
		{[]string{"fixtures", "--name", "blog", "--load", "127.0.0.1:1"}, "expected thrift://host:port"},
		{[]string{"data", "--from", "json:x", "--schema", "s", "--to", "file:x.cql", "--now", "yesterday"}, "Unix seconds or an RFC 3339 time"},
	} {
		if _, err := convert(t, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("convert %s: error %v, want it to mention %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
}

func TestParseNow(t *testing.T) {
	want := time.Unix(1700000000, 0)
	for _, s := range []string{"1700000000", "2023-11-14T22:13:20Z", "2023-11-14T23:13:20+01:00"} {
		got, err := parseNow(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseNow(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := parseNow("2023-11-14"); err == nil {
		t.Error("parseNow accepted a date without a time")
	}
}

// TestNowPinsTheScript converts the same dumps at two instants: the
// header and the remaining TTLs follow --now.
func TestNowPinsTheScript(t *testing.T) {
	m, err := fixtures.Load("eventlog")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := convert(t, "fixtures", "--name", m.Name, "--out", dir); err != nil {
		t.Fatal(err)
	}
	convertAt := func(now string) []byte {
		script := filepath.Join(dir, now+".cql")
		if _, err := convert(t, "data", "--from", "json:"+filepath.Join(dir, "data"), "--schema", filepath.Join(dir, "schema.json"),
			"--to", "file:"+script, "--now", now, "--quiet"); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	at := convertAt(strconv.FormatInt(m.Now.Unix(), 10))
	later := convertAt(strconv.FormatInt(m.Now.Unix()+100, 10))
	if !bytes.HasPrefix(later, []byte(fmtHeader(m.Now.Unix()+100))) {
		t.Errorf("header of the later script: %q", strings.SplitN(string(later), "\n", 2)[0])
	}
	if bytes.Equal(at, later) || !bytes.Contains(later, []byte("USING TTL 6800 ")) || !bytes.Contains(at, []byte("USING TTL 6900 ")) {
		t.Errorf("remaining TTLs do not follow --now:\n%s\n%s", at, later)
	}
	if again := convertAt(strconv.FormatInt(m.Now.Unix(), 10)); !bytes.Equal(at, again) {
		t.Error("two runs at the same --now differ")
	}
}

func fmtHeader(unix int64) string {
	return "-- thriftbridge convert script; TTLs as of unix time " + strconv.FormatInt(unix, 10) + "\n"
}
