package cqlstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/internal/cqlconn"
	"github.com/thriftbridge/thriftbridge/store"
)

// Schema changes of every instance are serialised by a lease in the
// metadata keyspace: a row written with a lightweight transaction (INSERT
// ... IF NOT EXISTS) and a TTL, deleted by its owner when the change is
// done. Under it, an instance reads the catalog afresh before it checks
// and makes its change, so two instances creating one family at once give
// one family and one "already exists", where two Cassandra coordinators
// could each create a table of the same name with its own id (a schema
// disagreement that needed a restart to heal). A lease whose owner died
// ends with its TTL.

const (
	// schemaLeaseTTL bounds how long a dead instance's lease blocks schema
	// changes; a change takes seconds (schema agreement included).
	schemaLeaseTTL = 60 * time.Second
	// schemaLockWait is how long a change waits for another instance's.
	schemaLockWait = 2 * schemaLeaseTTL
)

// lockSchema takes this instance's schema mutex and the cluster's schema
// lease, then reloads the catalog; unlock releases both.
func (e *Engine) lockSchema(ctx context.Context) (unlock func(), err error) {
	e.schemaMu.Lock()
	release, err := e.takeSchemaLease(ctx)
	if err != nil {
		e.schemaMu.Unlock()
		return nil, err
	}
	unlock = func() {
		release()
		e.schemaMu.Unlock()
	}
	if err := e.Refresh(ctx); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// takeSchemaLease waits for the schema lease, up to schemaLockWait.
func (e *Engine) takeSchemaLease(ctx context.Context) (release func(), err error) {
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	owner := hex.EncodeToString(id[:])
	deadline := time.Now().Add(schemaLockWait)
	pause := 20 * time.Millisecond
	for {
		held := map[string]any{}
		applied, err := e.session.Query("INSERT INTO "+e.meta+".schema_lock (name, owner) VALUES ('schema', ?) IF NOT EXISTS USING TTL ?",
			owner, int(schemaLeaseTTL/time.Second)).SerialConsistency(gocql.Serial).MapScanCASContext(ctx, held)
		if err != nil && cqlconn.CASOutcomeUnknown(err) {
			applied, err = e.ownsSchemaLease(ctx, owner)
		}
		if err != nil {
			return nil, wrapErr("take the schema lease", err)
		}
		if applied {
			return func() { e.dropSchemaLease(ctx, owner) }, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: another thriftd instance (lease %v) has been changing the schema for over %s", store.ErrTimeout, held["owner"], schemaLockWait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// ownsSchemaLease reads the lease serially (finishing an interrupted
// transaction) and reports whether owner holds it.
func (e *Engine) ownsSchemaLease(ctx context.Context, owner string) (bool, error) {
	var got string
	err := e.session.Query("SELECT owner FROM "+e.meta+".schema_lock WHERE name = 'schema'").Consistency(gocql.Serial).ScanContext(ctx, &got)
	if errors.Is(err, gocql.ErrNotFound) {
		return false, nil
	}
	return got == owner, err
}

// dropSchemaLease deletes owner's lease; one it cannot delete ends with
// its TTL.
func (e *Engine) dropSchemaLease(ctx context.Context, owner string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err := e.session.Query("DELETE FROM "+e.meta+".schema_lock WHERE name = 'schema' IF owner = ?", owner).
		SerialConsistency(gocql.Serial).MapScanCASContext(ctx, map[string]any{})
	if err != nil {
		e.log.Warn("cqlstore: the schema lease stays until its TTL ends", "ttl", schemaLeaseTTL, "err", err)
	}
}
