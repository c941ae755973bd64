package daemon

// Request timeouts by default: Cassandra's.
const (
	DefaultReadRequestTimeoutMS  = 5000
	DefaultRangeRequestTimeoutMS = 10000
	DefaultWriteRequestTimeoutMS = 2000
)
