package badgerstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// Deferred writes. A Badger commit, waited for, was about half of what a
// single-column insert cost thriftd, and most of that was the wait: the
// writer's goroutine sleeping while Badger's write goroutine took the
// group's entries, and the wake-ups around it (docs/PERFORMANCE-LOG.md,
// "What the store's write costs an insert"). With the commit log sync
// periodic (Cassandra's default), a small write is therefore acknowledged
// as soon as it is in the deferred writes' log (deferred_log.go), which
// keeps it through a crash of the process as Badger's own log would, and
// one goroutine of the engine's, the applier, writes the queued writes
// into Badger in order, many in a transaction.
//
// What a client sees does not change:
//
//   - Every read of a row waits until the deferred writes of that row have
//     been applied; a scan, a schema change, a backup and a garbage
//     collection wait until every write acknowledged before they started
//     has been. A pending write is counted in its row's version slot
//     (rowlock.go), so a read that finds its slot's count at zero goes on
//     at the cost of one atomic load, and rows that share a slot only
//     wait for each other.
//   - A write that is not deferred (a large one, a conditional update)
//     waits, holding no lock, until the deferred writes of its rows have
//     been applied, and then takes their locks, so that writes of a row
//     are applied in the order they were acknowledged.
//   - Deferred writes are applied in the order of the log, each row
//     mutation by the same code as a write that is not deferred, with
//     the locks of its rows held and the clock of its acknowledgement
//     (a TTL counts from then). The number of the last record applied is
//     written in the same transaction, so at start-up the records after
//     it are applied exactly once: a counter add is never counted twice.
//
// With the sync batch (acknowledged = on disk), nothing is deferred.

const (
	// deferMaxOps and deferMaxBytes bound a deferred write; larger ones
	// are applied before they are acknowledged.
	deferMaxOps   = groupAloneOps
	deferMaxBytes = 64 << 10
	// applyMaxJobs bounds the writes the applier puts in one transaction.
	applyMaxJobs = 256
	// queueMaxBytes bounds the payloads waiting for the applier; a writer
	// that finds no room waits.
	queueMaxBytes = 4 << 20
	// closeDrainTimeout is how long Close waits for the applier; what it
	// has not applied stays in the log for the next start.
	closeDrainTimeout = 30 * time.Second
)

// deferredAppliedKey holds the number of the last deferred write applied.
var deferredAppliedKey = []byte{nsSchema, schemaMeta, 'd', 'e', 'f', 'e', 'r'}

// deferredJob is one acknowledged write waiting for the applier.
type deferredJob struct {
	seq     uint64
	payload []byte
	tables  []*store.Table // of each row, as the writer resolved it
	slots   []rowSlot      // version slots of its rows
	prefix  []byte         // room for a row's prefix, kept with the job for its next use
	// settled: its pending counts were lowered when it was applied (or
	// dropped) alone, not with its batch.
	settled bool
}

// deferredWrites is the queue of acknowledged writes and its applier.
type deferredWrites struct {
	mu sync.Mutex
	// queue holds the jobs not yet applied, in log order; the applier
	// takes from its head.
	queue      []*deferredJob
	queueBytes int
	last       uint64 // number of the last job queued
	applied    atomic.Uint64
	log        *deferredLog // nil in memory
	// progress is closed, and replaced, when the applier has applied
	// jobs and someone waits (waiting > 0).
	progress chan struct{}
	waiting  int
	// work wakes the applier.
	work    chan struct{}
	closing bool
	// abandon is closed when Close stops waiting for the applier, which
	// it does after closeWait.
	abandon   chan struct{}
	closeWait time.Duration
	jobs      sync.Pool
	// pending counts the jobs not yet applied of each version slot.
	pending [rowVersionSlots]atomic.Int32
	total   atomic.Int64  // jobs not yet applied
	queued  atomic.Uint64 // jobs queued since the store opened
	// lost counts the deferred writes that could not be applied.
	lost atomic.Int64
	// beforeApply, when set (by tests, under mu), runs before the
	// applier applies a batch.
	beforeApply func()
	done        chan struct{} // closed when the applier has stopped
}

