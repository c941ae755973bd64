package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/migrate"
)

// TestProgressBars converts a model with the cell counts of its plan and
// checks that every family gets a bar and that the bars reach 100%.
func TestProgressBars(t *testing.T) {
	ctx := context.Background()
	m, err := fixtures.Load("blog")
	if err != nil {
		t.Fatal(err)
	}
	opts, err := m.ExpectedOptions(ctx, fixtures.AutoShape)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := migrate.Plan(ctx, m.Source(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var shown bytes.Buffer
	opts.Progress, opts.Totals = progressBars{w: &shown}, plan.Totals()
	sink, err := migrate.CreateFileSink(filepath.Join(t.TempDir(), "out.cql"), opts.Now)
	if err != nil {
		t.Fatal(err)
	}
	_, err = migrate.Convert(ctx, m.Source(), sink, opts)
	if cerr := sink.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range m.FamilyNames() {
		if !strings.Contains(shown.String(), family) {
			t.Errorf("no progress shown for %s:\n%s", family, shown.String())
		}
	}
	if !strings.Contains(shown.String(), "100%") {
		t.Errorf("the bars of families with a known total do not reach 100%%:\n%s", shown.String())
	}
}
