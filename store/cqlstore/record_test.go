package cqlstore

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// comments is a Super family whose subcolumns a conversion pivots.
var comments = supercol.FamilyDef{Name: "Comments", Super: true, KeyValidator: "UTF8Type", Comparator: "LongType",
	SubComparator: "UTF8Type", DefaultValidator: "UTF8Type"}

// pivotRecord plans Comments as pivot with a sample that saw commenter and
// text, as convert does, and records it.
func pivotRecord(t *testing.T) (store.TableDef, *shapeDoc) {
	t.Helper()
	f, err := supercol.NewFamily("conv_Blog", comments)
	if err != nil {
		t.Fatal(err)
	}
	s := supercol.NewSample(f)
	s.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1}, []byte("text"))
	s.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1}, []byte("commenter"))
	m, err := supercol.Plan(f, supercol.Options{Shape: supercol.ShapePivot, Sample: s})
	if err != nil {
		t.Fatal(err)
	}
	def, err := LegacyTableDef("conv_Blog", "Blog", comments)
	if err != nil {
		t.Fatal(err)
	}
	return def, shapeOf(m)
}

// TestConvertedShapeRebuilt: a recorded pivot shape gives back its table,
// every Thrift subcolumn name mapped to its column; a subcolumn the table
// has no column for is refused with the reason; a shape that does not
// match its definition is refused when the catalog is loaded.
func TestConvertedShapeRebuilt(t *testing.T) {
	def, sh := pivotRecord(t)
	if def.Comparator != "org.apache.cassandra.db.marshal.LongType" || def.KeyValidator != "org.apache.cassandra.db.marshal.UTF8Type" {
		t.Errorf("types are recorded under Cassandra 3.11's names: %+v", def)
	}
	table, err := store.NewTable(def)
	if err != nil {
		t.Fatal(err)
	}
	ti, err := newTableInfo("conv_Blog", table, sh)
	if err != nil {
		t.Fatal(err)
	}
	if ti.conv == nil || len(ti.conv.named) != 2 || string(ti.conv.named[0].legacy) != "commenter" || ti.conv.named[1].col != "text" {
		t.Fatalf("named columns: %+v", ti.conv)
	}
	table.Backend = ti
	key, super := []byte("thrift-is-gone"), []byte{0, 0, 0, 0, 0, 0, 0, 7}
	m := &store.RowMutation{Table: table, Key: key, Ops: []store.Op{{Kind: store.OpPut, Super: super, Name: []byte("text"), Value: []byte("hi"), Timestamp: 5, TTL: 60}}}
	ss, err := convertedStatements(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := `UPDATE conv_Blog."Comments" USING TIMESTAMP ? AND TTL ? SET text = ? WHERE key = ? AND column1 = ?`; len(ss) != 1 || ss[0].cql != strings.Replace(want, "conv_Blog", `"conv_Blog"`, 1) {
		t.Errorf("put of a pivoted subcolumn: %+v", ss)
	}
	m.Ops[0].Name = []byte("rating")
	_, err = convertedStatements(m)
	var refused *store.CQLRefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Message, `"rating" is not one of the pivot columns`) || !strings.Contains(refused.Message, "no column for it") {
		t.Errorf("put of a subcolumn the pivot table has no column for: %v", err)
	}
	m.Ops[0] = store.Op{Kind: store.OpDeleteCell, Super: super, Name: []byte("rating"), Timestamp: 6}
	if ss, err := convertedStatements(m); err != nil || len(ss) != 0 {
		t.Errorf("deletion of a name no cell can have: %v %+v; want nothing to do", err, ss)
	}

	// A shape whose columns are not what the definition gives.
	bad := *sh
	bad.Columns = append([]columnDoc(nil), sh.Columns...)
	bad.Columns[len(bad.Columns)-1].CQLType = "bigint"
	if _, err := newTableInfo("conv_Blog", table, &bad); err == nil || !strings.Contains(err.Error(), "is not what its definition gives") {
		t.Errorf("a shape that does not match its definition: %v", err)
	}
}

// TestMetadataCQL: the script form of the catalog is the metadata schema,
// one row per family and the keyspace last, values quoted as CQL strings,
// and each row's JSON is what the engine loads.
func TestMetadataCQL(t *testing.T) {
	def, _ := pivotRecord(t)
	f, _ := supercol.NewFamily("conv_Blog", comments)
	m, err := supercol.Plan(f, supercol.Options{Shape: supercol.ShapeCompact})
	if err != nil {
		t.Fatal(err)
	}
	ks, err := LegacyKeyspaceDef("Blog", "{'class': 'NetworkTopologyStrategy', 'dc1': '3'}")
	if err != nil {
		t.Fatal(err)
	}
	if ks.StrategyClass != "org.apache.cassandra.locator.NetworkTopologyStrategy" || ks.StrategyOptions["dc1"] != "3" {
		t.Errorf("keyspace definition: %+v", ks)
	}
	stmts, err := MetadataCQL("legacy_meta", "{'class': 'SimpleStrategy', 'replication_factor': '1'}", "conv_Blog", ks, []FamilyRecord{{Def: def, Mapping: m}})
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != 5 || !strings.HasPrefix(stmts[3], "INSERT INTO legacy_meta.families (keyspace_name, family_name, def, shape) VALUES ('conv_Blog', 'Comments', '{") ||
		!strings.HasPrefix(stmts[4], "INSERT INTO legacy_meta.keyspaces (keyspace_name, def) VALUES ('conv_Blog', '{\"name\":\"Blog\"") {
		t.Fatalf("catalog statements:\n%s", strings.Join(stmts, "\n"))
	}
	if _, err := LegacyKeyspaceDef("Blog", "SimpleStrategy"); err == nil {
		t.Error("a replication that is not a CQL map is refused")
	}
	var back store.TableDef
	text := stmts[3][strings.Index(stmts[3], "'{")+1:]
	text = text[:strings.Index(text, "}', '")+1]
	if err := json.Unmarshal([]byte(text), &back); err != nil || back.Name != "Comments" || back.Keyspace != "Blog" || back.ID != def.ID {
		t.Errorf("the family's definition as recorded: %v %+v", err, back)
	}
}