func newDeferredWrites(log *deferredLog, applied uint64) *deferredWrites {
	d := &deferredWrites{
		log:      log,
		last:     applied,
		progress: make(chan struct{}),
		work:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		abandon:  make(chan struct{}),

		closeWait: closeDrainTimeout,
	}
	d.applied.Store(applied)
	return d
}

// deferrable reports whether a batch may be acknowledged before Badger
// has it.
func (e *Engine) deferrable(b *store.Batch) bool {
	if e.deferred == nil {
		return false
	}
	ops, size := rowsCost(b.Rows)
	if ops > deferMaxOps || size > deferMaxBytes {
		return false
	}
	for i := range b.Rows {
		for j := range b.Rows[i].Ops {
			op := &b.Rows[i].Ops[j]
			// An operation the engine refuses is refused to the client.
			switch op.Kind {
			case store.OpPut, store.OpDeleteCell, store.OpDeleteSuper, store.OpDeleteRow, store.OpDeleteRange, store.OpCounterAdd:
			default:
				return false
			}
			// The bounds of a range deletion go into the record too.
			if size += int64(len(op.Start) + len(op.Finish)); size > deferMaxBytes {
				return false
			}
		}
	}
	return true
}

// applyDeferred queues the rows of a deferrable batch and returns once
// they are in the log.
func (e *Engine) applyDeferred(ctx context.Context, rows []store.RowMutation) error {
	d := e.deferred
	j, _ := d.jobs.Get().(*deferredJob)
	if j == nil {
		j = &deferredJob{}
	}
	j.payload = appendDeferred(j.payload[:0], e.now().UnixMicro(), time.Now().Unix(), rows)
	rp := j.prefix
	for i := range rows {
		rp, _ = e.rowPrefix(rp[:0], rows[i].Table, rows[i].Key)
		j.slots = append(j.slots, e.rowLocks.slot(rp))
		j.tables = append(j.tables, rows[i].Table)
	}
	j.prefix = rp[:0]
	for {
		// Room is waited for holding no row lock: the applier takes the
		// locks of the rows it applies.
		if err := d.waitRoom(ctx, len(j.payload)); err != nil {
			d.keepJob(j)
			return err
		}
		// The rows' locks order this write after the writes of its rows
		// in flight: one not deferred has been applied, a deferred one
		// queued. They also raise the rows' versions, so that a read that
		// began before cannot fill the cell cache with what this write
		// replaces.
		var queued bool
		var err error
		e.rowLocks.withSlots(j.slots, func() { queued, err = d.enqueue(j) })
		if queued || err != nil {
			return err
		}
	}
}

// waitRoom waits until the queue and the log have room for a payload of
// n bytes.
func (d *deferredWrites) waitRoom(ctx context.Context, n int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		if d.closing {
			return errDeferredClosing
		}
		if len(d.queue) == 0 || d.queueBytes+n <= queueMaxBytes && (d.log == nil || d.log.fits(n)) {
			return nil
		}
		if err := d.wait(ctx); err != nil {
			return err
		}
	}
}

var errDeferredClosing = errors.New("badger store: closing")

// enqueue appends j to the log and the queue, if the log has room; the
// caller holds the locks of j's rows.
func (d *deferredWrites) enqueue(j *deferredJob) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		d.keepJob(j)
		return false, errDeferredClosing
	}
	if d.log != nil && !d.log.fits(len(j.payload)) {
		if len(d.queue) > 0 {
			return false, nil // another writer took the room
		}
		// Every record has been applied: the log starts again.
		d.log.restart()
	}
	d.last++
	j.seq = d.last
	if d.log != nil {
		d.log.append(j.seq, j.payload)
	}
	for _, s := range j.slots {
		d.pending[s].Add(1)
	}
	d.total.Add(1)
	d.queued.Add(1)
	d.queue = append(d.queue, j)
	d.queueBytes += len(j.payload)
	select {
	case d.work <- struct{}{}:
	default:
	}
	return true, nil
}

