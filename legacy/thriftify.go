package legacy

import (
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// thriftify turns a slice result into the Thrift answer. Structs are
// allocated in bulk, one array per kind, instead of one allocation each.
func thriftify(t *store.Table, res *store.SliceResult) []*cassandra.ColumnOrSuperColumn {
	out := make([]*cassandra.ColumnOrSuperColumn, 0, res.Len())
	coscs := make([]cassandra.ColumnOrSuperColumn, res.Len())
	if len(res.Supers) > 0 {
		for i := range res.Supers {
			sc := &res.Supers[i]
			c := &coscs[i]
			if t.Counter {
				c.CounterSuperColumn = &cassandra.CounterSuperColumn{Name: sc.Name, Columns: counterColumns(sc.Cells)}
			} else {
				c.SuperColumn = &cassandra.SuperColumn{Name: sc.Name, Columns: columns(sc.Cells)}
			}
			out = append(out, c)
		}
		return out
	}
	if t.Counter {
		cs := counterColumns(res.Cells)
		for i := range cs {
			coscs[i].CounterColumn = cs[i]
			out = append(out, &coscs[i])
		}
		return out
	}
	cs := columns(res.Cells)
	for i := range cs {
		coscs[i].Column = cs[i]
		out = append(out, &coscs[i])
	}
	return out
}

func columns(cells []store.Cell) []*cassandra.Column {
	out := make([]*cassandra.Column, len(cells))
	cols := make([]cassandra.Column, len(cells))
	stamps := make([]int64, len(cells))
	var ttls []int32
	for i := range cells {
		c := &cells[i]
		col := &cols[i]
		col.Name = c.Name
		col.Value = c.Value
		stamps[i] = c.Timestamp
		col.Timestamp = &stamps[i]
		if c.TTL > 0 {
			if ttls == nil {
				ttls = make([]int32, len(cells))
			}
			ttls[i] = c.TTL
			col.TTL = &ttls[i]
		}
		out[i] = col
	}
	return out
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

func counterColumns(cells []store.Cell) []*cassandra.CounterColumn {
	out := make([]*cassandra.CounterColumn, len(cells))
	cols := make([]cassandra.CounterColumn, len(cells))
	for i := range cells {
		cols[i] = cassandra.CounterColumn{Name: cells[i].Name, Value: cells[i].CounterValue}
		out[i] = &cols[i]
	}
	return out
}
