package legacy

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// SetKeyspace implements set_keyspace.
func (h *Handler) SetKeyspace(ctx context.Context, keyspace string) error {
	if h.requireLogin(ctx) != nil {
		// Cassandra 3.11 accepts any keyspace before login, as some
		// clients set it before logging in; the calls check it.
		SessionFrom(ctx).SetKeyspace(keyspace)
		return nil
	}
	if _, ok := h.engine.Catalog().Keyspace(keyspace); !ok && systemKeyspaceDef(keyspace) == nil {
		return iref("Keyspace '%s' does not exist", keyspace)
	}
	SessionFrom(ctx).SetKeyspace(keyspace)
	return nil
}

// DescribeClusterName implements describe_cluster_name.
func (h *Handler) DescribeClusterName(context.Context) (string, error) {
	return h.cfg.ClusterName, nil
}

// DescribeVersion implements describe_version.
func (h *Handler) DescribeVersion(context.Context) (string, error) {
	return h.cfg.APIVersion, nil
}

// DescribePartitioner implements describe_partitioner.
func (h *Handler) DescribePartitioner(context.Context) (string, error) {
	return h.engine.Partitioner().Name(), nil
}

// DescribeSnitch implements describe_snitch.
func (h *Handler) DescribeSnitch(context.Context) (string, error) {
	return h.cfg.Snitch, nil
}

// DescribeSchemaVersions implements describe_schema_versions: one
// version, the catalog's, on every node (see schemaVersionEndpoints).
func (h *Handler) DescribeSchemaVersions(ctx context.Context) (map[string][]string, error) {
	return map[string][]string{h.engine.Catalog().Version: h.schemaVersionEndpoints(ctx)}, nil
}

// nodeAddress is this node's address as the ring describes it.
func (h *Handler) nodeAddress() string {
	host := h.cfg.RPCAddress
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		return "127.0.0.1"
	}
	return host
}

// DescribeKeyspace implements describe_keyspace.
func (h *Handler) DescribeKeyspace(ctx context.Context, keyspace string) (*cassandra.KsDef, error) {
	if err := h.requireLogin(ctx); err != nil {
		return nil, err
	}
	ks, ok := h.engine.Catalog().Keyspace(keyspace)
	if !ok {
		if sys := systemKeyspaceDef(keyspace); sys != nil {
			return sys, nil
		}
		return nil, &cassandra.NotFoundException{}
	}
	return keyspaceDefToThrift(ks), nil
}

// DescribeKeyspaces implements describe_keyspaces.
func (h *Handler) DescribeKeyspaces(ctx context.Context) ([]*cassandra.KsDef, error) {
	if err := h.requireLogin(ctx); err != nil {
		return nil, err
	}
	cat := h.engine.Catalog()
	out := []*cassandra.KsDef{}
	for _, sys := range systemKeyspaceDefs {
		out = append(out, systemKeyspaceDef(sys.name))
	}
	for _, name := range cat.KeyspaceNames() {
		ks, _ := cat.Keyspace(name)
		out = append(out, keyspaceDefToThrift(ks))
	}
	return out, nil
}

// schemaVersion answers a schema change: the new schema version.
func (h *Handler) schemaVersion() string {
	return h.engine.Catalog().Version
}

