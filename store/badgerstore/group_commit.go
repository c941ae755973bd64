package badgerstore

import (
	"context"
	"sync"

	"github.com/thriftbridge/thriftbridge/store"
)

// Group commit. Every Badger transaction pays a fixed cost on top of its
// entries: the oracle's read and commit marks (each a message to a
// goroutine of Badger's), the check of its reads against the transactions
// that committed since it began, its request to Badger's write goroutine
// and the wait for it. Under single-column inserts, sharing it took a
// quarter to a third off thriftd's CPU per call (docs/PERFORMANCE-LOG.md,
// "Group commit"). Writers that arrive while another
// writer's transaction is committing therefore queue, and the next of
// them to run commits all the queued row mutations in one transaction.
//
// Each writer holds the locks of its own rows while it waits (rowlock.go),
// so the row mutations of a group touch disjoint rows and cannot conflict
// with one another, and a writer of the same row waits as it did. A
// group's transaction commits every member's rows or none: if writing any
// member's rows fails, or the commit does, the group is discarded and
// every member applies its rows in a transaction of its own, so that each
// gets the result it would have got alone. A transaction that loses a
// conflict is retried whole, as a writer's own was. If the group's write
// panics, the panic is the leader's call's (the server answers it with an
// internal error), the other members apply alone, and the next queued
// writer leads: one bad call never stalls the writers behind it. A panic
// after the transaction committed (while the caches are told) leaves the
// members committed: applying their rows again would count their counter
// adds twice, and a cache entry not told stays invalidated, which its
// writer did before writing.
//
// No writer waits for a group to fill: a writer that finds no commit
// running commits its rows at once, alone.
//
// A writer of more than groupAloneOps operations commits alone too. The
// leader writes every member's rows into the transaction itself, one
// after the other, and a batch's rows are most of the work of its call:
// reading the packs it writes into, packing, encoding. Under super column
// batches (100 subcolumns a call) the other CPU then had little to do but
// wait, and two fifths of a CPU stayed idle. Alone, such writers do
// that work at once, each in its own goroutine, and pay the transaction's
// fixed cost, which is small beside their rows' (docs/PERFORMANCE-LOG.md,
// "Large writers commit alone").
//
// Not with the sync batch: there every transaction waits for its own sync
// of Badger's write-ahead log (Badger syncs once for each transaction of
// the writes it takes together), and that wait, not the CPU, is what a
// large writer costs. Every writer that fits joins groups then, and a
// group's writers share one sync (docs/PERFORMANCE-LOG.md, "The cost of
// durability").

const (
	// groupMaxOps and groupMaxBytes bound a group's transaction; a member
	// larger than the room left waits for the next group.
	groupMaxOps   = 4096
	groupMaxBytes = 1 << 20
	// groupAloneOps is the most operations of a writer that joins groups.
	groupAloneOps = 16
)

// commitJob is one writer's row mutations, queued for a group.
type commitJob struct {
	ctx  context.Context
	rows []store.RowMutation
	ops  int
	size int64
	err  error
	wake chan wakeup
}

// wakeup is what a queued writer is told.
type wakeup uint8

const (
	committed  wakeup = iota // its rows are committed, or failed with err
	lead                     // it leads the next group
	applyAlone               // its group failed: it applies its rows alone
)

// groupCommitter queues the writers that arrive while a group commits.
type groupCommitter struct {
	mu      sync.Mutex
	queue   []*commitJob
	leading bool
	// syncsEachCommit: every transaction is synced to the disk before its
	// commit returns (the sync batch), so large writers join groups too.
	syncsEachCommit bool
	// beforePublish, when set (by tests), runs after a group's
	// transaction has committed and before its writes are published.
	beforePublish func()
	// jobs keeps commitJobs, with their channels, for reuse: a queued
	// writer's job and channel were a fifth of the bytes thriftd's own
	// code allocated for a single-column insert. A job is told exactly
	// one wakeup, which its writer receives before it returns, so a job
	// given back has nothing pending on its channel.
	jobs sync.Pool
}

// takeJob returns a job of rows, with an empty wake channel.
func (g *groupCommitter) takeJob(ctx context.Context, rows []store.RowMutation, ops int, size int64) *commitJob {
	j, _ := g.jobs.Get().(*commitJob)
	if j == nil {
		j = &commitJob{wake: make(chan wakeup, 1)}
	}
	j.ctx, j.rows, j.ops, j.size = ctx, rows, ops, size
	return j
}

