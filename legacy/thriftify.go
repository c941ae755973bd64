package legacy

import (
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// replyBlocks hands out the structures of one reply from shared
// allocations, one kind in each: the rows of a range read (10 rows of 20
// columns under thriftbench's range mode) took over 70 allocations a
// call when each row's columns had arrays of their own. Every structure
// of a reply lives until the reply is written, so sharing keeps nothing
// longer. The zero value is ready.
type replyBlocks struct {
	coscRefs    block[*cassandra.ColumnOrSuperColumn]
	coscs       block[cassandra.ColumnOrSuperColumn]
	columnRefs  block[*cassandra.Column]
	columns     block[cassandra.Column]
	stamps      block[int64]
	ttls        block[int32]
	counterRefs block[*cassandra.CounterColumn]
	counters    block[cassandra.CounterColumn]
	supers      block[cassandra.SuperColumn]
	counterSups block[cassandra.CounterSuperColumn]
	rows        block[cassandra.KeySlice]
	keys        []byte
}

// thriftify turns a slice result into the Thrift answer.
func (b *replyBlocks) thriftify(t *store.Table, res *store.SliceResult) []*cassandra.ColumnOrSuperColumn {
	out := b.coscRefs.run(res.Len())
	coscs := b.coscs.run(res.Len())
	if len(res.Supers) > 0 {
		for i := range res.Supers {
			sc := &res.Supers[i]
			c := &coscs[i]
			if t.Counter {
				c.CounterSuperColumn = b.counterSups.one()
				*c.CounterSuperColumn = cassandra.CounterSuperColumn{Name: sc.Name, Columns: b.counterColumns(sc.Cells)}
			} else {
				c.SuperColumn = b.supers.one()
				*c.SuperColumn = cassandra.SuperColumn{Name: sc.Name, Columns: b.thriftColumns(sc.Cells)}
			}
			out[i] = c
		}
		return out
	}
	if t.Counter {
		for i, c := range b.counterColumns(res.Cells) {
			coscs[i].CounterColumn = c
			out[i] = &coscs[i]
		}
		return out
	}
	for i, c := range b.thriftColumns(res.Cells) {
		coscs[i].Column = c
		out[i] = &coscs[i]
	}
	return out
}

// thriftColumns turns cells into Thrift columns.
func (b *replyBlocks) thriftColumns(cells []store.Cell) []*cassandra.Column {
	out := b.columnRefs.run(len(cells))
	cols := b.columns.run(len(cells))
	stamps := b.stamps.run(len(cells))
	for i := range cells {
		c := &cells[i]
		col := &cols[i]
		col.Name = c.Name
		col.Value = c.Value
		stamps[i] = c.Timestamp
		col.Timestamp = &stamps[i]
		if c.TTL > 0 {
			col.TTL = b.ttls.one()
			*col.TTL = c.TTL
		}
		out[i] = col
	}
	return out
}

// row is a KeySlice of a copy of key and cols.
func (b *replyBlocks) row(key []byte, cols []*cassandra.ColumnOrSuperColumn) *cassandra.KeySlice {
	if len(b.keys)+len(key) > cap(b.keys) {
		b.keys = make([]byte, 0, max(len(key), 2*cap(b.keys), 256))
	}
	n := len(b.keys)
	b.keys = append(b.keys, key...)
	ks := b.rows.one()
	*ks = cassandra.KeySlice{Key: b.keys[n:len(b.keys):len(b.keys)], Columns: cols}
	return ks
}

// columnReply is the answer of a get of one column, allocated at once.
type columnReply struct {
	cosc      cassandra.ColumnOrSuperColumn
	col       cassandra.Column
	timestamp int64
	ttl       int32
}

// oneColumn is the answer of a get that found the column c: what
// thriftify gives for it, in one allocation instead of five.
func oneColumn(c *store.Cell) *cassandra.ColumnOrSuperColumn {
	r := &columnReply{timestamp: c.Timestamp, ttl: c.TTL}
	r.col = cassandra.Column{Name: c.Name, Value: c.Value, Timestamp: &r.timestamp}
	if c.TTL > 0 {
		r.col.TTL = &r.ttl
	}
	r.cosc.Column = &r.col
	return &r.cosc
}

func (b *replyBlocks) counterColumns(cells []store.Cell) []*cassandra.CounterColumn {
	out := b.counterRefs.run(len(cells))
	cols := b.counters.run(len(cells))
	for i := range cells {
		cols[i] = cassandra.CounterColumn{Name: cells[i].Name, Value: cells[i].CounterValue}
		out[i] = &cols[i]
	}
	return out
}
