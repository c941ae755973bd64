package migrate

import (
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress shows one family's progress: a bar with cells/s and ETA when
// the family's cell count is known, a spinner otherwise. A nil progress
// (no writer) does nothing.
type progress struct {
	bar *progressbar.ProgressBar
}

func newProgress(w io.Writer, family string, total int64) *progress {
	if w == nil {
		return &progress{}
	}
	max := int64(-1)
	if total > 0 {
		max = total
	}
	bar := progressbar.NewOptions64(max,
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
	)
	return &progress{bar: bar}
}

func (p *progress) add(n int) {
	if p.bar != nil && n > 0 {
		_ = p.bar.Add64(int64(n))
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
