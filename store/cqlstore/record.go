package cqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// DefaultMetaKeyspace is the metadata keyspace thriftd reads its catalog
// from unless told otherwise (Options.MetaKeyspace).
const DefaultMetaKeyspace = "thriftbridge_meta"

// FamilyRecord is what the catalog keeps of one family: its legacy
// definition and the table it was converted to (any shape).
type FamilyRecord struct {
	Def     store.TableDef
	Mapping *supercol.Mapping
}

// shapeOf is the stored layout of a mapping's table: every column with its
// type and kind, and for a named column of a pivot or static table the
// legacy name it holds.
func shapeOf(m *supercol.Mapping) *shapeDoc {
	sh := &shapeDoc{Shape: string(m.Table.Shape), Mixed: m.Mixed()}
	legacy := map[int][]byte{}
	for _, n := range m.NamedColumns() {
		legacy[n.Column] = n.Name
	}
	for i, c := range m.Table.Columns {
		sh.Columns = append(sh.Columns, columnDoc{Name: c.Name, Type: c.Type.Name(), CQLType: c.Type.CQLType(), Kind: c.Kind.String(), Descending: c.Descending, Legacy: legacy[i]})
	}
	return sh
}

// encodeFamily is the one encoding of a family's catalog row: the legacy
// definition and the shape, both JSON.
func encodeFamily(def *store.TableDef, sh *shapeDoc) (defJSON, shapeJSON string, err error) {
	d, err := json.Marshal(def)
	if err != nil {
		return "", "", fmt.Errorf("encode the definition of %s: %w", def.Name, err)
	}
	s, err := json.Marshal(sh)
	if err != nil {
		return "", "", fmt.Errorf("encode the shape of %s: %w", def.Name, err)
	}
	return string(d), string(s), nil
}

// LegacyTableDef is the store definition of a legacy family as a convert
// source describes it (supercol.FamilyDef: types, declared columns and
// their KEYS indexes, aliases, default TTL). The family id is derived from
// the CQL keyspace and family names, so that a conversion run twice
// records the same definition.
func LegacyTableDef(cqlKeyspace, keyspace string, fd supercol.FamilyDef) (store.TableDef, error) {
	def := store.TableDef{
		Keyspace:         keyspace,
		Name:             fd.Name,
		Super:            fd.Super,
		Comparator:       orBytes(fd.Comparator),
		DefaultValidator: orBytes(fd.DefaultValidator),
		KeyValidator:     orBytes(fd.KeyValidator),
	}
	if fd.Super {
		def.SubComparator = orBytes(fd.SubComparator)
	}
	// Every source names the types its own way (short or qualified names,
	// DateType or TimestampType): the definition keeps Cassandra 3.11's
	// names, so that one keyspace is recorded alike from every source.
	for _, p := range []*string{&def.Comparator, &def.SubComparator, &def.DefaultValidator, &def.KeyValidator} {
		if *p == "" {
			continue
		}
		t, err := marshal.Parse(*p)
		if err != nil {
			return def, fmt.Errorf("family %s.%s: %w", keyspace, fd.Name, err)
		}
		*p = t.Name()
	}
	if fd.KeyAlias != "" {
		def.KeyAlias = []byte(fd.KeyAlias)
	}
	for _, a := range fd.ColumnAliases {
		def.ColumnAliases = append(def.ColumnAliases, []byte(a))
	}
	if fd.ValueAlias != "" {
		def.ValueAlias = []byte(fd.ValueAlias)
	}
	if fd.DefaultTTL > 0 {
		ttl := fd.DefaultTTL
		def.DefaultTimeToLive = &ttl
	}
	nameTypeName := def.Comparator
	if fd.Super {
		nameTypeName = def.SubComparator
	}
	nameType, err := marshal.Parse(nameTypeName)
	if err != nil {
		return def, fmt.Errorf("family %s.%s: %w", keyspace, fd.Name, err)
	}
	for _, c := range fd.Columns {
		name, err := nameType.FromString(c.Name)
		if err != nil {
			return def, fmt.Errorf("family %s.%s: column %q: %w", keyspace, fd.Name, c.Name, err)
		}
		v, err := marshal.Parse(orBytes(c.Validator))
		if err != nil {
			return def, fmt.Errorf("family %s.%s: column %q: %w", keyspace, fd.Name, c.Name, err)
		}
		cd := store.ColumnDef{Name: name, Validator: v.Name()}
		if c.IndexName != "" {
			keys, ixName := int32(0), c.IndexName // KEYS
			cd.IndexType, cd.IndexName = &keys, &ixName
		}
		def.Columns = append(def.Columns, cd)
	}
	h := fnv.New32a()
	h.Write([]byte(cqlKeyspace + "\x00" + fd.Name))
	def.ID = int32(h.Sum32() & 0x7fffffff)
	if _, err := store.NewTable(def); err != nil {
		return def, fmt.Errorf("family %s.%s: %w", keyspace, fd.Name, err)
	}
	return def, nil
}

func orBytes(t string) string {
	if t == "" {
		return "BytesType"
	}
	return t
}

