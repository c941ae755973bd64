package cqlstore

import (
	"context"
	"errors"
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// stmt is one CQL statement with its values.
type stmt struct {
	cql  string
	args []any
}

// ErrUnsupported is wrapped by the errors of operations this engine cannot
// express in CQL yet.
var ErrUnsupported = errors.New("cqlstore: not supported")

// rowStatements turns one row mutation into statements.
func rowStatements(m *store.RowMutation) ([]stmt, error) {
	ti := info(m.Table)
	if ti.conv != nil {
		return convertedStatements(m)
	}
	out := make([]stmt, 0, len(m.Ops))
	for i := range m.Ops {
		s, err := opStatement(ti, m.Key, &m.Ops[i], true, "")
		if err != nil {
			return nil, fmt.Errorf("table %s.%s: %w", m.Table.Def.Keyspace, m.Table.Def.Name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// putStatement is the INSERT of one cell (no condition, no counter): the
// table's text, the values of the call in one slice.
func putStatement(ti *tableInfo, key []byte, op *store.Op, withTS bool) (stmt, error) {
	switch {
	case ti.superType != nil && len(op.Super) == 0:
		return stmt{}, errors.New("a Super family cell needs a super column name")
	case ti.superType == nil && len(op.Super) > 0:
		return stmt{}, errors.New("a Standard family cell has no super column name")
	case len(op.Name) == 0:
		return stmt{}, errors.New("empty column name")
	}
	args := make([]any, 0, ti.insertArgs)
	args, err := appendParts(args, ti.keyType, key)
	if err == nil && ti.superType != nil {
		args, err = appendColumns(args, ti.superCols, ti.superType, op.Super)
	}
	if err == nil {
		args, err = appendColumns(args, ti.nameCols, ti.nameType, op.Name)
	}
	if err != nil {
		return stmt{}, err
	}
	args = append(args, raw(op.Value))
	ts, ttl := 0, 0
	if withTS {
		ts = 1
		args = append(args, op.Timestamp)
	}
	if op.TTL > 0 {
		ttl = 1
		args = append(args, op.TTL)
	}
	return stmt{ti.inserts[ts][ttl], args}, nil
}

// appendColumns appends the values of the clustering columns cols for the
// name b of type t, as where.names restricts them: none when the table
// has no such columns (the compact part of a converted super family keeps
// the super column name only).
func appendColumns(args []any, cols []clustCol, t marshal.Type, b []byte) ([]any, error) {
	if len(cols) == 0 {
		return args, nil
	}
	n := len(args)
	args, err := appendParts(args, t, b)
	if err == nil && len(args)-n != len(cols) {
		err = fmt.Errorf("cqlstore: %x has %d values for %d columns", b, len(args)-n, len(cols))
	}
	return args, err
}

// opStatement is the statement of one operation: at the operation's own
// timestamp when withTS is set; with cond (an IF clause) for a lightweight
// transaction, which CQL lets run at its own timestamp only.
func opStatement(ti *tableInfo, key []byte, op *store.Op, withTS bool, cond string) (stmt, error) {
	if op.Kind == store.OpPut && cond == "" && !ti.counter {
		return putStatement(ti, key, op, withTS)
	}
	var w where
	if err := w.key(ti, key); err != nil {
		return stmt{}, err
	}
	// using is the USING TIMESTAMP clause and its bound value: a bind
	// marker, not a literal, so that the statement's text is the same for
	// every write of a shape and the driver prepares it once.
	using := func(ts int64) (string, []any) {
		// CQL refuses a timestamp on any statement of a counter table: its
		// deletions take the coordinator's time, as Cassandra's own counter
		// deletions did.
		if !withTS || ti.counter {
			return "", nil
		}
		return " USING TIMESTAMP ?", []any{ts}
	}
	// deleteStmt deletes what w restricts, at the operation's timestamp.
	deleteStmt := func(cond string) stmt {
		u, args := using(op.Timestamp)
		return stmt{"DELETE FROM " + ti.qname + u + w.sb.String() + cond, append(args, w.args...)}
	}
	// cell adds the clustering columns of (op.Super, op.Name).
	cell := func(needName bool) error {
		if ti.superType != nil {
			if len(op.Super) == 0 {
				if needName {
					return errors.New("a Super family cell needs a super column name")
				}
				return nil
			}
			if err := w.names(ti.superCols, ti.superType, op.Super); err != nil {
				return err
			}
		} else if len(op.Super) > 0 {
			return errors.New("a Standard family cell has no super column name")
		}
		if len(op.Name) == 0 {
			if needName {
				return errors.New("empty column name")
			}
			return nil
		}
		return w.names(ti.nameCols, ti.nameType, op.Name)
	}
	switch op.Kind {
	case store.OpPut:
		if ti.counter {
			return stmt{}, errors.New("a counter family takes counter adds, not values")
		}
		if err := cell(true); err != nil {
			return stmt{}, err
		}
		// A conditional put (a plain one is putStatement's).
		ttl, args := "", []any{}
		if op.TTL > 0 {
			ttl, args = " USING TTL ?", append(args, op.TTL)
		}
		args = append(append(args, raw(op.Value)), w.args...)
		return stmt{"UPDATE " + ti.qname + ttl + " SET " + ti.value + " = ?" + w.sb.String() + cond, args}, nil
	case store.OpDeleteCell:
		if err := cell(true); err != nil {
			return stmt{}, err
		}
		return deleteStmt(cond), nil
	case store.OpDeleteSuper:
		if ti.superType == nil || len(op.Super) == 0 {
			return stmt{}, errors.New("a super column deletion needs a Super family and a super column name")
		}
		if err := w.names(ti.superCols, ti.superType, op.Super); err != nil {
			return stmt{}, err
		}
		return deleteStmt(""), nil
	case store.OpDeleteRow:
		return deleteStmt(""), nil
	case store.OpDeleteRange:
		cols, typ := ti.nameCols, ti.nameType
		if ti.superType != nil {
			cols, typ = ti.superCols, ti.superType
		}
		if len(op.Start) == 0 && len(op.Finish) == 0 {
			return deleteStmt(""), nil
		}
		if isComposite(typ) {
			if err := w.compositeRange(cols, op.Start, op.Finish); err != nil {
				return stmt{}, err
			}
			return deleteStmt(""), nil
		}
		lo, hi := ">=", "<="
		if cols[0].desc { // comparator order is the reverse of the values'
			lo, hi = hi, lo
		}
		if len(op.Start) > 0 {
			w.rel(cols[0].name, lo, op.Start)
		}
		if len(op.Finish) > 0 {
			w.rel(cols[0].name, hi, op.Finish)
		}
		return deleteStmt(""), nil
	case store.OpCounterAdd:
		if !ti.counter {
			return stmt{}, errors.New("counter add to a family that is not of counters")
		}
		if err := cell(true); err != nil {
			return stmt{}, err
		}
		args := append([]any{op.Delta}, w.args...)
		return stmt{"UPDATE " + ti.qname + " SET " + ti.value + " = " + ti.value + " + ?" + w.sb.String(), args}, nil
	case store.OpCounterDelete:
		if err := cell(false); err != nil {
			return stmt{}, err
		}
		return stmt{"DELETE FROM " + ti.qname + w.sb.String(), w.args}, nil
	}
	return stmt{}, fmt.Errorf("unknown operation %d", op.Kind)
}

// Apply implements store.Engine: each row mutation is one batch on its
// partition (atomic and isolated in Cassandra); an atomic batch is one
// logged batch of every row.
func (e *Engine) Apply(ctx context.Context, b *store.Batch) error {
	if b.Atomic {
		var all []stmt
		for i := range b.Rows {
			if info(b.Rows[i].Table).counter {
				return errors.New("cqlstore: counter mutations are not allowed in atomic batches")
			}
			ss, err := rowStatements(&b.Rows[i])
			if err != nil {
				return err
			}
			all = append(all, ss...)
		}
		return e.exec(ctx, gocql.LoggedBatch, all)
	}
	for i := range b.Rows {
		ss, err := rowStatements(&b.Rows[i])
		if err != nil {
			return err
		}
		typ := gocql.UnloggedBatch
		if info(b.Rows[i].Table).counter {
			typ = gocql.CounterBatch
		}
		if err := e.exec(ctx, typ, ss); err != nil {
			return err
		}
	}
	return nil
}

// exec runs statements: one alone, several as a batch of typ.
func (e *Engine) exec(ctx context.Context, typ gocql.BatchType, ss []stmt) error {
	switch len(ss) {
	case 0:
		return nil
	case 1:
		return wrapErr("write", e.session.Query(ss[0].cql, ss[0].args...).Consistency(e.consistency(ctx)).ExecContext(ctx))
	}
	batch := e.session.Batch(typ).Consistency(e.consistency(ctx))
	for _, s := range ss {
		batch.Query(s.cql, s.args...)
	}
	return wrapErr("write", batch.ExecContext(ctx))
}
