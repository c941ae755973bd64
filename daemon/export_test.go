package daemon

import "github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"

// WithHandlerWrapper makes the server call wrap(handler) instead of the
// handler: the test-only seam through which a test injects a failure.
func WithHandlerWrapper(wrap func(cassandra.Cassandra) cassandra.Cassandra) Option {
	return func(o *options) { o.wrapHandler = wrap }
}
