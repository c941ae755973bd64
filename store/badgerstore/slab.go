package badgerstore

// slab hands out byte slices for the keys and values of a transaction
// (and the records the writer reads before writing), from a few chunks
// instead of one allocation each. Badger copies keys and values into its
// memtable and log before Commit returns, so once a transaction has
// committed or been discarded its slab is reset and its chunks serve the
// writer's later transactions.
//
// A slab keeps every chunk its last transaction filled, not only the
// last one: a group commit of super column batches hands out a megabyte
// or more (each batch reads and rewrites ten packs), and a slab that kept
// only its last chunk, up to 64 KiB, allocated all of it again for every
// group, a third of the bytes thriftd allocated under super batches. What
// idle writers keep is bounded (Engine.keepSlab).
type slab struct {
	chunk []byte   // the chunk slices are handed out from
	full  [][]byte // the chunks filled since the last reset
	spare [][]byte // empty chunks, kept from earlier transactions
}

const (
	slabFirstChunk = 4 << 10
	slabMaxChunk   = 1 << 20
)

// scratch returns an empty slice with room for n bytes; what is appended
// to it must be claimed by using it as the next key or value (the slab
// advances past it on the next call).
func (s *slab) scratch(n int) []byte {
	if cap(s.chunk)-len(s.chunk) < n {
		s.nextChunk(n)
	}
	b := s.chunk[len(s.chunk):len(s.chunk)]
	s.chunk = s.chunk[:len(s.chunk)+n]
	return b[:0:n]
}

// nextChunk retires the current chunk and moves on to one with room for
// n bytes: the largest spare one, if it is large enough, else a new one,
// twice the size of the last.
func (s *slab) nextChunk(n int) {
	if cap(s.chunk) > 0 {
		s.full = append(s.full, s.chunk)
	}
	if big := s.largestSpare(); big >= 0 && cap(s.spare[big]) >= n {
		s.chunk = s.takeSpare(big)
		return
	}
	size := min(max(2*cap(s.chunk), slabFirstChunk), slabMaxChunk)
	s.chunk = make([]byte, 0, max(size, n))
}

// copy returns a copy of b that lives as long as the transaction.
func (s *slab) copy(b []byte) []byte {
	return append(s.scratch(len(b)), b...)
}

// copyCap copies b with room for extra bytes appended after it.
func (s *slab) copyCap(b []byte, extra int) []byte {
	return append(s.scratch(len(b)+extra), b...)
}

// reset makes the chunks the last transaction filled available again,
// and drops the spare chunks it did not touch, so that a slab holds what
// its writer's last transaction used: after a group of single-column
// writes, the one chunk they were written into (the largest spare, at
// most slabMaxChunk, is taken first, so that groups of varying sizes
// reuse it rather than drop and make it again). Slices
// handed out before must no longer be in use.
func (s *slab) reset() {
	clear(s.spare)
	s.spare = s.spare[:0]
	for i, c := range s.full {
		s.spare = append(s.spare, c[:0])
		s.full[i] = nil
	}
	s.full = s.full[:0]
	if cap(s.chunk) > 0 {
		s.spare = append(s.spare, s.chunk[:0])
	}
	s.chunk = nil
}

// size is the memory the slab holds, in bytes.
func (s *slab) size() int {
	n := cap(s.chunk)
	for _, c := range s.full {
		n += cap(c)
	}
	for _, c := range s.spare {
		n += cap(c)
	}
	return n
}

// trim drops chunks of a reset slab until it holds at most limit bytes,
// the largest first.
func (s *slab) trim(limit int) {
	n := s.size()
	for n > limit && len(s.spare) > 0 {
		n -= cap(s.takeSpare(s.largestSpare()))
	}
}

// largestSpare is the index of the largest spare chunk, -1 if none.
func (s *slab) largestSpare() int {
	big := -1
	for i, c := range s.spare {
		if big < 0 || cap(c) > cap(s.spare[big]) {
			big = i
		}
	}
	return big
}

// takeSpare removes spare chunk i from the list and returns it.
func (s *slab) takeSpare(i int) []byte {
	c := s.spare[i]
	last := len(s.spare) - 1
	s.spare[i], s.spare[last] = s.spare[last], nil
	s.spare = s.spare[:last]
	return c
}

// What idle writers keep of their slabs: up to slabKeptSmall each in any
// case (the free list of 64 writers then holds 4 MiB at most), more while
// all idle writers together keep less than slabKeptTotal, and never more
// than slabKeptMax for one writer. A group of writers commits at a time,
// so a few writers are in use at once and the large slabs stay with them.
const (
	slabKeptSmall = 64 << 10
	slabKeptMax   = 4 << 20
	slabKeptTotal = 8 << 20
)

// keepSlab resets the slab of a writer going back to the free list and
// trims it to what idle writers may keep; it returns the bytes kept
// beyond slabKeptSmall, counted in e.slabsKept until the writer is taken
// again (or not kept after all: unkeepSlab).
func (e *Engine) keepSlab(s *slab) int64 {
	s.reset()
	s.trim(slabKeptMax)
	extra := int64(s.size() - slabKeptSmall)
	if extra <= 0 {
		return 0
	}
	if e.slabsKept.Add(extra) <= slabKeptTotal {
		return extra
	}
	e.slabsKept.Add(-extra)
	s.trim(slabKeptSmall)
	return 0
}

// unkeepSlab releases what keepSlab counted for a writer leaving the free
// list, or not entering it.
func (e *Engine) unkeepSlab(extra int64) {
	if extra > 0 {
		e.slabsKept.Add(-extra)
	}
}