// keepJob keeps a job no longer queued for reuse.
func (d *deferredWrites) keepJob(j *deferredJob) {
	clear(j.tables)
	j.tables, j.slots, j.settled = j.tables[:0], j.slots[:0], false
	if cap(j.payload) > 4<<10 {
		j.payload = nil
	}
	if cap(j.prefix) > 1<<10 {
		j.prefix = nil
	}
	d.jobs.Put(j)
}

// wait waits, under d.mu, until the applier has applied more jobs or ctx
// ends.
func (d *deferredWrites) wait(ctx context.Context) error {
	ch := d.progress
	d.waiting++
	d.mu.Unlock()
	var err error
	select {
	case <-ch:
	case <-ctx.Done():
		err = ctx.Err()
	case <-d.done:
		err = errors.New("badger store: closed")
	}
	d.mu.Lock()
	d.waiting--
	return err
}

// waitSlots waits until no deferred write of the given version slots is
// pending.
func (e *Engine) waitSlots(ctx context.Context, slots ...rowSlot) error {
	d := e.deferred
	if d == nil || d.total.Load() == 0 || !d.anyPending(slots) {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// The applier lowers the counts under d.mu, so one read here cannot
	// miss the progress it announces.
	for d.anyPending(slots) {
		if err := d.wait(ctx); err != nil {
			return fmt.Errorf("%w: waiting for the row's acknowledged writes: %w", store.ErrTimeout, err)
		}
	}
	return nil
}

func (d *deferredWrites) anyPending(slots []rowSlot) bool {
	for _, s := range slots {
		if d.pending[s].Load() != 0 {
			return true
		}
	}
	return false
}

// settleRow waits until the deferred writes of a row have been applied.
func (e *Engine) settleRow(ctx context.Context, t *store.Table, key []byte) error {
	if e.deferred == nil || e.deferred.total.Load() == 0 {
		return nil
	}
	rp, _ := e.rowPrefix(nil, t, key)
	return e.waitSlots(ctx, e.rowLocks.slot(rp))
}

// settleRows waits until the deferred writes of a batch's rows have been
// applied.
func (e *Engine) settleRows(ctx context.Context, rows []store.RowMutation) error {
	if e.deferred == nil || e.deferred.total.Load() == 0 {
		return nil
	}
	var rp []byte
	for i := range rows {
		rp, _ = e.rowPrefix(rp[:0], rows[i].Table, rows[i].Key)
		if err := e.waitSlots(ctx, e.rowLocks.slot(rp)); err != nil {
			return err
		}
	}
	return nil
}

// settleAll waits until every write acknowledged before the call has
// been applied.
func (e *Engine) settleAll(ctx context.Context) error {
	d := e.deferred
	if d == nil || d.total.Load() == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	target := d.last
	for d.applied.Load() < target {
		if err := d.wait(ctx); err != nil {
			return fmt.Errorf("%w: waiting for acknowledged writes: %w", store.ErrTimeout, err)
		}
	}
	return nil
}

// lockRowsSettled locks the rows of a write that is not deferred, once
// the deferred writes of its rows have been applied.
func (e *Engine) lockRowsSettled(ctx context.Context, rows []store.RowMutation) (func(), error) {
	for {
		if err := e.settleRows(ctx, rows); err != nil {
			return nil, err
		}
		unlock := e.lockRows(rows)
		if e.deferred == nil || e.deferred.total.Load() == 0 || !e.rowsPending(rows) {
			return unlock, nil
		}
		// A deferred write of a row was queued between the wait and the
		// lock.
		unlock()
	}
}

func (e *Engine) rowsPending(rows []store.RowMutation) bool {
	var rp []byte
	for i := range rows {
		rp, _ = e.rowPrefix(rp[:0], rows[i].Table, rows[i].Key)
		if e.deferred.pending[e.rowLocks.slot(rp)].Load() != 0 {
			return true
		}
	}
	return false
}

// runApplier applies the queued jobs until the engine closes and the
// queue is empty.
func (e *Engine) runApplier() {
	d := e.deferred
	defer close(d.done)
	var batch []*deferredJob
	var slots []rowSlot
	seen := make(map[rowSlot]bool)
	for {
		d.mu.Lock()
		for len(d.queue) == 0 {
			if d.closing {
				d.mu.Unlock()
				return
			}
			d.mu.Unlock()
			<-d.work
			d.mu.Lock()
		}
		// The head of the queue, as far as its rows are distinct: a row
		// written twice in one transaction would be read, the second
		// time, from the snapshot of prefetches, which lacks the first.
		batch, slots = batch[:0], slots[:0]
		clear(seen)
		for _, j := range d.queue {
			if len(batch) == applyMaxJobs || d.repeats(j, seen) {
				break
			}
			for _, s := range j.slots {
				seen[s] = true
			}
			batch = append(batch, j)
			slots = append(slots, j.slots...)
		}
		hook := d.beforeApply
		d.mu.Unlock()
		if hook != nil {
			hook()
		}
		select {
		case <-d.abandon:
			return // Close stopped waiting: the rest stays in the log
		default:
		}

		if !e.applyBatch(batch, slots) {
			return // Close stopped waiting: the rest stays in the log
		}

		d.mu.Lock()
		n := copy(d.queue, d.queue[len(batch):])
		clear(d.queue[n:])
		d.queue = d.queue[:n]
		for _, j := range batch {
			d.queueBytes -= len(j.payload)
			if !j.settled {
				for _, s := range j.slots {
					d.pending[s].Add(-1)
				}
			}
		}
		applied := batch[len(batch)-1].seq
		for _, j := range batch {
			d.keepJob(j)
		}
		d.total.Add(-int64(len(batch)))
		d.applied.Store(applied)
		if d.waiting > 0 {
			close(d.progress)
			d.progress = make(chan struct{})
		}
		d.mu.Unlock()
	}
}

// repeats reports whether j writes a version slot already in seen.
func (d *deferredWrites) repeats(j *deferredJob, seen map[rowSlot]bool) bool {
	for _, s := range j.slots {
		if seen[s] {
			return true
		}
	}
	return false
}

// applyBatch applies jobs in one transaction, or, if that fails, each
// alone. It returns once every job has been applied or given up on, or
// false if Close stopped waiting for it.
//
// Alone, each job holds only its own rows' locks, and its rows' pending
// counts are lowered as soon as it is applied (or dropped). A job that
// keeps failing then holds back neither the reads of the rows applied
// before it nor, while it is retried, the locks of the batch's other
// rows. The jobs after it still wait for it: each moves the mark of
// applied writes, and a mark past it would lose it at the next start. No
// other write reaches a row between the batch's locks and its job's: a
// write that is not deferred waits for the row's pending count first, and
// a deferred one is applied by this applier, after.
func (e *Engine) applyBatch(jobs []*deferredJob, slots []rowSlot) bool {
	var rows deferredRows
	unlock := e.rowLocks.lock(slots)
	err := retryWrites(context.Background(), func() error { return e.applyJobsOnce(jobs, &rows) })
	unlock()
	if err == nil {
		return true
	}
	if len(jobs) > 1 {
		e.log.Warn("deferred writes failed together; applying them one by one", "writes", len(jobs), "err", err)
	}
	var own []rowSlot
	for _, j := range jobs {
		// lock sorts and compacts what it is given, and j.slots counts.
		own = append(own[:0], j.slots...)
		unlock := e.rowLocks.lock(own)
		applied := e.applyJobAlone(j, &rows)
		unlock()
		if !applied {
			return false
		}
		e.deferred.settle(j)
	}
	return true
}

// settle lowers the pending counts of a job applied (or dropped) alone,
// and wakes the reads that wait for them.
func (d *deferredWrites) settle(j *deferredJob) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range j.slots {
		d.pending[s].Add(-1)
	}
	j.settled = true
	if d.waiting > 0 {
		close(d.progress)
		d.progress = make(chan struct{})
	}
}

