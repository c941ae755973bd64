package legacy

import (
	"context"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// On one node every consistency level is met by the local write or read;
// an engine over a cluster sends each request at its level (levelCarrier
// puts it into the request's context). The validation below is Cassandra's
// refusals of levels that make no sense for the operation.

func knownConsistency(cl cassandra.ConsistencyLevel) error {
	if cl < cassandra.ConsistencyLevel_ONE || cl > cassandra.ConsistencyLevel_LOCAL_ONE {
		return iref("unknown consistency level %d", int64(cl))
	}
	return nil
}

func validateForRead(cl cassandra.ConsistencyLevel) error {
	if err := knownConsistency(cl); err != nil {
		return err
	}
	if cl == cassandra.ConsistencyLevel_ANY {
		return ire("ANY ConsistencyLevel is only supported for writes")
	}
	return nil
}

func validateForWrite(cl cassandra.ConsistencyLevel) error {
	if err := knownConsistency(cl); err != nil {
		return err
	}
	if cl == cassandra.ConsistencyLevel_SERIAL || cl == cassandra.ConsistencyLevel_LOCAL_SERIAL {
		return ire("You must use conditional updates for serializable writes")
	}
	return nil
}

func validateCounterForWrite(t *store.Table, cl cassandra.ConsistencyLevel) error {
	if err := knownConsistency(cl); err != nil {
		return err
	}
	switch cl {
	case cassandra.ConsistencyLevel_ANY:
		return iref("Consistency level ANY is not yet supported for counter table %s", t.Def.Name)
	case cassandra.ConsistencyLevel_SERIAL, cassandra.ConsistencyLevel_LOCAL_SERIAL:
		return ire("Counter operations are inherently non-serializable")
	}
	return nil
}

// storeConsistency is a Thrift level as the engine takes it; an unknown
// level (refused by the handler's validation) is the engine's default.
func storeConsistency(cl cassandra.ConsistencyLevel) store.Consistency {
	if knownConsistency(cl) != nil {
		return store.ConsistencyDefault
	}
	// store.Consistency follows cassandra.thrift's order.
	return store.Consistency(cl)
}

// withLevel returns ctx carrying the request's consistency level, for the
// engine to send.
func withLevel(ctx context.Context, cl cassandra.ConsistencyLevel) context.Context {
	return store.WithConsistency(ctx, storeConsistency(cl))
}

// levelCarrier puts the consistency level of every call that takes one
// into the call's context (store.WithConsistency), so that an engine over
// a cluster sends each request at the level the client asked for: one
// place for every method, instead of one line in each. The server wraps
// its handler with it (NewServer).
type levelCarrier struct {
	cassandra.Cassandra
}

// withConsistencyLevels wraps h so that its calls' contexts carry their
// consistency levels.
func withConsistencyLevels(h cassandra.Cassandra) cassandra.Cassandra {
	return levelCarrier{h}
}

func (l levelCarrier) Get(ctx context.Context, key []byte, path *cassandra.ColumnPath, cl cassandra.ConsistencyLevel) (*cassandra.ColumnOrSuperColumn, error) {
	return l.Cassandra.Get(withLevel(ctx, cl), key, path, cl)
}

func (l levelCarrier) GetSlice(ctx context.Context, key []byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]*cassandra.ColumnOrSuperColumn, error) {
	return l.Cassandra.GetSlice(withLevel(ctx, cl), key, parent, p, cl)
}

func (l levelCarrier) GetCount(ctx context.Context, key []byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) (int32, error) {
	return l.Cassandra.GetCount(withLevel(ctx, cl), key, parent, p, cl)
}

func (l levelCarrier) MultigetSlice(ctx context.Context, keys [][]byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) (map[string][]*cassandra.ColumnOrSuperColumn, error) {
	return l.Cassandra.MultigetSlice(withLevel(ctx, cl), keys, parent, p, cl)
}

func (l levelCarrier) MultigetCount(ctx context.Context, keys [][]byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) (map[string]int32, error) {
	return l.Cassandra.MultigetCount(withLevel(ctx, cl), keys, parent, p, cl)
}

