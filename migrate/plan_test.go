package migrate

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlanCountsAndFlagsLargePartitions(t *testing.T) {
	ctx := context.Background()
	rep, err := Plan(ctx, blogSource(2), Options{Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*FamilyPlan{}
	for _, f := range rep.Families {
		got[f.Family] = f
	}
	users := got["Users"]
	if users == nil || users.Rows != 4 || users.Cells != 5 || users.TTLCells != 2 || users.Expired != 1 || users.Widest.Cells != 3 || !strings.Contains(users.Widest.Key, "alice") {
		t.Errorf("Users plan %+v", users)
	}
	if hits := got["Hits"]; hits == nil || hits.Counters != 2 || hits.LargeCount != 0 || hits.Suggestion != "" {
		t.Errorf("Hits plan %+v", hits)
	}
	if totals := rep.Totals(); totals["Comments"] != 5 {
		t.Errorf("totals %v", totals)
	}

	// One row over 100k cells is flagged, with a bucketing suggestion.
	wide, err := Plan(ctx, &synthSource{rows: 2, cells: LargePartitionCells + 1, chunk: 1000}, Options{Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	f := wide.Families[0]
	if f.LargeCount != 2 || len(f.Large) != 2 || f.Widest.Cells != LargePartitionCells+1 || !strings.Contains(f.Suggestion, "bucket") {
		t.Errorf("wide plan: %+v", f)
	}
}

func TestProgressBars(t *testing.T) {
	var progress bytes.Buffer
	opts := Options{Now: fixedClock, Progress: &progress, Totals: map[string]int64{"Users": 5}}
	if _, err := convertToFile(t, blogSource(2), filepath.Join(t.TempDir(), "out.cql"), opts); err != nil {
		t.Fatal(err)
	}
	for _, family := range []string{"Users", "Comments", "Likes", "Hits"} {
		if !strings.Contains(progress.String(), family) {
			t.Errorf("no progress shown for %s:\n%s", family, progress.String())
		}
	}
	if !strings.Contains(progress.String(), "100%") {
		t.Errorf("the bar of a family with a known total does not reach 100%%:\n%s", progress.String())
	}
}
