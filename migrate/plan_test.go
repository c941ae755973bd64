package migrate

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
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

// recordedProgress records what Convert reports, family by family.
type recordedProgress struct {
	order  []string
	totals map[string]int64
	cells  map[string]int
	done   map[string]bool
}

func (r *recordedProgress) Family(family string, total int64) FamilyProgress {
	r.order = append(r.order, family)
	r.totals[family] = total
	return &recordedFamily{r: r, family: family}
}

type recordedFamily struct {
	r      *recordedProgress
	family string
}

func (f *recordedFamily) Add(n int) {
	if f.r.done[f.family] {
		panic("Add after Done")
	}
	f.r.cells[f.family] += n
}

func (f *recordedFamily) Done() { f.r.done[f.family] = true }

// TestProgressReportsEveryFamily checks that Convert announces each
// family with the total the options know, reports every cell it reads
// and closes each family.
func TestProgressReportsEveryFamily(t *testing.T) {
	progress := &recordedProgress{totals: map[string]int64{}, cells: map[string]int{}, done: map[string]bool{}}
	opts := Options{Now: fixedClock, Progress: progress, Totals: map[string]int64{"Users": 5}}
	if _, err := convertToFile(t, blogSource(2), filepath.Join(t.TempDir(), "out.cql"), opts); err != nil {
		t.Fatal(err)
	}
	for _, family := range []string{"Users", "Comments", "Likes", "Hits"} {
		if !slices.Contains(progress.order, family) || !progress.done[family] {
			t.Errorf("%s: announced %v, done %v", family, slices.Contains(progress.order, family), progress.done[family])
		}
	}
	if progress.totals["Users"] != 5 || progress.totals["Comments"] != 0 {
		t.Errorf("totals given %v, want Users 5 and the others unknown", progress.totals)
	}
	// Every cell read counts, an expired one too.
	if want := map[string]int{"Users": 6, "Comments": 5, "Likes": 2, "Hits": 2}; !maps.Equal(progress.cells, want) {
		t.Errorf("cells reported %v, want %v", progress.cells, want)
	}
}