func (l levelCarrier) GetRangeSlices(ctx context.Context, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, r *cassandra.KeyRange, cl cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return l.Cassandra.GetRangeSlices(withLevel(ctx, cl), parent, p, r, cl)
}

func (l levelCarrier) GetPagedSlice(ctx context.Context, cf string, r *cassandra.KeyRange, startColumn []byte, cl cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return l.Cassandra.GetPagedSlice(withLevel(ctx, cl), cf, r, startColumn, cl)
}

func (l levelCarrier) GetIndexedSlices(ctx context.Context, parent *cassandra.ColumnParent, clause *cassandra.IndexClause, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return l.Cassandra.GetIndexedSlices(withLevel(ctx, cl), parent, clause, p, cl)
}

func (l levelCarrier) GetMultiSlice(ctx context.Context, req *cassandra.MultiSliceRequest) ([]*cassandra.ColumnOrSuperColumn, error) {
	if req != nil {
		ctx = withLevel(ctx, req.ConsistencyLevel)
	}
	return l.Cassandra.GetMultiSlice(ctx, req)
}

func (l levelCarrier) Insert(ctx context.Context, key []byte, parent *cassandra.ColumnParent, c *cassandra.Column, cl cassandra.ConsistencyLevel) error {
	return l.Cassandra.Insert(withLevel(ctx, cl), key, parent, c, cl)
}

func (l levelCarrier) Add(ctx context.Context, key []byte, parent *cassandra.ColumnParent, c *cassandra.CounterColumn, cl cassandra.ConsistencyLevel) error {
	return l.Cassandra.Add(withLevel(ctx, cl), key, parent, c, cl)
}

// Cas carries both levels: the commit level as the request's, the serial
// level as its Paxos round's (store.WithSerialConsistency).
func (l levelCarrier) Cas(ctx context.Context, key []byte, cf string, expected, updates []*cassandra.Column, serialCL, commitCL cassandra.ConsistencyLevel) (*cassandra.CASResult_, error) {
	ctx = store.WithSerialConsistency(withLevel(ctx, commitCL), storeConsistency(serialCL))
	return l.Cassandra.Cas(ctx, key, cf, expected, updates, serialCL, commitCL)
}

func (l levelCarrier) Remove(ctx context.Context, key []byte, path *cassandra.ColumnPath, ts int64, cl cassandra.ConsistencyLevel) error {
	return l.Cassandra.Remove(withLevel(ctx, cl), key, path, ts, cl)
}

func (l levelCarrier) RemoveCounter(ctx context.Context, key []byte, path *cassandra.ColumnPath, cl cassandra.ConsistencyLevel) error {
	return l.Cassandra.RemoveCounter(withLevel(ctx, cl), key, path, cl)
}

func (l levelCarrier) BatchMutate(ctx context.Context, mutations map[string]map[string][]*cassandra.Mutation, cl cassandra.ConsistencyLevel) error {
	return l.Cassandra.BatchMutate(withLevel(ctx, cl), mutations, cl)
}

func (l levelCarrier) AtomicBatchMutate(ctx context.Context, mutations map[string]map[string][]*cassandra.Mutation, cl cassandra.ConsistencyLevel) error {
	return l.Cassandra.AtomicBatchMutate(withLevel(ctx, cl), mutations, cl)
}

func (l levelCarrier) ExecuteCql3Query(ctx context.Context, query []byte, compression cassandra.Compression, cl cassandra.ConsistencyLevel) (*cassandra.CqlResult_, error) {
	return l.Cassandra.ExecuteCql3Query(withLevel(ctx, cl), query, compression, cl)
}

func (l levelCarrier) ExecutePreparedCql3Query(ctx context.Context, itemID int32, values [][]byte, cl cassandra.ConsistencyLevel) (*cassandra.CqlResult_, error) {
	return l.Cassandra.ExecutePreparedCql3Query(withLevel(ctx, cl), itemID, values, cl)
}
