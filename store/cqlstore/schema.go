package cqlstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/supercol"
)

func supercolQuote(name string) string { return supercol.QuoteIdent(name) }

// shapeDoc is the stored layout of a family's CQL table: what the table
// was created as, which later definition changes keep.
type shapeDoc struct {
	Shape   string      `json:"shape"`
	Mixed   bool        `json:"mixed,omitempty"` // a static table with a compact part
	Columns []columnDoc `json:"columns"`
}

type columnDoc struct {
	Name       string `json:"name"`
	Type       string `json:"type"` // marshal type name
	CQLType    string `json:"cql_type"`
	Kind       string `json:"kind"`
	Descending bool   `json:"descending,omitempty"`
	Legacy     []byte `json:"legacy,omitempty"` // the legacy name a named column holds
}

func (e *Engine) createMeta(ctx context.Context) error {
	var n int
	if err := e.session.Query("SELECT COUNT(*) FROM system_schema.tables WHERE keyspace_name = ? AND table_name IN ('keyspaces', 'families', 'schema_lock')", e.opts.MetaKeyspace).ScanContext(ctx, &n); err != nil {
		return wrapErr("read the schema", err)
	}
	if n == 3 {
		return nil
	}
	stmts := []string{
		"CREATE KEYSPACE IF NOT EXISTS " + e.meta + " WITH replication = " + e.opts.MetaReplication,
		"CREATE TABLE IF NOT EXISTS " + e.meta + ".keyspaces (keyspace_name text PRIMARY KEY, def text)",
		"CREATE TABLE IF NOT EXISTS " + e.meta + ".families (keyspace_name text, family_name text, def text, shape text, PRIMARY KEY (keyspace_name, family_name))",
		// The lease of schema changes (schemalock.go).
		"CREATE TABLE IF NOT EXISTS " + e.meta + ".schema_lock (name text PRIMARY KEY, owner text)",
	}
	for _, s := range stmts {
		if err := e.ddl(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// ddl runs a schema statement and waits for the cluster to agree on it.
func (e *Engine) ddl(ctx context.Context, stmt string) error {
	if err := e.session.Query(stmt).ExecContext(ctx); err != nil {
		return wrapErr("schema change", fmt.Errorf("%s: %w", stmt, err))
	}
	if err := e.session.AwaitSchemaAgreement(ctx); err != nil {
		return wrapErr("schema agreement", err)
	}
	return nil
}

// cqlKeyspace is the CQL keyspace that holds a legacy keyspace.
func (e *Engine) cqlKeyspace(name string) string { return e.opts.KeyspacePrefix + name }

// Refresh reloads the catalog from the metadata tables: it shows the
// schema changes of other thriftd instances at once instead of at the
// next periodic reload.
func (e *Engine) Refresh(ctx context.Context) error {
	c, err := e.load(ctx)
	if err != nil {
		return err
	}
	e.catalog.Store(c)
	return nil
}

func (e *Engine) load(ctx context.Context) (*store.Catalog, error) {
	h := sha256.New()
	cat := &store.Catalog{Keyspaces: map[string]*store.Keyspace{}}
	type ksRow struct{ name, def string }
	var kss []ksRow
	iter := e.session.Query("SELECT keyspace_name, def FROM " + e.meta + ".keyspaces").IterContext(ctx)
	var name, def string
	for iter.Scan(&name, &def) {
		if strings.HasPrefix(name, e.opts.KeyspacePrefix) {
			kss = append(kss, ksRow{name, def})
		}
	}
	if err := iter.Close(); err != nil {
		return nil, wrapErr("read the keyspace definitions", err)
	}
	sort.Slice(kss, func(i, j int) bool { return kss[i].name < kss[j].name })
	for _, r := range kss {
		var kd store.KeyspaceDef
		if err := json.Unmarshal([]byte(r.def), &kd); err != nil {
			return nil, fmt.Errorf("cqlstore: keyspace %s: bad definition: %w", r.name, err)
		}
		ks := &store.Keyspace{Def: kd, Tables: map[string]*store.Table{}}
		fmt.Fprintf(h, "ks\x00%s\x00%s\x00", r.name, r.def)
		iter := e.session.Query("SELECT family_name, def, shape FROM "+e.meta+".families WHERE keyspace_name = ?", r.name).IterContext(ctx)
		var fam, fdef, shape string
		for iter.Scan(&fam, &fdef, &shape) {
			fmt.Fprintf(h, "cf\x00%s\x00%s\x00%s\x00", fam, fdef, shape)
			t, err := e.buildTable(r.name, fdef, shape)
			if err != nil {
				iter.Close()
				return nil, err
			}
			ks.Tables[t.Def.Name] = t
		}
		if err := iter.Close(); err != nil {
			return nil, wrapErr("read the family definitions", err)
		}
		cat.Keyspaces[kd.Name] = ks
	}
	sum := h.Sum(nil)
	sum[6] = sum[6]&0x0f | 0x50 // a name-based UUID
	sum[8] = sum[8]&0x3f | 0x80
	cat.Version = fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
	return cat, nil
}

func (e *Engine) buildTable(cqlKS, defJSON, shapeJSON string) (*store.Table, error) {
	var def store.TableDef
	if err := json.Unmarshal([]byte(defJSON), &def); err != nil {
		return nil, fmt.Errorf("cqlstore: family in %s: bad definition: %w", cqlKS, err)
	}
	var sh shapeDoc
	if err := json.Unmarshal([]byte(shapeJSON), &sh); err != nil {
		return nil, fmt.Errorf("cqlstore: family %s.%s: bad shape: %w", cqlKS, def.Name, err)
	}
	t, err := store.NewTable(def)
	if err != nil {
		return nil, err
	}
	info, err := newTableInfo(cqlKS, t, &sh)
	if err != nil {
		return nil, err
	}
	t.Backend = info
	return t, nil
}

// plan derives the compact table of a family, as convert creates it.
func plan(cqlKS string, def *store.TableDef) (*supercol.Mapping, error) {
	f, err := legacyFamily(cqlKS, def)
	if err != nil {
		return nil, err
	}
	m, err := supercol.Plan(f, supercol.Options{Shape: supercol.ShapeCompact})
	if err != nil {
		return nil, fmt.Errorf("cqlstore: %w", err)
	}
	return m, nil
}

// CreateKeyspace implements store.Engine.
func (e *Engine) CreateKeyspace(ctx context.Context, ks store.KeyspaceDef, tables []store.TableDef) error {
	unlock, err := e.lockSchema(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if _, ok := e.Catalog().KeyspaceFold(ks.Name); ok {
		return fmt.Errorf("keyspace %s: %w", ks.Name, store.ErrExists)
	}
	cks := e.cqlKeyspace(ks.Name)
	if err := e.ddl(ctx, "CREATE KEYSPACE IF NOT EXISTS "+quote(cks)+" WITH replication = "+replication(ks)+fmt.Sprintf(" AND durable_writes = %v", ks.DurableWrites)); err != nil {
		return err
	}
	if err := e.putKeyspace(ctx, cks, ks); err != nil {
		return err
	}
	for i := range tables {
		def := tables[i]
		def.Keyspace = ks.Name
		if err := e.createTable(ctx, def); err != nil {
			return err
		}
	}
	return e.Refresh(ctx)
}

func (e *Engine) putKeyspace(ctx context.Context, cks string, ks store.KeyspaceDef) error {
	b, err := json.Marshal(ks)
	if err != nil {
		return err
	}
	return wrapErr("store the keyspace definition", e.session.Query("INSERT INTO "+e.meta+".keyspaces (keyspace_name, def) VALUES (?, ?)", cks, string(b)).ExecContext(ctx))
}

// replication renders a keyspace's strategy as a CQL replication map.
func replication(ks store.KeyspaceDef) string {
	class := ks.StrategyClass
	if class == "" {
		class = "SimpleStrategy"
	}
	opts := map[string]string{}
	for k, v := range ks.StrategyOptions {
		opts[k] = v
	}
	if strings.HasSuffix(class, "SimpleStrategy") && opts["replication_factor"] == "" {
		opts["replication_factor"] = "1"
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := []string{"'class': " + cqlString(class)}
	for _, k := range keys {
		parts = append(parts, cqlString(k)+": "+cqlString(opts[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func cqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// UpdateKeyspace implements store.Engine.
func (e *Engine) UpdateKeyspace(ctx context.Context, ks store.KeyspaceDef) error {
	unlock, err := e.lockSchema(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if _, ok := e.Catalog().Keyspace(ks.Name); !ok {
		return fmt.Errorf("keyspace %s: %w", ks.Name, store.ErrNoKeyspace)
	}
	cks := e.cqlKeyspace(ks.Name)
	if err := e.ddl(ctx, "ALTER KEYSPACE "+quote(cks)+" WITH replication = "+replication(ks)+fmt.Sprintf(" AND durable_writes = %v", ks.DurableWrites)); err != nil {
		return err
	}
	if err := e.putKeyspace(ctx, cks, ks); err != nil {
		return err
	}
	return e.Refresh(ctx)
}

// DropKeyspace implements store.Engine.
func (e *Engine) DropKeyspace(ctx context.Context, name string) error {
	unlock, err := e.lockSchema(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if _, ok := e.Catalog().Keyspace(name); !ok {
		return fmt.Errorf("keyspace %s: %w", name, store.ErrNoKeyspace)
	}
	cks := e.cqlKeyspace(name)
	if err := e.ddl(ctx, "DROP KEYSPACE IF EXISTS "+quote(cks)); err != nil {
		return err
	}
	if err := e.session.Query("DELETE FROM "+e.meta+".families WHERE keyspace_name = ?", cks).ExecContext(ctx); err != nil {
		return wrapErr("drop the family definitions", err)
	}
	if err := e.session.Query("DELETE FROM "+e.meta+".keyspaces WHERE keyspace_name = ?", cks).ExecContext(ctx); err != nil {
		return wrapErr("drop the keyspace definition", err)
	}
	return e.Refresh(ctx)
}

// CreateTable implements store.Engine.
func (e *Engine) CreateTable(ctx context.Context, def store.TableDef) error {
	unlock, err := e.lockSchema(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := e.createTable(ctx, def); err != nil {
		return err
	}
	return e.Refresh(ctx)
}

func (e *Engine) createTable(ctx context.Context, def store.TableDef) error {
	ks, ok := e.Catalog().Keyspace(def.Keyspace)
	if ok {
		for n := range ks.Tables {
			if strings.EqualFold(n, def.Name) {
				return fmt.Errorf("table %s.%s: %w", def.Keyspace, def.Name, store.ErrExists)
			}
		}
	} else if _, err := e.keyspaceDefined(ctx, def.Keyspace); err != nil {
		return err
	}
	if _, err := store.NewTable(def); err != nil {
		return err
	}
	cks := e.cqlKeyspace(def.Keyspace)
	m, err := plan(cks, &def)
	if err != nil {
		return err
	}
	var id [4]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	def.ID = int32(binary.BigEndian.Uint32(id[:]) & 0x7fffffff)
	if err := e.ddl(ctx, m.Table.CreateTableCQL()); err != nil {
		return err
	}
	return e.putTable(ctx, cks, &def, shapeOf(m))
}

// keyspaceDefined checks that a keyspace created in this same schema
// change (not yet in the catalog) has its definition stored.
func (e *Engine) keyspaceDefined(ctx context.Context, name string) (bool, error) {
	var n int
	if err := e.session.Query("SELECT COUNT(*) FROM "+e.meta+".keyspaces WHERE keyspace_name = ?", e.cqlKeyspace(name)).ScanContext(ctx, &n); err != nil {
		return false, wrapErr("read the keyspace definition", err)
	}
	if n == 0 {
		return false, fmt.Errorf("keyspace %s: %w", name, store.ErrNoKeyspace)
	}
	return true, nil
}

func (e *Engine) putTable(ctx context.Context, cks string, def *store.TableDef, sh *shapeDoc) error {
	d, s, err := encodeFamily(def, sh)
	if err != nil {
		return err
	}
	return wrapErr("store the family definition", e.session.Query("INSERT INTO "+e.meta+".families (keyspace_name, family_name, def, shape) VALUES (?, ?, ?, ?)",
		cks, def.Name, d, s).ExecContext(ctx))
}

// UpdateTable implements store.Engine. A compact table keeps its columns:
// a change is accepted when the compact table of the new definition has
// the same primary key (names, types, order) and a value column the old
// one can hold; only the stored definition changes. A converted table
// may also gain declared columns (convertedChange).
func (e *Engine) UpdateTable(ctx context.Context, def store.TableDef) error {
	unlock, err := e.lockSchema(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	old, ok := e.Catalog().Table(def.Keyspace, def.Name)
	if !ok {
		return fmt.Errorf("table %s.%s: %w", def.Keyspace, def.Name, store.ErrNoTable)
	}
	def.ID = old.Def.ID
	next, err := store.NewTable(def)
	if err != nil {
		return err
	}
	if err := store.CheckTableChange(old, next, nil); err != nil {
		return err
	}
	cks := e.cqlKeyspace(def.Keyspace)
	info := old.Backend.(*tableInfo)
	sh := info.shape
	if info.conv != nil {
		var add []columnDoc
		if sh, add, err = convertedChange(cks, &def, info.shape); err != nil {
			return err
		}
		for _, c := range add {
			if err := e.addColumn(ctx, cks, def.Name, info.qname, c); err != nil {
				return err
			}
		}
	} else {
		m, err := plan(cks, &def)
		if err != nil {
			return err
		}
		if err := sameLayout(old, next, info.shape, shapeOf(m)); err != nil {
			return err
		}
	}
	if err := e.putTable(ctx, cks, &def, sh); err != nil {
		return err
	}
	return e.Refresh(ctx)
}

// sameLayout refuses a definition whose compact table differs from the
// existing one in a way the existing table cannot serve: CQL cannot add
// clustering columns, nor (since Cassandra 4.0) change a column's type.
func sameLayout(old, next *store.Table, have, want *shapeDoc) error {
	refuse := func(p store.TableProperty, from, to string) error {
		return &store.IncompatibleChangeError{Keyspace: old.Def.Keyspace, Table: old.Def.Name, Property: p, Old: from, New: to}
	}
	superCols := 0
	if old.Def.Super {
		superCols = len(componentsOf(old.Comparator))
	}
	if len(have.Columns) != len(want.Columns) {
		if !equalTypeNames(old.Comparator, next.Comparator) {
			return refuse(store.PropComparator, old.Comparator.Name(), next.Comparator.Name())
		}
		if old.Def.Super && !equalTypeNames(old.SubComparator, next.SubComparator) {
			return refuse(store.PropSubComparator, old.SubComparator.Name(), next.SubComparator.Name())
		}
		return fmt.Errorf("cqlstore: table %s.%s: the new definition needs other CQL columns than the table has", old.Def.Keyspace, old.Def.Name)
	}
	clust := 0
	for i, h := range have.Columns {
		w := want.Columns[i]
		same := h.Name == w.Name && h.CQLType == w.CQLType && h.Kind == w.Kind && h.Descending == w.Descending
		if same {
			if h.Kind == "clustering" {
				clust++
			}
			continue
		}
		switch {
		case h.Kind == "clustering":
			if old.Def.Super && clust >= superCols {
				return refuse(store.PropSubComparator, old.SubComparator.Name(), next.SubComparator.Name())
			}
			return refuse(store.PropComparator, old.Comparator.Name(), next.Comparator.Name())
		case h.Name == w.Name && h.Kind == w.Kind && h.CQLType == "blob":
			// A blob column holds every value of any type.
		default:
			return &store.CQLRefusedError{Message: fmt.Sprintf("column family %s: its CQL column %s is %s and cannot become %s (CQL cannot change a column's type): declare validators whose values it holds",
				old.Def.Name, h.Name, h.CQLType, w.CQLType)}
		}
	}
	return nil
}

func equalTypeNames(a, b marshal.Type) bool { return a.Name() == b.Name() }

// componentsOf lists the components of a CompositeType, or t.
func componentsOf(t marshal.Type) []marshal.Type {
	if c, ok := t.(*marshal.Composite); ok {
		return c.Components()
	}
	return []marshal.Type{t}
}

// addColumn adds a column to a table unless it has it already (an
// update whose definition was not stored after its ALTER TABLE, tried
// again): 3.11 has no ADD IF NOT EXISTS.
func (e *Engine) addColumn(ctx context.Context, cks, table, qname string, c columnDoc) error {
	var n int
	if err := e.session.Query("SELECT COUNT(*) FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ? AND column_name = ?", cks, table, c.Name).
		ScanContext(ctx, &n); err != nil {
		return wrapErr("read the columns of "+qname, err)
	}
	if n > 0 {
		return nil
	}
	return e.ddl(ctx, "ALTER TABLE "+qname+" ADD "+quote(c.Name)+" "+c.CQLType)
}

// DropTable implements store.Engine.
func (e *Engine) DropTable(ctx context.Context, keyspace, name string) error {
	unlock, err := e.lockSchema(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	t, ok := e.Catalog().Table(keyspace, name)
	if !ok {
		return fmt.Errorf("table %s.%s: %w", keyspace, name, store.ErrNoTable)
	}
	info := t.Backend.(*tableInfo)
	if err := e.ddl(ctx, "DROP TABLE IF EXISTS "+info.qname); err != nil {
		return err
	}
	if err := e.session.Query("DELETE FROM "+e.meta+".families WHERE keyspace_name = ? AND family_name = ?", e.cqlKeyspace(keyspace), name).ExecContext(ctx); err != nil {
		return wrapErr("drop the family definition", err)
	}
	return e.Refresh(ctx)
}

// Truncate implements store.Engine.
func (e *Engine) Truncate(ctx context.Context, keyspace, name string) error {
	t, ok := e.Catalog().Table(keyspace, name)
	if !ok {
		return fmt.Errorf("table %s.%s: %w", keyspace, name, store.ErrNoTable)
	}
	return wrapErr("truncate", e.session.Query("TRUNCATE "+t.Backend.(*tableInfo).qname).ExecContext(ctx))
}
