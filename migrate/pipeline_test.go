package migrate

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/internal/golden"
)

// testNow is the fixed clock of the pipeline tests.
var testNow = time.Unix(1_700_000_000, 0)

func fixedClock() time.Time { return testNow }

// timeUUID returns a version-1 UUID whose fields are derived from n.
func timeUUID(n byte) []byte {
	return []byte{0xd2, 0x17, 0x7d, n, 0xea, 0xa2, 0x11, 0xe5, 0xa8, 0x37, 0x08, 0x00, 0x20, 0x0c, 0x9a, n}
}

// composite builds a CompositeType name from its components.
func composite(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
		b = append(b, p...)
		b = append(b, 0)
	}
	return b
}

// blogSource is a keyspace with standard, super, composite and counter
// families; every written cell has its own writetime (µs since the epoch,
// 1_600_000_000_000_000 + n).
func blogSource(chunk int) *memSource {
	s := newMemSource(testKeyspace(), chunk)
	ts := func(n int64) int64 { return 1_600_000_000_000_000 + n }
	exp := testNow.Unix()
	s.add("Users", "alice",
		Cell{Name: []byte("email"), Value: []byte("alice@example.com"), Timestamp: ts(1)},
		Cell{Name: []byte("name"), Value: []byte("Alice O'Hara"), Timestamp: ts(2)},
		Cell{Name: []byte("session"), Value: []byte("s-1"), Timestamp: ts(3), TTL: 7200, ExpiresAt: exp + 2600})
	s.add("Users", "bob",
		Cell{Name: []byte("email"), Value: []byte("bob@example.com"), Timestamp: ts(4)},
		Cell{Name: []byte("old-session"), Value: []byte("s-0"), Timestamp: ts(5), TTL: 60, ExpiresAt: exp - 30})
	s.add("Users", "ghost") // a row without live cells
	s.add("Users", "carol",
		Cell{Name: []byte("bio"), Value: []byte("line one\nline two; with ? and 'quotes'"), Timestamp: ts(6), TTL: 86400, ExpiresAt: exp + 86000})
	s.add("Comments", "post-1",
		Cell{Super: timeUUID(1), Name: []byte("author"), Value: []byte("bob"), Timestamp: ts(10)},
		Cell{Super: timeUUID(1), Name: []byte("text"), Value: []byte("first!"), Timestamp: ts(11)},
		Cell{Super: timeUUID(2), Name: []byte("author"), Value: []byte("carol"), Timestamp: ts(12)},
		Cell{Super: timeUUID(2), Name: []byte("text"), Value: []byte("nice post"), Timestamp: ts(13), TTL: 3600, ExpiresAt: exp + 1800})
	s.add("Comments", "post-2",
		Cell{Super: timeUUID(3), Name: []byte("author"), Value: []byte("alice"), Timestamp: ts(14)})
	s.add("Likes", "alice",
		Cell{Name: composite(timeUUID(4), []byte("bob")), Value: []byte{}, Timestamp: ts(20)},
		Cell{Name: composite(timeUUID(5), []byte("carol")), Value: []byte{1, 2}, Timestamp: ts(21)})
	s.add("Hits", "page-1",
		Cell{Name: []byte("2024-01"), Counter: true, CounterValue: 42, Timestamp: ts(30)},
		Cell{Name: []byte("2024-02"), Counter: true, CounterValue: -7, Timestamp: ts(31)})
	return s
}

func convertToFile(t *testing.T, src Source, path string, opts Options) (*Report, error) {
	t.Helper()
	sink, err := CreateFileSink(path, opts.Now)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Convert(context.Background(), src, sink, opts)
	if cerr := sink.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return rep, err
}