// SystemAddKeyspace implements system_add_keyspace.
func (h *Handler) SystemAddKeyspace(ctx context.Context, ks *cassandra.KsDef) (string, error) {
	if isSystemKeyspace(ks.Name) {
		return "", iref("%s keyspace is not user-modifiable", ks.Name)
	}
	if err := h.authorize(ctx, "", "", ActionCreate); err != nil {
		return "", err
	}
	if other, ok := h.engine.Catalog().KeyspaceFold(ks.Name); ok {
		return "", iref("Keyspace names must be case-insensitively unique (\"%s\" conflicts with \"%s\")", ks.Name, other.Def.Name)
	}
	for _, cf := range ks.CfDefs {
		if cf.Keyspace != ks.Name {
			return "", iref("CfDef (%s) had a keyspace definition that did not match KsDef", cf.Name)
		}
	}
	var tables []store.TableDef
	newKs := &store.Keyspace{Tables: map[string]*store.Table{}}
	for _, cf := range ks.CfDefs {
		def, err := tableDefFromThrift(cf)
		if err != nil {
			return "", err
		}
		if err := checkIndexNames(newKs, def); err != nil {
			return "", err
		}
		newKs.Tables[def.Name] = &store.Table{Def: def}
		tables = append(tables, def)
	}
	def, err := keyspaceDefFromThrift(ks)
	if err != nil {
		return "", err
	}
	if err := h.engine.CreateKeyspace(ctx, def, tables); err != nil {
		return "", h.schemaError(ctx, err)
	}
	return h.schemaVersion(), nil
}

// SystemDropKeyspace implements system_drop_keyspace.
func (h *Handler) SystemDropKeyspace(ctx context.Context, keyspace string) (string, error) {
	if isSystemKeyspace(keyspace) {
		return "", iref("%s keyspace is not user-modifiable", keyspace)
	}
	if err := h.authorize(ctx, keyspace, "", ActionDrop); err != nil {
		return "", err
	}
	if _, ok := h.engine.Catalog().Keyspace(keyspace); !ok {
		return "", iref("Cannot drop non existing keyspace '%s'.", keyspace)
	}
	if err := h.engine.DropKeyspace(ctx, keyspace); err != nil {
		return "", h.schemaError(ctx, err)
	}
	h.revokeAllOn(ctx, keyspace, "")
	return h.schemaVersion(), nil
}

// SystemUpdateKeyspace implements system_update_keyspace; families are
// changed one by one, never here.
func (h *Handler) SystemUpdateKeyspace(ctx context.Context, ks *cassandra.KsDef) (string, error) {
	if isSystemKeyspace(ks.Name) {
		return "", iref("%s keyspace is not user-modifiable", ks.Name)
	}
	if err := h.authorize(ctx, ks.Name, "", ActionAlter); err != nil {
		return "", err
	}
	if _, ok := h.engine.Catalog().Keyspace(ks.Name); !ok {
		return "", iref("Keyspace %s does not exist", ks.Name)
	}
	if len(ks.CfDefs) > 0 {
		return "", ire("Keyspace update must not contain any table definitions.")
	}
	def, err := keyspaceDefFromThrift(ks)
	if err != nil {
		return "", err
	}
	if err := h.engine.UpdateKeyspace(ctx, def); err != nil {
		return "", h.schemaError(ctx, err)
	}
	return h.schemaVersion(), nil
}

// SystemAddColumnFamily implements system_add_column_family. The family
// goes to the keyspace its CfDef names; a session keyspace must be set, as
// Cassandra checks the client's access through it. Cassandra 3.11 checks
// CREATE on the session keyspace only, so a user may add families to a
// keyspace where it has no permission; thriftd also requires CREATE on the
// family's own keyspace (docs/SECURITY.md).
func (h *Handler) SystemAddColumnFamily(ctx context.Context, cf *cassandra.CfDef) (string, error) {
	session, err := sessionKeyspace(ctx)
	if err != nil {
		return "", err
	}
	if err := h.authorize(ctx, session, "", ActionCreate); err != nil {
		return "", err
	}
	if cf.Keyspace != "" && cf.Keyspace != session {
		if err := h.authorize(ctx, cf.Keyspace, "", ActionCreate); err != nil {
			return "", err
		}
	}
	def, err := tableDefFromThrift(cf)
	if err != nil {
		return "", err
	}
	if isSystemKeyspace(def.Keyspace) {
		return "", iref("%s keyspace is not user-modifiable", def.Keyspace)
	}
	ks, ok := h.engine.Catalog().Keyspace(def.Keyspace)
	if !ok {
		return "", iref("Cannot add table '%s' to non existing keyspace '%s'.", def.Name, def.Keyspace)
	}
	if _, exists := ks.Tables[def.Name]; exists {
		return "", iref("Cannot add already existing table \"%s\" to keyspace \"%s\"", def.Name, def.Keyspace)
	}
	if err := checkIndexNames(ks, def); err != nil {
		return "", err
	}
	if err := h.engine.CreateTable(ctx, def); err != nil {
		return "", h.schemaError(ctx, err)
	}
	return h.schemaVersion(), nil
}

