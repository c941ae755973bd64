package legacy

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// deadlineContext is a call's context with its request timeout, as
// context.WithDeadline gives it, without what WithDeadline makes on every
// call: a context, a runtime timer and a registration with the parent.
// Err compares the clock with the deadline, which is all the embedded
// store asks of a context (it polls Err between steps). Done, which a
// cluster driver waits on, makes a channel that the call's callClock
// closes: the clock is its connection's, and serves its calls one after
// another with one timer and one hook on the connection's context.
type deadlineContext struct {
	context.Context // the parent
	deadline        time.Time
	clock           *callClock

	// made is set once done is made: a driver asks for Done several
	// times a call, and after the first it needs no lock.
	made atomic.Bool

	// Guarded by clock.mu (done is written once, before made is set):
	done   chan struct{} // made by Done
	closed bool          // done is closed
	err    error         // what Err says once done is closed or the context released
}

// callClock closes the Done channels of one connection's calls, which
// come one at a time: its timer is reset for each call that asks for
// Done, and one hook on the connection's context (the calls' parent)
// closes the current call's channel when that context ends.
type callClock struct {
	parent context.Context

	mu     sync.Mutex
	timer  *time.Timer      // made by the first call that asks for Done
	hooked bool             // the hook on parent is registered
	cur    *deadlineContext // the call whose channel timer and hook close
}

// newCallClock returns the clock of the calls whose parent context is
// parent.
func newCallClock(parent context.Context) *callClock { return &callClock{parent: parent} }

// withDeadline is context.WithDeadline(parent, d) for one call: release
// cancels it, as WithDeadline's cancel function does. The call has a
// clock of its own; a connection's calls share theirs (callClock.call).
func withDeadline(parent context.Context, d time.Time) (ctx *deadlineContext, release func()) {
	return newCallClock(parent).call(d)
}

// call is a context for one call with deadline d, whose parent is the
// clock's; a clock serves one call at a time, the next after the
// previous one's release.
func (k *callClock) call(d time.Time) (ctx *deadlineContext, release func()) {
	c := &deadlineContext{Context: k.parent, deadline: d, clock: k}
	return c, c.release
}

// Deadline implements context.Context: the earlier of the parent's and
// its own.
func (c *deadlineContext) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Done implements context.Context: a channel closed at the deadline, when
// the parent is done or when the context is released.
func (c *deadlineContext) Done() <-chan struct{} {
	if c.made.Load() {
		return c.done
	}
	k := c.clock
	k.mu.Lock()
	defer k.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		c.made.Store(true)
		if c.err == nil {
			c.err = c.errNow()
		}
		if c.err != nil {
			k.finish(c, c.err)
		} else {
			k.arm(c)
		}
	}
	return c.done
}

// Err implements context.Context: once Done was called, nil until its
// channel closes, then why; before, the parent's error, or
// context.DeadlineExceeded once the clock passed the deadline, or after
// release context.Canceled.
func (c *deadlineContext) Err() error {
	c.clock.mu.Lock()
	done, err := c.done, c.err
	c.clock.mu.Unlock()
	if err != nil || done != nil {
		return err
	}
	return c.errNow()
}

// errNow is the parent's error, or DeadlineExceeded past the deadline.
func (c *deadlineContext) errNow() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// release ends the context: its error stays the one it had, or becomes
// context.Canceled, and its Done channel, if made, is closed.
func (c *deadlineContext) release() {
	err := c.errNow()
	if err == nil {
		err = context.Canceled
	}
	k := c.clock
	k.mu.Lock()
	k.finish(c, err)
	k.mu.Unlock()
}

// arm makes the timer and the hook close c's channel: c becomes the
// current call. Called with k.mu held.
func (k *callClock) arm(c *deadlineContext) {
	k.cur = c
	if !k.hooked && k.parent.Done() != nil {
		context.AfterFunc(k.parent, k.parentDone)
		k.hooked = true
	}
	if k.timer == nil {
		k.timer = time.AfterFunc(time.Until(c.deadline), k.fire)
	} else {
		k.timer.Reset(time.Until(c.deadline))
	}
}

// fire closes the current call's channel if its deadline has passed. A
// firing meant for an earlier call, which ran as the timer was reset for
// this one, finds the deadline ahead and leaves it to the next firing.
func (k *callClock) fire() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c := k.cur; c != nil && !time.Now().Before(c.deadline) {
		k.finish(c, context.DeadlineExceeded)
	}
}

// parentDone closes the current call's channel when the parent ends.
func (k *callClock) parentDone() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c := k.cur; c != nil {
		k.finish(c, k.parent.Err())
	}
}

// finish gives c its error, if it has none yet, and closes its channel,
// if made; c stops being the current call. Called with k.mu held.
func (k *callClock) finish(c *deadlineContext, err error) {
	if c.err == nil {
		c.err = err
	}
	if c.done != nil && !c.closed {
		close(c.done)
		c.closed = true
	}
	if k.cur == c {
		k.cur = nil
		k.timer.Stop()
	}
}