func TestConvertToFile(t *testing.T) {
	for _, chunk := range []int{1, 2, 100} {
		path := filepath.Join(t.TempDir(), "blog.cql")
		rep, err := convertToFile(t, blogSource(chunk), path, Options{Now: fixedClock})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]FamilyStats{}
		for _, f := range rep.Families {
			got[f.Family] = f.FamilyStats
			if !f.Done || f.Table == "" || f.Shape == "" {
				t.Errorf("chunk %d: family report %+v", chunk, f)
			}
		}
		want := map[string]FamilyStats{
			"Users":    {Rows: 4, Cells: 5, Expired: 1, TTLCells: 2},
			"Comments": {Rows: 2, Cells: 5, TTLCells: 1},
			"Likes":    {Rows: 1, Cells: 2},
			"Hits":     {Rows: 1, Cells: 2, Counters: 2},
		}
		for fam, w := range want {
			if got[fam] != w {
				t.Errorf("chunk %d: %s stats %+v, want %+v", chunk, fam, got[fam], w)
			}
		}
		if rep.Cells != 14 || rep.Keyspace != "Blog" || rep.TTL != "remaining" {
			t.Errorf("report %+v", rep)
		}
		script, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Chunking changes nothing in the output.
		golden.Check(t, "migrate/testdata/blog.cql", script)
		for _, frag := range []string{"USING TTL 2600 AND TIMESTAMP 1600000000000003;", "'Alice O''Hara'", " + 42 WHERE ", " + -7 WHERE "} {
			if !bytes.Contains(script, []byte(frag)) {
				t.Errorf("script lacks %q", frag)
			}
		}
		if bytes.Contains(script, []byte("s-0")) {
			t.Errorf("expired cell written")
		}
	}
}

func TestConvertNamesUnconvertibleCell(t *testing.T) {
	tests := []struct {
		family string
		cell   Cell
		want   []string
	}{
		{"Users", Cell{Name: []byte("email"), Value: []byte{0xff, 0xfe}, Timestamp: 1}, []string{"Blog.Users", `"dave"`, `"email"`, "text"}},
		{"Comments", Cell{Name: []byte("author"), Value: []byte("x"), Timestamp: 1}, []string{"Blog.Comments", `"dave"`, "author"}},
		{"Likes", Cell{Name: []byte{0, 9, 1}, Value: []byte("x"), Timestamp: 1}, []string{"Blog.Likes", `"dave"`, "0x000901"}},
	}
	for _, tt := range tests {
		src := newMemSource(testKeyspace(), 10)
		src.add(tt.family, "dave", tt.cell)
		rep, err := convertToFile(t, src, filepath.Join(t.TempDir(), "out.cql"), Options{Now: fixedClock, Families: []string{tt.family}})
		if err == nil {
			t.Errorf("%s: converted %+v", tt.family, tt.cell)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not name %s", tt.family, err, w)
			}
		}
		if rep == nil || len(rep.Errors) != 1 {
			t.Errorf("%s: report %+v lacks the error", tt.family, rep)
		}
	}
}