// SystemDropColumnFamily implements system_drop_column_family.
func (h *Handler) SystemDropColumnFamily(ctx context.Context, cf string) (string, error) {
	t, err := h.tableAccess(ctx, cf, ActionDrop)
	if err != nil {
		return "", err
	}
	if err := h.engine.DropTable(ctx, t.Def.Keyspace, t.Def.Name); err != nil {
		return "", h.schemaError(ctx, err)
	}
	h.revokeAllOn(ctx, t.Def.Keyspace, t.Def.Name)
	return h.schemaVersion(), nil
}

// SystemUpdateColumnFamily implements system_update_column_family. The
// family's type and comparators cannot change, except to a compatible
// comparator (one that orders and accepts every existing name the same):
// the engine refuses what its stored data could not be read back under
// (store.CheckTableChange), and schemaError gives Cassandra's reasons.
func (h *Handler) SystemUpdateColumnFamily(ctx context.Context, cf *cassandra.CfDef) (string, error) {
	_, ok := h.engine.Catalog().Table(cf.Keyspace, cf.Name)
	if !ok {
		return "", ire("Could not find table definition to modify.")
	}
	if err := h.authorize(ctx, cf.Keyspace, cf.Name, ActionAlter); err != nil {
		return "", err
	}
	def, err := tableDefFromThrift(cf)
	if err != nil {
		return "", err
	}
	ks, _ := h.engine.Catalog().Keyspace(cf.Keyspace)
	if err := checkIndexNames(ks, def); err != nil {
		return "", err
	}
	if _, err := store.NewTable(def); err != nil {
		return "", ire(err.Error())
	}
	if err := h.engine.UpdateTable(ctx, def); err != nil {
		return "", h.schemaError(ctx, err)
	}
	return h.schemaVersion(), nil
}

// schemaError maps a refused schema change. A change the engine failed
// to make for a reason of its own is logged and answered as an internal
// error without the engine's text (the schema methods declare no
// timeout).
func (h *Handler) schemaError(ctx context.Context, err error) error {
	var incompatible *store.IncompatibleChangeError
	switch {
	case errors.As(err, &incompatible):
		return ire(h.incompatibleChangeReason(incompatible))
	case errors.Is(err, store.ErrExists), errors.Is(err, store.ErrNoKeyspace), errors.Is(err, store.ErrNoTable):
		return ire(err.Error())
	}
	var ie *cassandra.InvalidRequestException
	if errors.As(err, &ie) {
		return ie
	}
	var refused *store.CQLRefusedError
	if errors.As(err, &refused) {
		return ire(refused.Message)
	}
	h.log.ErrorContext(ctx, "schema change failed", "err", err)
	h.observeStorageFailure(StorageFailed)
	return errSchemaStorage
}

// incompatibleChangeReason is Cassandra's reason for refusing a family
// update (CFMetaData.validateCompatibility): the column type and the
// counter flag are both part of what it calls the type.
func (h *Handler) incompatibleChangeReason(e *store.IncompatibleChangeError) string {
	switch e.Property {
	case store.PropColumnType, store.PropCounter:
		return "types do not match."
	case store.PropComparator:
		return "comparators do not match or are not compatible."
	case store.PropSubComparator:
		return "subcolumncomparators do not match or are not compatible."
	case store.PropIndexedValidator:
		name := hex.EncodeToString(e.Column)
		if t, ok := h.engine.Catalog().Table(e.Keyspace, e.Table); ok {
			name = t.Comparator.String(e.Column)
		}
		return fmt.Sprintf("Cannot change the validation class of indexed column %s from %s to %s: drop its index first", name, e.Old, e.New)
	}
	return e.Error()
}