// LegacyKeyspaceDef is the store definition of a keyspace named name
// whose CQL replication map is replication (a CQL map literal such as
// {'class': 'SimpleStrategy', 'replication_factor': '1'}).
func LegacyKeyspaceDef(name, replication string) (store.KeyspaceDef, error) {
	ks := store.KeyspaceDef{Name: name, DurableWrites: true, StrategyOptions: map[string]string{}}
	body := strings.TrimSpace(replication)
	if !strings.HasPrefix(body, "{") || !strings.HasSuffix(body, "}") {
		return ks, fmt.Errorf("replication %q is not a CQL map", replication)
	}
	body = strings.TrimSpace(body[1 : len(body)-1])
	for _, entry := range strings.Split(body, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, v, ok := strings.Cut(entry, ":")
		if !ok {
			return ks, fmt.Errorf("replication %q: entry %q has no value", replication, entry)
		}
		k, v = unquoteLiteral(k), unquoteLiteral(v)
		if k == "class" {
			if !strings.Contains(v, ".") {
				v = "org.apache.cassandra.locator." + v
			}
			ks.StrategyClass = v
			continue
		}
		ks.StrategyOptions[k] = v
	}
	if ks.StrategyClass == "" {
		return ks, fmt.Errorf("replication %q has no class", replication)
	}
	return ks, nil
}

func unquoteLiteral(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	return strings.ReplaceAll(s, "''", "'")
}

// MetaSchemaCQL creates the metadata keyspace and its tables, idempotently.
func MetaSchemaCQL(metaKeyspace, replication string) []string {
	meta := quote(metaKeyspace)
	return []string{
		"CREATE KEYSPACE IF NOT EXISTS " + meta + " WITH replication = " + replication,
		"CREATE TABLE IF NOT EXISTS " + meta + ".keyspaces (keyspace_name text PRIMARY KEY, def text)",
		"CREATE TABLE IF NOT EXISTS " + meta + ".families (keyspace_name text, family_name text, def text, shape text, PRIMARY KEY (keyspace_name, family_name))",
	}
}

// metaRow is one INSERT into the metadata tables.
type metaRow struct {
	cql  string
	args []string
}

func metaRows(metaKeyspace, cqlKeyspace string, ks store.KeyspaceDef, fams []FamilyRecord) ([]metaRow, error) {
	meta := quote(metaKeyspace)
	kd, err := json.Marshal(ks)
	if err != nil {
		return nil, fmt.Errorf("encode the definition of keyspace %s: %w", ks.Name, err)
	}
	sorted := append([]FamilyRecord(nil), fams...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Def.Name < sorted[j].Def.Name })
	rows := make([]metaRow, 0, len(fams)+1)
	for _, f := range sorted {
		def := f.Def
		def.Keyspace = ks.Name
		d, s, err := encodeFamily(&def, shapeOf(f.Mapping))
		if err != nil {
			return nil, err
		}
		rows = append(rows, metaRow{"INSERT INTO " + meta + ".families (keyspace_name, family_name, def, shape) VALUES (?, ?, ?, ?)", []string{cqlKeyspace, def.Name, d, s}})
	}
	// The keyspace last: thriftd lists a keyspace by its row, and finds
	// every family with it.
	rows = append(rows, metaRow{"INSERT INTO " + meta + ".keyspaces (keyspace_name, def) VALUES (?, ?)", []string{cqlKeyspace, string(kd)}})
	return rows, nil
}

// MetadataCQL is RecordKeyspace as CQL statements with their values
// inline (for a cqlsh script): the metadata keyspace and tables, then one
// INSERT per family and one for the keyspace.
func MetadataCQL(metaKeyspace, metaReplication, cqlKeyspace string, ks store.KeyspaceDef, fams []FamilyRecord) ([]string, error) {
	rows, err := metaRows(metaKeyspace, cqlKeyspace, ks, fams)
	if err != nil {
		return nil, err
	}
	out := MetaSchemaCQL(metaKeyspace, metaReplication)
	for _, r := range rows {
		text := r.cql
		for _, a := range r.args {
			text = strings.Replace(text, "?", cqlString(a), 1)
		}
		out = append(out, text)
	}
	return out, nil
}

// RecordKeyspace writes the catalog rows of a converted keyspace into the
// metadata keyspace (creating it with metaReplication if needed): the
// keyspace definition ks, stored under its CQL keyspace cqlKeyspace, and
// each family's legacy definition and shape, in exactly the form thriftd's
// cluster backend reads. thriftd serves the keyspace under ks.Name once
// its prefix (Options.KeyspacePrefix) is a prefix of cqlKeyspace.
func RecordKeyspace(ctx context.Context, session *gocql.Session, metaKeyspace, metaReplication, cqlKeyspace string, ks store.KeyspaceDef, fams []FamilyRecord) error {
	for _, s := range MetaSchemaCQL(metaKeyspace, metaReplication) {
		if err := session.Query(s).ExecContext(ctx); err != nil {
			return fmt.Errorf("create the metadata keyspace: %s: %w", s, err)
		}
		if err := session.AwaitSchemaAgreement(ctx); err != nil {
			return fmt.Errorf("create the metadata keyspace: schema agreement: %w", err)
		}
	}
	rows, err := metaRows(metaKeyspace, cqlKeyspace, ks, fams)
	if err != nil {
		return err
	}
	for _, r := range rows {
		args := make([]any, len(r.args))
		for i, a := range r.args {
			args[i] = a
		}
		if err := session.Query(r.cql, args...).ExecContext(ctx); err != nil {
			return fmt.Errorf("record keyspace %s: %w", ks.Name, err)
		}
	}
	return nil
}