// applyJobAlone applies one job, retrying while the failure may pass (a
// full disk). A job whose failure does not pass is logged and dropped,
// and the mark moves past it. It returns false if Close stopped waiting.
func (e *Engine) applyJobAlone(j *deferredJob, rows *deferredRows) bool {
	jobs := []*deferredJob{j}
	for attempt := 1; ; attempt++ {
		err := retryWrites(context.Background(), func() error { return e.applyJobsOnce(jobs, rows) })
		if err == nil {
			return true
		}
		transient := e.disk.check() != nil
		if attempt >= 5 && !transient {
			e.deferred.lost.Add(1)
			e.log.Error("an acknowledged write could not be applied and is dropped", "seq", j.seq, "err", err)
			if err := e.update(func(txn *badger.Txn) error { return setDeferredMark(txn, j.seq) }); err != nil {
				e.log.Error("the deferred writes' mark could not move past a dropped write; it will be tried again at the next start", "seq", j.seq, "err", err)
			}
			return true
		}
		e.log.Warn("an acknowledged write could not be applied yet; retrying", "seq", j.seq, "attempt", attempt, "err", err)
		select {
		case <-e.deferred.abandon:
			return false
		case <-time.After(time.Duration(min(attempt, 50)) * 20 * time.Millisecond):
		}
	}
}

