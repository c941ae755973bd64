package supercol

import (
	"strings"
	"testing"
)

// TestKeyAliases names the columns of a CompositeType key as a table
// created through CQL names its partition key: key_aliases in order,
// key_alias before them for the first, the default name where an alias
// is empty.
func TestKeyAliases(t *testing.T) {
	for _, c := range []struct {
		def  FamilyDef
		want string
	}{
		{FamilyDef{Name: "t", KeyValidator: "CompositeType(UTF8Type,Int32Type)", Comparator: "Int32Type", KeyAliases: []string{"a", "b"}},
			"(a text, b int, column1 int, value blob, PRIMARY KEY ((a, b), column1))"},
		{FamilyDef{Name: "t", KeyValidator: "CompositeType(UTF8Type,Int32Type)", Comparator: "Int32Type", KeyAliases: []string{"", "b"}},
			"(key1 text, b int, column1 int, value blob, PRIMARY KEY ((key1, b), column1))"},
		{FamilyDef{Name: "t", KeyValidator: "CompositeType(UTF8Type,Int32Type)", Comparator: "Int32Type", KeyAlias: "first", KeyAliases: []string{"a", "b"}},
			"(first text, b int, column1 int, value blob, PRIMARY KEY ((first, b), column1))"},
		{FamilyDef{Name: "t", KeyValidator: "UTF8Type", KeyAliases: []string{"id"}},
			"(id text, column1 blob, value blob, PRIMARY KEY (id, column1))"},
	} {
		m, err := Plan(mustFamily(t, "ks", c.def), Options{})
		if err != nil {
			t.Fatalf("%+v: %v", c.def, err)
		}
		if got := m.Table.CreateTableCQL(); !strings.Contains(got, c.want) {
			t.Errorf("%+v:\n%s\nwant %s", c.def, got, c.want)
		}
	}
	_, err := Plan(mustFamily(t, "ks", FamilyDef{Name: "t", KeyValidator: "CompositeType(UTF8Type,Int32Type)", KeyAliases: []string{"k", "k"}}), Options{})
	if err == nil || !strings.Contains(err.Error(), "used twice") {
		t.Errorf("two key columns named k: %v", err)
	}
}
