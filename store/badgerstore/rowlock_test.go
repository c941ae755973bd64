package badgerstore

import "testing"

// TestWithSlotsHoldsTheLocksAndRaisesTheVersions: withSlots runs its
// function with the slots' stripes locked and their versions odd, and
// leaves them unlocked and raised by two; one slot costs no allocation (a
// deferred write of one row takes it on every call).
func TestWithSlotsHoldsTheLocksAndRaisesTheVersions(t *testing.T) {
	l := newRowLocks()
	// One slot, and three of which two share a stripe.
	for _, slots := range [][]rowSlot{{7}, {7, 7 + rowLockStripes, 9}} {
		before := make([]uint64, len(slots))
		for i, s := range slots {
			before[i] = l.version(s)
		}
		ran := false
		l.withSlots(slots, func() {
			ran = true
			for _, s := range slots {
				if l.version(s)%2 == 0 {
					t.Errorf("slots %v: slot %d's version is even while its lock is held", slots, s)
				}
				if l.stripes[stripeOf(s)].TryLock() {
					t.Errorf("slots %v: slot %d's stripe is not locked", slots, s)
				}
			}
		})
		if !ran {
			t.Fatalf("slots %v: the function did not run", slots)
		}
		for i, s := range slots {
			if got, want := l.version(s), before[i]+2; got != want {
				t.Errorf("slots %v: slot %d's version %d after, want %d", slots, s, got, want)
			}
			if !l.stripes[stripeOf(s)].TryLock() {
				t.Errorf("slots %v: slot %d's stripe still locked", slots, s)
			} else {
				l.stripes[stripeOf(s)].Unlock()
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { l.withSlots([]rowSlot{3}, func() {}) }); n != 0 {
		t.Errorf("withSlots of one slot allocated %.1f times, want none", n)
	}
}
