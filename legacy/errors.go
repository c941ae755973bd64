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
// large for one transaction is the client's to fix; a cancelled request
// timed out; anything else is a server fault, returned as is (the
// processor reports it as an internal error) after being logged.
func (h *Handler) storageError(ctx context.Context, op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrBatchTooLarge):
		return iref("%s: the mutation is too large to apply atomically; split it into smaller batches", op)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &cassandra.TimedOutException{}
	}
	var ie *cassandra.InvalidRequestException
	if errors.As(err, &ie) {
		return ie
	}
	h.log.ErrorContext(ctx, "storage failure", "op", op, "err", err)
	return fmt.Errorf("%s: %w", op, err)
}
