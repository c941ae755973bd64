package legacy

import (
	"context"
	"errors"
	"fmt"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// ire is an InvalidRequestException with Cassandra's reason text.
func ire(why string) *cassandra.InvalidRequestException {
	return &cassandra.InvalidRequestException{Why: why}
}

func iref(format string, args ...any) *cassandra.InvalidRequestException {
	return ire(fmt.Sprintf(format, args...))
}

// storageError maps an engine failure to what a client sees: a batch too
// large for one transaction, or a CQL statement the cluster refused
// (store.CQLRefusedError, with the cluster's reason), is the client's to
// fix; too few live replicas for the request's consistency level
// (store.ErrUnavailable) is UnavailableException, as in Cassandra: nothing
// was tried, and the client may retry at a lower level; anything else on
// the data path is answered TimedOutException, as Cassandra 3.11 answers a
// request that timed out or that a replica failed (Thrift has no failure
// exception): a cancelled request, a write the engine gave up on
// (store.ErrTimeout) and any unexpected storage failure. The client never
// sees the engine's or the storage library's text; unexpected failures are
// logged with it.
func (h *Handler) storageError(ctx context.Context, op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrBatchTooLarge):
		return iref("%s: the mutation is too large to apply atomically; split it into smaller batches", op)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &cassandra.TimedOutException{}
	case errors.Is(err, store.ErrTimeout):
		h.log.WarnContext(ctx, "storage operation timed out", "op", op, "err", err)
		h.observeStorageFailure(StorageTimedOut)
		return &cassandra.TimedOutException{}
	case errors.Is(err, store.ErrUnavailable):
		h.log.WarnContext(ctx, "too few replicas alive for the consistency level", "op", op,
			"consistency", store.ConsistencyFrom(ctx).String(), "err", err)
		return &cassandra.UnavailableException{}
	}
	var ie *cassandra.InvalidRequestException
	if errors.As(err, &ie) {
		return ie
	}
	var refused *store.CQLRefusedError
	if errors.As(err, &refused) {
		return ire(refused.Message)
	}
	h.log.ErrorContext(ctx, "storage failure", "op", op, "err", err)
	h.observeStorageFailure(StorageFailed)
	return &cassandra.TimedOutException{}
}

// errSchemaStorage is what a client sees of a schema change the engine
// failed to make for a reason of its own (logged by schemaError): the
// schema methods declare no timeout, so it is an internal error, without
// the engine's text.
var errSchemaStorage = errors.New("the schema change could not be stored; see the server log")