func setDeferredMark(txn *badger.Txn, seq uint64) error {
	return txn.Set(deferredAppliedKey, binary.BigEndian.AppendUint64(make([]byte, 0, 8), seq))
}

// applyJobsOnce writes the rows of jobs in one transaction, with the
// number of the last applied, and tells the caches.
func (e *Engine) applyJobsOnce(jobs []*deferredJob, rows *deferredRows) error {
	txn := e.db.NewTransaction(true)
	defer txn.Discard()
	w := e.newWriter(txn)
	defer e.releaseWriter(w)
	for _, j := range jobs {
		if err := rows.decode(j.payload); err != nil {
			return err
		}
		if len(rows.rows) != len(j.tables) {
			return errDeferredPayload
		}
		w.setClock(rows.nowMicro, rows.realNow)
		for i := range rows.rows {
			// A replayed write of a family truncated or dropped since
			// went with the family's data.
			if rows.rows[i].Table = j.tables[i]; rows.rows[i].Table == nil {
				continue
			}
			if err := w.row(&rows.rows[i]); err != nil {
				return err
			}
		}
	}
	if err := setDeferredMark(txn, jobs[len(jobs)-1].seq); err != nil {
		return err
	}
	if err := e.commit(txn); err != nil {
		return err
	}
	w.publish()
	return nil
}

// openDeferred opens the deferred writes' log in dir (none in memory),
// applies what a crash left in it, and starts the applier.
func (e *Engine) openDeferred(dir string, inMemory bool) error {
	applied, err := readDeferredMark(e.db)
	if err != nil {
		return err
	}
	var log *deferredLog
	if !inMemory {
		if log, err = openDeferredLog(dir); err != nil {
			return err
		}
	}
	e.deferred = newDeferredWrites(log, applied)
	if log != nil {
		if err := e.replayDeferred(log, applied); err != nil {
			log.close()
			return err
		}
	}
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		e.runApplier()
	}()
	return nil
}

