package cqlusers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/auth"
	"github.com/thriftbridge/thriftbridge/internal/cqlconn"
)

// Table is the table of the metadata keyspace that holds the users.
const Table = "thriftd_users"

// maxUpdateTries bounds the read-modify-write attempts of an Update that
// other writers keep beating.
const maxUpdateTries = 20

// ErrContended is the error of an Update that lost to other writers
// maxUpdateTries times in a row.
var ErrContended = errors.New("the users were changed by others on every attempt")

// Store is the users row of a cluster.
type Store struct {
	session *gocql.Session
	table   string // keyspace.table, quoted
	where   string
}

// Open returns the users store of the metadata keyspace meta, creating
// the keyspace (with replication, a CQL map, when it is missing) and the
// table if needed, and waiting for the cluster to agree on them. The
// session stays the caller's.
func Open(ctx context.Context, session *gocql.Session, meta, replication string) (*Store, error) {
	if meta == "" {
		return nil, errors.New("users store: no metadata keyspace")
	}
	if replication == "" {
		replication = "{'class': 'SimpleStrategy', 'replication_factor': 1}"
	}
	ks := `"` + strings.ReplaceAll(meta, `"`, `""`) + `"`
	s := &Store{session: session, table: ks + "." + Table, where: "in the cluster, " + meta + "." + Table}
	var n int
	if err := session.Query("SELECT COUNT(*) FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?", meta, Table).ScanContext(ctx, &n); err != nil {
		return nil, fmt.Errorf("users store: read the schema: %w", err)
	}
	if n == 1 {
		return s, nil
	}
	for _, stmt := range []string{
		"CREATE KEYSPACE IF NOT EXISTS " + ks + " WITH replication = " + replication,
		"CREATE TABLE IF NOT EXISTS " + s.table + " (id int PRIMARY KEY, doc text, version bigint)",
	} {
		if err := session.Query(stmt).ExecContext(ctx); err != nil {
			return nil, fmt.Errorf("users store: %s: %w", stmt, err)
		}
		if err := session.AwaitSchemaAgreement(ctx); err != nil {
			return nil, fmt.Errorf("users store: schema agreement: %w", err)
		}
	}
	return s, nil
}

func (s *Store) String() string { return s.where }

// Stamp is the row's version: one read of one bigint.
func (s *Store) Stamp(ctx context.Context) (string, error) {
	var version int64
	err := s.session.Query("SELECT version FROM "+s.table+" WHERE id = 0").ScanContext(ctx, &version)
	if errors.Is(err, gocql.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("users %s: %w", s.where, err)
	}
	return strconv.FormatInt(version, 10), nil
}

// Load reads the document.
func (s *Store) Load(ctx context.Context) (*auth.Users, string, error) {
	u, version, found, err := s.load(ctx)
	if err != nil || !found {
		return u, "", err
	}
	return u, strconv.FormatInt(version, 10), nil
}

func (s *Store) load(ctx context.Context) (*auth.Users, int64, bool, error) {
	var doc string
	var version int64
	err := s.session.Query("SELECT doc, version FROM "+s.table+" WHERE id = 0").ScanContext(ctx, &doc, &version)
	if errors.Is(err, gocql.ErrNotFound) {
		return auth.NewUsers(), 0, false, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("users %s: %w", s.where, err)
	}
	u, err := auth.ParseUsers([]byte(doc), s.where)
	return u, version, true, err
}

// Update reads the row, applies change and writes the row back if its
// version is still the one read; if another writer came first, it starts
// again from the new row, up to maxUpdateTries times.
func (s *Store) Update(ctx context.Context, change func(*auth.Users) (bool, error)) error {
	for range maxUpdateTries {
		users, version, found, err := s.load(ctx)
		if err != nil {
			return err
		}
		changed, err := change(users)
		if err != nil || !changed {
			return err
		}
		doc, err := users.Marshal()
		if err != nil {
			return err
		}
		var q *gocql.Query
		if found {
			q = s.session.Query("UPDATE "+s.table+" SET doc = ?, version = ? WHERE id = 0 IF version = ?", string(doc), version+1, version)
		} else {
			q = s.session.Query("INSERT INTO "+s.table+" (id, doc, version) VALUES (0, ?, 1) IF NOT EXISTS", string(doc))
		}
		applied, err := q.MapScanCASContext(ctx, map[string]any{})
		if err != nil && cqlconn.CASOutcomeUnknown(err) {
			// Paxos contention or a slow replica: the write may or may not
			// have been made; the row says which.
			applied, err = s.holds(ctx, string(doc), version+1)
		}
		if err != nil {
			return fmt.Errorf("write users %s: %w", s.where, err)
		}
		if applied {
			return nil
		}
	}
	return fmt.Errorf("write users %s: %w", s.where, ErrContended)
}

// holds reports whether the row is doc at version, read serially so that
// an unfinished transaction is finished first.
func (s *Store) holds(ctx context.Context, doc string, version int64) (bool, error) {
	var got string
	var gotVersion int64
	err := s.session.Query("SELECT doc, version FROM "+s.table+" WHERE id = 0").Consistency(gocql.Serial).ScanContext(ctx, &got, &gotVersion)
	if errors.Is(err, gocql.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return got == doc && gotVersion == version, nil
}

var _ auth.Store = (*Store)(nil)