// TestResumeAfterCancel interrupts a run after every possible number of
// rows and resumes it: the script must be byte-identical to one written in
// a single run, and the report must count every row once.
func TestResumeAfterCancel(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.cql")
	cleanRep, err := convertToFile(t, blogSource(2), clean, Options{Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	const totalRows = 8
	for stopAfter := 1; stopAfter < totalRows; stopAfter++ {
		for _, every := range []int{1, 3} {
			out := filepath.Join(dir, "resumed.cql")
			ck := filepath.Join(dir, "ck.json")
			os.Remove(out)
			os.Remove(ck)
			src := blogSource(2)
			ctx, cancel := context.WithCancel(context.Background())
			rows := 0
			src.onRow = func(string, []byte) {
				if rows++; rows == stopAfter {
					cancel()
				}
			}
			opts := Options{Now: fixedClock, CheckpointPath: ck, CheckpointRows: every, CheckpointInterval: time.Hour}
			sink, err := CreateFileSink(out, fixedClock)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Convert(ctx, src, sink, opts)
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("stop after %d: interrupted run returned %v", stopAfter, err)
			}
			// Close writes out whatever was buffered, past the checkpoint.
			if err := sink.Close(); err != nil {
				t.Fatal(err)
			}
			rep, err := convertToFile(t, blogSource(2), out, opts)
			if err != nil {
				t.Fatalf("stop after %d, checkpoint every %d: resume: %v", stopAfter, every, err)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("stop after %d, checkpoint every %d: resumed script differs:\n%s\nwant:\n%s", stopAfter, every, got, want)
			}
			if rep.Cells != cleanRep.Cells {
				t.Errorf("stop after %d: resumed report counts %d cells, want %d", stopAfter, rep.Cells, cleanRep.Cells)
			}
		}
	}
}

// TestResumeAfterCrashBeforeCheckpoint stops a run after the sink made its
// output durable but before the checkpoint recorded it, at every
// checkpoint in turn; the resumed script must be byte-identical.
func TestResumeAfterCrashBeforeCheckpoint(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.cql")
	if _, err := convertToFile(t, blogSource(1), clean, Options{Now: fixedClock}); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	errCrash := errors.New("crash")
	for crashAt := 1; ; crashAt++ {
		if crashAt > 50 {
			t.Fatal("the run never completes")
		}
		out := filepath.Join(dir, "resumed.cql")
		ck := filepath.Join(dir, "ck.json")
		os.Remove(out)
		os.Remove(ck)
		saves := 0
		opts := Options{Now: fixedClock, CheckpointPath: ck, CheckpointRows: 1, CheckpointInterval: time.Hour,
			beforeCheckpoint: func() error {
				if saves++; saves == crashAt {
					return errCrash
				}
				return nil
			}}
		_, err := convertToFile(t, blogSource(1), out, opts)
		if err == nil {
			break // crashAt is past the last checkpoint: every crash point was tried
		}
		if !errors.Is(err, errCrash) {
			t.Fatalf("crash at %d: %v", crashAt, err)
		}
		opts.beforeCheckpoint = nil
		if _, err := convertToFile(t, blogSource(1), out, opts); err != nil {
			t.Fatalf("crash at %d: resume: %v", crashAt, err)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("crash at checkpoint %d: resumed script differs:\n%s\nwant:\n%s", crashAt, got, want)
		}
		ckp, err := LoadCheckpoint(ck)
		if err != nil {
			t.Fatal(err)
		}
		for name, f := range ckp.Families {
			if !f.Done {
				t.Errorf("crash at %d: family %s not done in the checkpoint", crashAt, name)
			}
		}
	}
}

func TestCheckpointRefusesAnotherKeyspace(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck.json")
	c := &Checkpoint{Version: checkpointVersion, Keyspace: "Other", TargetKeyspace: "Other", Families: map[string]*FamilyCheckpoint{}}
	if err := c.Save(ck); err != nil {
		t.Fatal(err)
	}
	_, err := convertToFile(t, blogSource(2), filepath.Join(dir, "out.cql"), Options{Now: fixedClock, CheckpointPath: ck})
	if err == nil || !strings.Contains(err.Error(), "Other") {
		t.Errorf("resume with another keyspace's checkpoint: %v", err)
	}
}

// goneSink is a file sink whose target goes away after a number of writes.
type goneSink struct {
	*FileSink
	writesLeft int
}

var errTargetGone = errors.New("target went away")

func (s *goneSink) Write(ctx context.Context, stmts []Statement) error {
	if s.writesLeft == 0 {
		return errTargetGone
	}
	s.writesLeft--
	return s.FileSink.Write(ctx, stmts)
}

// TestTargetGoneStopsWithCheckpoint loses the target after every possible
// number of writes: the run stops with the target's error, its checkpoint
// holds what was acknowledged, and a resumed run ends with the same script
// as a run that never failed.
func TestTargetGoneStopsWithCheckpoint(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.cql")
	if _, err := convertToFile(t, blogSource(2), clean, Options{Now: fixedClock}); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	for writes := 0; ; writes++ {
		if writes > 100 {
			t.Fatal("the run never completes")
		}
		out := filepath.Join(dir, "resumed.cql")
		ck := filepath.Join(dir, "ck.json")
		os.Remove(out)
		os.Remove(ck)
		opts := Options{Now: fixedClock, CheckpointPath: ck, CheckpointRows: 1, CheckpointInterval: time.Hour}
		fs, err := CreateFileSink(out, fixedClock)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Convert(context.Background(), blogSource(2), &goneSink{FileSink: fs, writesLeft: writes}, opts)
		if cerr := fs.Close(); cerr != nil {
			t.Fatal(cerr)
		}
		if err == nil {
			if writes < 2 {
				t.Fatalf("the run completed after only %d writes: the test tried no failure point", writes)
			}
			t.Logf("tried %d failure points", writes)
			break // every write point before the end was tried
		}
		if !errors.Is(err, errTargetGone) {
			t.Fatalf("target gone after %d writes: run returned %v", writes, err)
		}
		if _, err := LoadCheckpoint(ck); err != nil && writes > 0 {
			t.Fatalf("target gone after %d writes: no usable checkpoint: %v", writes, err)
		}
		if _, err := convertToFile(t, blogSource(2), out, opts); err != nil {
			t.Fatalf("target gone after %d writes: resume: %v", writes, err)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("target gone after %d writes: resumed script differs:\n%s\nwant:\n%s", writes, got, want)
		}
	}
}