// replayDeferred applies the records of the log after the one numbered
// applied, in order, then starts the log again.
func (e *Engine) replayDeferred(log *deferredLog, applied uint64) error {
	tables := map[uint32]*store.Table{}
	for _, ks := range e.Catalog().Keyspaces {
		for _, t := range ks.Tables {
			tables[dataIDOf(t)] = t
		}
	}
	// As the applier does, up to applyMaxJobs records of distinct rows
	// go into a transaction: the queue may have held thousands.
	var rows, scratch deferredRows
	var batch []*deferredJob
	seen := make(map[rowSlot]bool)
	replayed, last := 0, applied
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := retryWrites(context.Background(), func() error { return e.applyJobsOnce(batch, &scratch) })
		if err != nil {
			return fmt.Errorf("apply deferred writes %d to %d: %w", batch[0].seq, batch[len(batch)-1].seq, err)
		}
		replayed += len(batch)
		last = batch[len(batch)-1].seq
		batch = batch[:0]
		clear(seen)
		return nil
	}
	err := log.records(applied, func(seq uint64, payload []byte) error {
		if err := rows.decode(payload); err != nil {
			return fmt.Errorf("deferred write %d: %w", seq, err)
		}
		j := &deferredJob{seq: seq, payload: payload}
		for i, id := range rows.dataIDs {
			t := tables[id]
			j.tables = append(j.tables, t)
			if t != nil {
				rp, _ := e.rowPrefix(nil, t, rows.rows[i].Key)
				j.slots = append(j.slots, e.rowLocks.slot(rp))
			}
		}
		if len(batch) == applyMaxJobs || e.deferred.repeats(j, seen) {
			if err := flush(); err != nil {
				return err
			}
		}
		for _, s := range j.slots {
			seen[s] = true
		}
		batch = append(batch, j)
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("replay the deferred writes' log in %s: %w", log.f.Name(), err)
	}
	if replayed > 0 {
		e.log.Info("applied the writes acknowledged before the last stop", "writes", replayed, "last", last)
	}
	e.deferred.last = last
	e.deferred.applied.Store(last)
	log.restart()
	return nil
}

// readDeferredMark reads the number of the last deferred write applied.
func readDeferredMark(db *badger.DB) (uint64, error) {
	var applied uint64
	err := db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(deferredAppliedKey)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("deferred writes' mark has %d bytes", len(v))
			}
			applied = binary.BigEndian.Uint64(v)
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("read deferred writes' mark: %w", err)
	}
	return applied, nil
}

// unappliedWrites counts the records of the deferred writes' log in dir
// that the store in db has not applied, without changing either.
func unappliedWrites(db *badger.DB, dir string) (int, error) {
	data, err := os.ReadFile(filepath.Join(dir, deferredLogName))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read deferred writes' log: %w", err)
	}
	applied, err := readDeferredMark(db)
	if err != nil {
		return 0, err
	}
	n := 0
	err = (&deferredLog{data: data}).records(applied, func(uint64, []byte) error {
		n++
		return nil
	})
	return n, err
}

// stopDeferred stops queueing writes and lets the applier apply what is
// queued, for at most closeWait.
func (e *Engine) stopDeferred() error {
	d := e.deferred
	if d == nil {
		return nil
	}
	d.mu.Lock()
	d.closing = true
	d.mu.Unlock()
	select {
	case d.work <- struct{}{}:
	default:
	}
	select {
	case <-d.done:
		return nil
	case <-time.After(d.closeWait):
		close(d.abandon)
		return fmt.Errorf("close badger store: %d acknowledged writes were not applied in %s; they stay in the deferred writes' log for the next start", d.total.Load(), d.closeWait)
	}
}

// closeDeferredLog syncs and closes the log once the engine's background
// work (the applier, the periodic sync) has stopped; a log whose every
// record was applied starts again at the next open.
func (e *Engine) closeDeferredLog() error {
	d := e.deferred
	if d == nil || d.log == nil {
		return nil
	}
	if d.lost.Load() == 0 && d.total.Load() == 0 {
		d.log.restart()
	}
	return errors.Join(d.log.sync(), d.log.close())
}
