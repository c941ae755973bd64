package legacy

// block hands out structures of one kind from shared allocations, for
// the structures of one request (batchDecoder) or of one reply
// (replyBlocks), which all live as long as it does: one at a time from
// blocks of 8, then 16, up to 128 (so a small request makes small
// blocks); many at once, exactly as many; or runs of any length from
// blocks that grow as a reply does. A block mostly serves one of these
// ways; a batchDecoder mixes them (its frame reader takes runs, and one
// at a time past maxHint elements of a list; its reads through the
// protocol, after the frame reader gave up, one at a time and many),
// which only sizes the blocks they make differently.
type block[T any] struct {
	free []T
	size int // of the last block made
	last []T // the last block made, whole
}

// reuse makes the last block made free again, cleared, for the next
// request: a block user that is done with every structure it handed out
// (a batchDecoder kept for another call) allocates nothing while its
// requests fit in it.
func (b *block[T]) reuse() {
	clear(b.last[:len(b.last)-len(b.free)])
	b.free = b.last
}

func (b *block[T]) one() *T {
	if len(b.free) == 0 {
		b.size = min(max(2*b.size, 8), 128)
		b.free = make([]T, b.size)
		b.last = b.free
	}
	p := &b.free[0]
	b.free = b.free[1:]
	return p
}

// many returns n structures (n at most maxHint).
func (b *block[T]) many(n int) []T {
	if len(b.free) < n {
		return make([]T, n)
	}
	out := b.free[:n:n]
	b.free = b.free[n:]
	return out
}

// run returns n structures (any number, and never a nil slice) from the
// current block, making a new block first when it has fewer left: of n,
// or of twice the last one (up to 1024) if that is more.
func (b *block[T]) run(n int) []T {
	if n == 0 {
		return []T{}
	}
	if len(b.free) < n {
		b.size = max(n, min(max(2*b.size, 8), 1024))
		b.free = make([]T, b.size)
		b.last = b.free
	}
	out := b.free[:n:n]
	b.free = b.free[n:]
	return out
}
