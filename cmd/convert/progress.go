package main

import (
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/thriftbridge/thriftbridge/migrate"
)

// progressBars shows a conversion's progress on w: for each family a bar
// with cells/s and ETA when the family's cell count is known (from
// --plan), a spinner otherwise.
type progressBars struct{ w io.Writer }

var _ migrate.Progress = progressBars{}

// Family implements migrate.Progress.
func (p progressBars) Family(family string, total int64) migrate.FamilyProgress {
	max := int64(-1)
	if total > 0 {
		max = total
	}
	w := p.w
	return familyBar{progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(family),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("cells"),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetPredictTime(total > 0),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionOnCompletion(func() { _, _ = io.WriteString(w, "\n") }),
	)}
}

// familyBar is the bar of one family.
type familyBar struct{ bar *progressbar.ProgressBar }

// Add implements migrate.FamilyProgress.
func (f familyBar) Add(n int) {
	if n > 0 {
		_ = f.bar.Add64(int64(n))
	}
}

// Done implements migrate.FamilyProgress.
func (f familyBar) Done() { _ = f.bar.Finish() }
