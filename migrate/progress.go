package migrate

// Progress follows a conversion family by family, for a display: Convert
// calls Family when it starts copying a family and reports the cells it
// reads to what Family returns. Every call comes from the goroutine
// running Convert.
type Progress interface {
	// Family announces the copy of family; total is its live cell count
	// from Options.Totals, 0 when unknown.
	Family(family string, total int64) FamilyProgress
}

// FamilyProgress follows the copy of one family.
type FamilyProgress interface {
	// Add reports n more cells read from the source.
	Add(n int)
	// Done says the copy ended, complete or not; no call follows.
	Done()
}

// startProgress returns the FamilyProgress of family under p; a nil p
// follows nothing.
func startProgress(p Progress, family string, total int64) FamilyProgress {
	if p == nil {
		return noProgress{}
	}
	return p.Family(family, total)
}

type noProgress struct{}

func (noProgress) Add(int) {}
func (noProgress) Done()   {}
