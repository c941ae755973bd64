package badgerstore

import (
	"bytes"

	"github.com/dgraph-io/badger/v4"
)

// seekIter is a forward Badger iterator that skips the seeks it does not
// need. A range scan seeks twice a row, to the row's first cell and past
// its last, and a seek re-positions every memtable and table under the
// iterator: under get_range_slices of 10 rows, seeks were 16% of thriftd's
// CPU, while the iterator mostly stood where the seek would put it, or a
// step before.
//
// It keeps one fact: the iterator stands on the first key at or after
// bound (when known). A seek is the first key at or after its target, and a
// step from key k lands on the first key after k, that is at or after
// k+0x00. So Seek(target) may
//   - step, when the iterator stands before target: a few steps land where
//     the seek would, the last step coming from a key before target;
//   - do nothing, when it stands at or after target and bound is at or
//     before target: no key lies between bound and where it stands;
//   - seek, otherwise.
//
// A plain seekIter (a reverse iterator, or one that seeks once) seeks
// every time and keeps nothing.
type seekIter struct {
	*badger.Iterator
	plain bool
	bound []byte
	known bool
}

// seekIterSteps is how many keys a Seek steps over before it seeks: a seek
// costs a few steps.
const seekIterSteps = 8

func newSeekIter(it *badger.Iterator, plain bool) *seekIter {
	return &seekIter{Iterator: it, plain: plain}
}

// Next steps to the next key.
func (s *seekIter) Next() {
	if !s.plain && s.Iterator.Valid() {
		s.bound = append(append(s.bound[:0], s.Iterator.Item().Key()...), 0)
		s.known = true
	}
	s.Iterator.Next()
}

// Seek places the iterator on the first key at or after target, as
// badger.Iterator.Seek does (the last key at or before it, in reverse).
func (s *seekIter) Seek(target []byte) {
	if s.plain {
		s.Iterator.Seek(target)
		return
	}
	if len(target) > 0 {
		for range seekIterSteps {
			if !s.Iterator.Valid() || bytes.Compare(s.Iterator.Item().Key(), target) >= 0 {
				break
			}
			s.Next()
		}
		if s.known && bytes.Compare(s.bound, target) <= 0 &&
			(!s.Iterator.Valid() || bytes.Compare(s.Iterator.Item().Key(), target) >= 0) {
			return
		}
	}
	s.Iterator.Seek(target)
	s.bound = append(s.bound[:0], target...)
	s.known = len(target) > 0
}
