package legacy

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// waitDone reports whether ctx's Done closes within d.
func waitDone(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return true
	case <-time.After(d):
		return false
	}
}

// TestDeadlineContextIsWithDeadline holds deadlineContext to what
// context.WithDeadline does, with and without a call of Done.
func TestDeadlineContextIsWithDeadline(t *testing.T) {
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "v")

	t.Run("before the deadline", func(t *testing.T) {
		d := time.Now().Add(time.Hour)
		ctx, release := withDeadline(parent, d)
		defer release()
		if err := ctx.Err(); err != nil {
			t.Fatalf("Err = %v", err)
		}
		if got, ok := ctx.Deadline(); !ok || !got.Equal(d) {
			t.Fatalf("Deadline = %v, %v", got, ok)
		}
		if ctx.Value(key{}) != "v" {
			t.Fatal("the parent's value is lost")
		}
	})
	t.Run("past the deadline, Err alone", func(t *testing.T) {
		ctx, release := withDeadline(parent, time.Now().Add(20*time.Millisecond))
		defer release()
		time.Sleep(30 * time.Millisecond)
		if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err = %v", err)
		}
		if !waitDone(ctx, time.Second) {
			t.Fatal("Done, first called past the deadline, is not closed")
		}
		if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err after Done = %v", err)
		}
	})
	t.Run("Done before the deadline", func(t *testing.T) {
		ctx, release := withDeadline(parent, time.Now().Add(50*time.Millisecond))
		defer release()
		done := ctx.Done()
		if ctx.Err() != nil {
			t.Fatal("Err before the deadline")
		}
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Done did not close at the deadline")
		}
		if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err = %v", err)
		}
	})
	t.Run("the parent canceled", func(t *testing.T) {
		p, cancel := context.WithCancel(parent)
		ctx, release := withDeadline(p, time.Now().Add(time.Hour))
		defer release()
		cancel()
		if err := ctx.Err(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Err = %v", err)
		}
		if !waitDone(ctx, time.Second) {
			t.Fatal("Done is not closed after the parent's cancel")
		}
	})
	t.Run("the parent's earlier deadline", func(t *testing.T) {
		pd := time.Now().Add(time.Minute)
		p, cancel := context.WithDeadline(parent, pd)
		defer cancel()
		ctx, release := withDeadline(p, time.Now().Add(time.Hour))
		defer release()
		if got, _ := ctx.Deadline(); !got.Equal(pd) {
			t.Fatalf("Deadline = %v, want the parent's %v", got, pd)
		}
	})
	t.Run("released", func(t *testing.T) {
		ctx, release := withDeadline(parent, time.Now().Add(time.Hour))
		release()
		if err := ctx.Err(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Err after release = %v", err)
		}
		if !waitDone(ctx, time.Second) {
			t.Fatal("Done, first called after release, is not closed")
		}
		ctx2, release2 := withDeadline(parent, time.Now().Add(time.Hour))
		done := ctx2.Done()
		release2()
		if !waitDone(ctx2, time.Second) || done != ctx2.Done() {
			t.Fatal("Done is not closed by release")
		}
		ctx3, release3 := withDeadline(parent, time.Now().Add(-time.Second))
		release3()
		if err := ctx3.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err of a context released past its deadline = %v, want DeadlineExceeded", err)
		}
	})
	t.Run("concurrent use", func(t *testing.T) {
		ctx, release := withDeadline(parent, time.Now().Add(10*time.Millisecond))
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 200 {
					if i%2 == 0 {
						_ = ctx.Err()
					} else {
						_ = ctx.Done()
					}
				}
			}()
		}
		wg.Wait()
		release()
		if !waitDone(ctx, time.Second) || ctx.Err() == nil {
			t.Fatal("not done after release")
		}
	})
}

// TestCallClockServesCallsInTurn: the calls of one connection share a
// clock, one after another; each call's Done closes at its own deadline,
// at its release or when the connection's context ends, and a firing
// of the timer for an earlier call does not end a later one.
func TestCallClockServesCallsInTurn(t *testing.T) {
	conn, closeConn := context.WithCancel(context.Background())
	defer closeConn()
	clock := newCallClock(conn)

	// A call released before its deadline, then one that reaches it.
	first, release := clock.call(time.Now().Add(time.Hour))
	firstDone := first.Done()
	release()
	if !waitDone(first, time.Second) || !errors.Is(first.Err(), context.Canceled) {
		t.Fatalf("the first call: Err %v after release", first.Err())
	}
	second, release := clock.call(time.Now().Add(30 * time.Millisecond))
	if second.Err() != nil {
		t.Fatal("the second call starts done")
	}
	select {
	case <-second.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the second call's Done did not close at its deadline")
	}
	if !errors.Is(second.Err(), context.DeadlineExceeded) {
		t.Fatalf("the second call: Err %v at its deadline", second.Err())
	}
	release()
	if !errors.Is(second.Err(), context.DeadlineExceeded) {
		t.Fatalf("the second call: Err %v after release, want it to stay DeadlineExceeded", second.Err())
	}
	select {
	case <-firstDone:
	default:
		t.Fatal("the first call's channel reopened")
	}

	// A timer set for a short deadline, reset for a call with a long
	// one: its early firing leaves the later call running.
	short, release := clock.call(time.Now().Add(time.Millisecond))
	_ = short.Done()
	release()
	long, releaseLong := clock.call(time.Now().Add(time.Hour))
	longDone := long.Done()
	time.Sleep(20 * time.Millisecond)
	select {
	case <-longDone:
		t.Fatalf("a later call ended by an earlier call's timer: %v", long.Err())
	default:
	}

	// The connection's end ends the call in progress.
	closeConn()
	select {
	case <-longDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the call's Done did not close when its connection's context ended")
	}
	if !errors.Is(long.Err(), context.Canceled) {
		t.Fatalf("Err %v after the connection's end", long.Err())
	}
	releaseLong()
	after, release := clock.call(time.Now().Add(time.Hour))
	defer release()
	if !waitDone(after, time.Second) || !errors.Is(after.Err(), context.Canceled) {
		t.Fatal("a call after the connection's end is not done")
	}
}

// BenchmarkCallDeadline is the per-call cost of a request timeout on a
// call that polls Err, as the embedded store does, against
// context.WithTimeout.
func BenchmarkCallDeadline(b *testing.B) {
	ctx := context.Background()
	b.Run("withDeadline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, release := withDeadline(ctx, time.Now().Add(2*time.Second))
			_ = c.Err()
			release()
		}
	})
	b.Run("context.WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, cancel := context.WithTimeout(ctx, 2*time.Second)
			_ = c.Err()
			cancel()
		}
	})
}

// BenchmarkCallDeadlineDone is the per-call cost of a request timeout on
// a call whose driver waits on Done (the CQL backend), on a connection's
// clock, against context.WithTimeout; the parent is a connection's
// cancelable context.
func BenchmarkCallDeadlineDone(b *testing.B) {
	conn, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("callClock", func(b *testing.B) {
		b.ReportAllocs()
		clock := newCallClock(conn)
		for b.Loop() {
			c, release := clock.call(time.Now().Add(2 * time.Second))
			_ = c.Done()
			release()
		}
	})
	b.Run("context.WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, cancel := context.WithTimeout(conn, 2*time.Second)
			_ = c.Done()
			cancel()
		}
	})
}
