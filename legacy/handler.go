package legacy

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// HandlerConfig holds what the API reports about this node.
type HandlerConfig struct {
	ClusterName string
	// APIVersion is what describe_version answers.
	APIVersion string
	// Snitch is the class name describe_snitch answers.
	Snitch string
	// RPCAddress is this node's client address, as describe_ring shows it.
	RPCAddress string
	// InitialToken is the node's token (partitioner string form); empty: the
	// partitioner's minimum.
	InitialToken string
	// Ring is where a cluster backend's ring sends clients (ring.go).
	Ring RingConfig
	// Now is the clock for server-side timestamps (tests set it).
	Now func() time.Time
	// Auth checks logins; nil accepts every login and requires none
	// (Cassandra's AllowAllAuthenticator).
	Auth Authenticator
	// StorageObserver, when set, is told of the engine's failures, for
	// metrics (see metrics.go).
	StorageObserver StorageObserver
}

// Handler answers the Cassandra Thrift API over a storage engine. One
// Handler serves every connection; per-connection state lives in the
// Session carried by the request context.
type Handler struct {
	Unsupported
	engine store.Engine
	cfg    HandlerConfig
	log    *slog.Logger
	// cql holds the statements prepared through prepare_cql3_query.
	cql preparedStatements
	// freeOps keeps the operation arrays of batch_mutate for reuse
	// (write.go).
	freeOps chan []store.Op
	// freeResults keeps the results of the reads answered on the wire
	// for reuse (wire_replies.go).
	freeResults chan *store.SliceResult
	// rowWrites keeps the batches of single-column writes (applyRow),
	// getCalls the calls of gets answered on the wire (getWire).
	rowWrites, getCalls sync.Pool
}

var _ cassandra.Cassandra = (*Handler)(nil)

// NewHandler returns a handler serving engine.
func NewHandler(engine store.Engine, cfg HandlerConfig, logger *slog.Logger) *Handler {
	if cfg.ClusterName == "" {
		cfg.ClusterName = "Test Cluster"
	}
	if cfg.APIVersion == "" {
		cfg.APIVersion = cassandra.VERSION
	}
	if cfg.Snitch == "" {
		cfg.Snitch = "org.apache.cassandra.locator.SimpleSnitch"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Handler{engine: engine, cfg: cfg, log: logger, freeOps: make(chan []store.Op, freeOpArrays),
		freeResults: make(chan *store.SliceResult, freeResults)}
}

// timestampMicros is a server-side timestamp in microseconds, as Cassandra
// assigns to counter operations.
func (h *Handler) timestampMicros() int64 {
	return h.cfg.Now().UnixMicro()
}

// sessionKeyspace returns the keyspace the session has set, or Cassandra's
// error when there is none.
func sessionKeyspace(ctx context.Context) (string, error) {
	s := SessionFrom(ctx)
	if s == nil || s.Keyspace() == "" {
		return "", ire("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
	}
	return s.Keyspace(), nil
}

// table resolves a family of the session's keyspace with Cassandra's
// checks and messages, in Cassandra's order.
func (h *Handler) table(ctx context.Context, cf string) (*store.Table, error) {
	ks, err := sessionKeyspace(ctx)
	if err != nil {
		return nil, err
	}
	return h.tableIn(ks, cf)
}

func (h *Handler) tableIn(ks, cf string) (*store.Table, error) {
	cat := h.engine.Catalog()
	keyspace, ok := cat.Keyspace(ks)
	if !ok && systemKeyspaceDef(ks) == nil {
		return nil, iref("Keyspace %s does not exist", ks)
	}
	if cf == "" {
		return nil, ire("non-empty table is required")
	}
	if !ok {
		return nil, iref("unconfigured table %s", cf)
	}
	t, ok := keyspace.Tables[cf]
	if !ok {
		return nil, iref("unconfigured table %s", cf)
	}
	return t, nil
}

// tableFor resolves a family, checks the session may do actions on it
// and that the operation suits it:
// counter operations need a counter family and the others refuse one.
func (h *Handler) tableFor(ctx context.Context, cf string, counterOp bool, actions ...Action) (*store.Table, error) {
	t, err := h.tableAccess(ctx, cf, actions...)
	if err != nil {
		return nil, err
	}
	if err := checkCommutative(t, counterOp); err != nil {
		return nil, err
	}
	return t, nil
}

func checkCommutative(t *store.Table, counterOp bool) error {
	if counterOp && !t.Counter {
		return iref("invalid operation for non commutative table %s", t.Def.Name)
	}
	if !counterOp && t.Counter {
		return iref("invalid operation for commutative table %s", t.Def.Name)
	}
	return nil
}
