package legacy

import (
	"context"
	"sync"
	"time"
)

// deadlineContext is a call's context with its request timeout, as
// context.WithDeadline gives it, without the runtime timer that
// WithDeadline starts and stops on every call: Err compares the clock
// with the deadline, which is all the embedded store asks of a context
// (it polls Err between steps). Done, which a cluster driver waits on,
// makes the timer on its first call.
type deadlineContext struct {
	context.Context // the parent
	deadline        time.Time

	mu      sync.Mutex
	derived context.Context // made by Done
	cancel  context.CancelFunc
	err     error // set by release: what Err says from then on
}

// withDeadline is context.WithDeadline(parent, d) for one call: release
// cancels it, as WithDeadline's cancel function does.
func withDeadline(parent context.Context, d time.Time) (ctx *deadlineContext, release func()) {
	c := &deadlineContext{Context: parent, deadline: d}
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.derived == nil {
		c.derived, c.cancel = context.WithDeadline(c.Context, c.deadline)
		if c.err != nil {
			c.cancel()
		}
	}
	return c.derived.Done()
}

// Err implements context.Context: once Done was called, the error of the
// context it made; before, the parent's error, or
// context.DeadlineExceeded once the clock passed the deadline, or after
// release context.Canceled.
func (c *deadlineContext) Err() error {
	c.mu.Lock()
	derived, err := c.derived, c.err
	c.mu.Unlock()
	switch {
	case derived != nil:
		return derived.Err()
	case err != nil:
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

// release ends the context, and the timer Done made, if any: its error
// stays the one it had, or becomes context.Canceled.
func (c *deadlineContext) release() {
	err := c.errNow()
	if err == nil {
		err = context.Canceled
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