// keepJob keeps a job whose writer has its wakeup, holding on to no
// writer's context or rows.
func (g *groupCommitter) keepJob(j *commitJob) {
	j.ctx, j.rows, j.err = nil, nil, nil
	g.jobs.Put(j)
}

// commitRows applies rows in a transaction shared with the writers queued
// beside them. The caller holds the rows' locks.
func (e *Engine) commitRows(ctx context.Context, rows []store.RowMutation) error {
	g := &e.group
	ops, size := rowsCost(rows)
	if (ops > groupAloneOps && !g.syncsEachCommit) || size > groupMaxBytes {
		return retryWrites(ctx, func() error { return e.applyOnce(rows) })
	}
	g.mu.Lock()
	if !g.leading {
		g.leading = true
		g.mu.Unlock()
		defer e.passLead()
		return retryWrites(ctx, func() error { return e.applyOnce(rows) })
	}
	job := g.takeJob(ctx, rows, ops, size)
	g.queue = append(g.queue, job)
	g.mu.Unlock()
	switch <-job.wake {
	case committed:
		err := job.err
		g.keepJob(job)
		return err
	case applyAlone:
		g.keepJob(job)
		return retryWrites(ctx, func() error { return e.applyOnce(rows) })
	}
	defer e.passLead() // even when the group's write panics
	e.commitGroup(job)
	err := job.err
	g.keepJob(job)
	return err
}

// passLead ends a leader's turn: the first queued writer leads next.
func (e *Engine) passLead() {
	g := &e.group
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.leading = false
		return
	}
	g.queue[0].wake <- lead
}

// commitGroup commits the leader's job with the jobs queued behind it that
// fit, and tells each its result. If the group fails, every member applies
// its rows alone, each in its own writer's goroutine; so they do too if
// the group's write panics before its transaction committed, which leaves
// the panic to the leader's call.
func (e *Engine) commitGroup(leader *commitJob) {
	g := &e.group
	g.mu.Lock()
	// The leader is the head of the queue.
	n, ops, size := 1, leader.ops, leader.size
	for n < len(g.queue) {
		j := g.queue[n]
		if ops+j.ops > groupMaxOps || size+j.size > groupMaxBytes {
			break
		}
		ops, size = ops+j.ops, size+j.size
		n++
	}
	jobs := make([]*commitJob, n)
	copy(jobs, g.queue[:n])
	rest := copy(g.queue, g.queue[n:])
	clear(g.queue[rest:])
	g.queue = g.queue[:rest]
	g.mu.Unlock()

	if len(jobs) == 1 {
		leader.err = retryWrites(leader.ctx, func() error { return e.applyOnce(leader.rows) })
		return
	}
	tell := func(w wakeup) {
		for _, j := range jobs[1:] {
			j.wake <- w
		}
	}
	finished, stored := false, false
	defer func() {
		switch {
		case finished:
		case stored:
			tell(committed)
		default:
			tell(applyAlone)
		}
	}()
	err := retryWrites(leader.ctx, func() error { return e.applyJobs(jobs, &stored) })
	finished = true
	if err == nil {
		e.groupedWrites.Add(int64(len(jobs)))
		tell(committed)
		return
	}
	e.aloneAfterGroup.Add(int64(len(jobs)))
	tell(applyAlone)
	leader.err = retryWrites(leader.ctx, func() error { return e.applyOnce(leader.rows) })
}

// applyJobs writes the rows of every job in one transaction; it sets
// *stored once the transaction has committed.
func (e *Engine) applyJobs(jobs []*commitJob, stored *bool) error {
	txn := e.db.NewTransaction(true)
	defer txn.Discard()
	w := e.newWriter(txn)
	defer e.releaseWriter(w)
	for _, j := range jobs {
		for i := range j.rows {
			if err := w.row(&j.rows[i]); err != nil {
				return err
			}
		}
	}
	if err := e.commit(txn); err != nil {
		return err
	}
	*stored = true
	if hook := e.group.beforePublish; hook != nil {
		hook()
	}
	w.publish()
	return nil
}

// rowsCost is the number of operations of rows and an estimate of their
// bytes in a transaction (groups, and packRows).
func rowsCost(rows []store.RowMutation) (ops int, size int64) {
	for i := range rows {
		ops += len(rows[i].Ops)
		for j := range rows[i].Ops {
			op := &rows[i].Ops[j]
			size += int64(len(rows[i].Key) + len(op.Super) + len(op.Name) + len(op.Value) + 64)
		}
	}
	return ops, size
}
