package legacy

import (
	"context"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
)

// RequestTimeouts bound how long a call may take, as Cassandra's
// *_request_timeout_in_ms: the handler's context gets the deadline, and a
// storage operation that passes it is answered TimedOutException. Zero: no
// limit. Schema changes, truncate and the describe methods have none.
type RequestTimeouts struct {
	// Read bounds the reads of named rows (read_request_timeout_in_ms).
	Read time.Duration
	// Range bounds the range reads (range_request_timeout_in_ms).
	Range time.Duration
	// Write bounds the writes (write_request_timeout_in_ms).
	Write time.Duration
}

// For returns the timeout of a Thrift method (0: none).
func (t RequestTimeouts) For(method string) time.Duration {
	switch method {
	case "get", "get_slice", "get_count", "multiget_slice", "multiget_count", "get_multi_slice":
		return t.Read
	case "get_range_slices", "get_paged_slice", "get_indexed_slices":
		return t.Range
	case "insert", "add", "remove", "remove_counter", "batch_mutate", "atomic_batch_mutate", "cas":
		return t.Write
	}
	return 0
}

// middleware wraps every method of the generated processor: it reports
// the calls to the observer (metrics.go) and puts the method's deadline on
// the handler's context.
func (s *Server) middleware(name string, next thrift.TProcessorFunction) thrift.TProcessorFunction {
	next = s.observed(name, next)
	timeout := s.cfg.RequestTimeouts.For(name)
	if timeout <= 0 {
		return next
	}
	return thrift.WrappedTProcessorFunction{
		Wrapped: func(ctx context.Context, seqID int32, in, out thrift.TProtocol) (bool, thrift.TException) {
			var call *deadlineContext
			var release func()
			if s := SessionFrom(ctx); s != nil && s.calls != nil && s.calls.parent == ctx {
				call, release = s.calls.call(time.Now().Add(timeout))
			} else {
				call, release = withDeadline(ctx, time.Now().Add(timeout))
			}
			ctx = call
			defer release()
			return next.Process(ctx, seqID, in, out)
		},
	}
}

// admit reports whether one more connection may be served, and logs the
// refusal when it may not (at most once a second). Called with s.mu held.
func (s *Server) admit() bool {
	if s.cfg.MaxConnections <= 0 || len(s.conns) < s.cfg.MaxConnections {
		return true
	}
	s.refused++
	if s.cfg.Observer != nil {
		s.cfg.Observer.ConnectionRefused(RefusedMaxConnections)
	}
	if now := time.Now(); now.Sub(s.lastRefusalLog) >= time.Second {
		s.logger.Warn("thrift server: max_connections reached; refusing connections",
			"max_connections", s.cfg.MaxConnections, "refused", s.refused)
		s.lastRefusalLog = now
		s.refused = 0
	}
	return false
}
