package badgerstore

import "github.com/thriftbridge/thriftbridge/store/marshal"

// sameKeyEncoding reports whether AppendKey gives the same bytes under
// next as under previous for every value previous accepts. UpdateTable
// asks it of a type that replaces another under stored data, on top of
// Cassandra's compatibility (store.CheckTableChange): cells and index
// entries are keyed by the types' encodings and read back through them.
func sameKeyEncoding(next, previous marshal.Type) bool {
	if marshal.Equal(next, previous) {
		return true
	}
	switch n := next.(type) {
	case marshal.BytesType, marshal.AsciiType, marshal.UTF8Type:
		// All three store the bytes themselves, escaped alike.
		switch previous.(type) {
		case marshal.BytesType, marshal.AsciiType, marshal.UTF8Type:
			return true
		}
	case *marshal.Reversed:
		p, ok := previous.(*marshal.Reversed)
		return ok && sameKeyEncoding(n.Base(), p.Base())
	case *marshal.Composite:
		// A composite key is each component's key in turn: a composite
		// extended with more components encodes the names of the shorter
		// one alike if the shared components do.
		p, ok := previous.(*marshal.Composite)
		if !ok {
			return false
		}
		nc, pc := n.Components(), p.Components()
		if len(nc) < len(pc) {
			return false
		}
		for i := range pc {
			if !sameKeyEncoding(nc[i], pc[i]) {
				return false
			}
		}
		return true
	}
	return false
}
