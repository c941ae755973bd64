package legacy

import (
	"context"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Observer is told what the server does, for its metrics: the calls of
// each method, the connections, the bytes of the frames. Its methods are
// called on the serving path, concurrently: they must be cheap and never
// block. A server without one (ServerConfig.Observer nil) calls nothing.
type Observer interface {
	// Method is called once for each method of the IDL when the server is
	// made; the server then reports every call of that method to the
	// MethodObserver it returns, so that whatever the observer needs per
	// method is found then, not on each call.
	Method(name string) MethodObserver
	// UnknownMethod reports a call of a method the IDL does not have,
	// answered with a TApplicationException (UNKNOWN_METHOD).
	UnknownMethod()

	// ConnectionOpened reports a connection admitted for serving;
	// ConnectionClosed reports its end.
	ConnectionOpened()
	ConnectionClosed()
	// ConnectionRefused reports a connection closed without being
	// served, or, for RefusedTLSHandshake, after a failed handshake.
	ConnectionRefused(reason Refusal)

	// BytesReceived reports a whole request frame read, length prefix
	// included; BytesSent a reply frame written.
	BytesReceived(n int)
	BytesSent(n int)
}

// MethodObserver receives the calls of one method.
type MethodObserver interface {
	// Call reports one call: how long the processor took to read, answer
	// and write it, and the exception it was answered with.
	Call(elapsed time.Duration, outcome Outcome)
}

// Outcome is how a call was answered: a normal reply or one of the
// exceptions of the IDL, or a TApplicationException.
type Outcome uint8

// The outcomes of a call.
const (
	Answered Outcome = iota
	InvalidRequest
	NotFound
	TimedOut
	Unavailable
	AuthenticationFailed
	AuthorizationFailed
	SchemaDisagreement
	// ApplicationError is a TApplicationException: unreadable arguments,
	// a panic or an unexpected error of the handler (INTERNAL_ERROR).
	ApplicationError

	// NumOutcomes is the number of outcomes, for tables indexed by them.
	NumOutcomes = int(ApplicationError) + 1
)

// outcomeExceptions are the Thrift names of the outcomes' exceptions.
var outcomeExceptions = [NumOutcomes]string{
	Answered:             "",
	InvalidRequest:       "InvalidRequestException",
	NotFound:             "NotFoundException",
	TimedOut:             "TimedOutException",
	Unavailable:          "UnavailableException",
	AuthenticationFailed: "AuthenticationException",
	AuthorizationFailed:  "AuthorizationException",
	SchemaDisagreement:   "SchemaDisagreementException",
	ApplicationError:     "TApplicationException",
}

// Exception is the Thrift name of the exception a call was answered with,
// "" for a normal reply.
func (o Outcome) Exception() string { return outcomeExceptions[o] }

// outcomeOf classifies what a processor function returned. The generated
// processor sends an exception of the IDL as a result only when the
// handler returns it as is (not wrapped), and answers anything else with a
// TApplicationException, so the exception's own type is what the client
// saw.
func outcomeOf(err thrift.TException) Outcome {
	switch err.(type) {
	case nil:
		return Answered
	case *cassandra.InvalidRequestException:
		return InvalidRequest
	case *cassandra.NotFoundException:
		return NotFound
	case *cassandra.TimedOutException:
		return TimedOut
	case *cassandra.UnavailableException:
		return Unavailable
	case *cassandra.AuthenticationException:
		return AuthenticationFailed
	case *cassandra.AuthorizationException:
		return AuthorizationFailed
	case *cassandra.SchemaDisagreementException:
		return SchemaDisagreement
	}
	return ApplicationError
}

// Refusal is why a connection was not served.
type Refusal string

// Why connections are refused.
const (
	// RefusedMaxConnections: max_connections were being served.
	RefusedMaxConnections Refusal = "max_connections"
	// RefusedShuttingDown: the server was stopping.
	RefusedShuttingDown Refusal = "shutting_down"
	// RefusedTLSHandshake: the TLS handshake failed (a plaintext client,
	// a missing or untrusted client certificate).
	RefusedTLSHandshake Refusal = "tls_handshake"
)

// Refusals lists every Refusal, for observers that prepare their series.
var Refusals = []Refusal{RefusedMaxConnections, RefusedShuttingDown, RefusedTLSHandshake}

// observed wraps a processor function so that its calls are reported to
// the server's observer, if it has one.
func (s *Server) observed(name string, next thrift.TProcessorFunction) thrift.TProcessorFunction {
	if s.cfg.Observer == nil {
		return next
	}
	m := s.cfg.Observer.Method(name)
	return thrift.WrappedTProcessorFunction{
		Wrapped: func(ctx context.Context, seqID int32, in, out thrift.TProtocol) (ok bool, err thrift.TException) {
			start := time.Now()
			returned := false
			defer func() {
				outcome := outcomeOf(err)
				if !returned {
					// A panic: serverConn answers it with an internal
					// error.
					outcome = ApplicationError
				}
				m.Call(time.Since(start), outcome)
			}()
			ok, err = next.Process(ctx, seqID, in, out)
			returned = true
			return ok, err
		},
	}
}

// observeUnknownMethod reports a request the processor refused without
// calling a method: one of a name the IDL does not have. Called after
// such a refusal only, off the path of answered calls.
func (s *Server) observeUnknownMethod(name string) {
	if s.cfg.Observer == nil {
		return
	}
	if _, known := s.processor.ProcessorMap()[name]; !known {
		s.cfg.Observer.UnknownMethod()
	}
}

// Accepting reports whether the server takes new connections: it
// listens and is not stopping.
func (s *Server) Accepting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listener != nil && !s.closing.Load()
}

// StorageFailure is what kind of engine failure a request met.
type StorageFailure string

// The kinds of storage failure.
const (
	// StorageTimedOut: the engine gave up on the operation
	// (store.ErrTimeout).
	StorageTimedOut StorageFailure = "timeout"
	// StorageFailed: any other failure of the engine, logged with its
	// text.
	StorageFailed StorageFailure = "failure"
)

// StorageFailures lists every StorageFailure.
var StorageFailures = []StorageFailure{StorageTimedOut, StorageFailed}

// StorageObserver is told of the engine failures the handler answers for
// (a request's own errors, its timeout or cancellation are not engine
// failures). It must be cheap and safe for concurrent use.
type StorageObserver interface {
	StorageFailure(kind StorageFailure)
}

// observeStorageFailure reports an engine failure to the handler's
// observer, if it has one.
func (h *Handler) observeStorageFailure(kind StorageFailure) {
	if h.cfg.StorageObserver != nil {
		h.cfg.StorageObserver.StorageFailure(kind)
	}
}
