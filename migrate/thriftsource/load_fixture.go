package thriftsource

import (
	"context"
	"fmt"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/supercol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// LoadOptions tunes LoadFixtureWith.
type LoadOptions struct {
	// Keyspace is the name of the keyspace to create (default: the
	// model's), so that one server can hold several copies of a model.
	Keyspace string
	ConnOptions
}

// LoadFixture creates the model's keyspace on the server at addr
// (system_add_keyspace, SimpleStrategy with one replica) and writes its
// rows: one batch_mutate per row carrying the fixture's timestamps and
// TTLs, deletions as Deletion mutations with their timestamps, and counter
// increments through add.
func LoadFixture(ctx context.Context, addr string, m *fixtures.Model) error {
	return LoadFixtureWith(ctx, addr, m, LoadOptions{})
}

// LoadFixtureWith is LoadFixture under another keyspace name, or with a
// login or TLS.
func LoadFixtureWith(ctx context.Context, addr string, m *fixtures.Model, o LoadOptions) error {
	c, err := dial(ctx, addr, o.ConnOptions)
	if err != nil {
		return fmt.Errorf("load fixture %s into %s: %w", m.Name, addr, err)
	}
	defer c.close()
	name := o.Keyspace
	if name == "" {
		name = m.Keyspace.Name
	}
	ksDef, err := keyspaceDef(m, name)
	if err != nil {
		return fmt.Errorf("load fixture %s: %w", m.Name, err)
	}
	return c.call(ctx, func(ctx context.Context, client *cassandra.CassandraClient) error {
		if _, err := client.SystemAddKeyspace(ctx, ksDef); err != nil {
			return fmt.Errorf("load fixture %s: system_add_keyspace %s: %w", m.Name, ksDef.Name, describeError(err))
		}
		if err := client.SetKeyspace(ctx, ksDef.Name); err != nil {
			return fmt.Errorf("load fixture %s: set_keyspace: %w", m.Name, describeError(err))
		}
		for _, family := range m.FamilyNames() {
			for _, row := range m.Rows[family] {
				if err := loadRow(ctx, client, family, row); err != nil {
					return fmt.Errorf("load fixture %s: %s row %x: %w", m.Name, family, row.Key, err)
				}
			}
		}
		return nil
	})
}

// DropKeyspace drops keyspace on the server at addr
// (system_drop_keyspace): what a test that loaded a fixture leaves
// behind.
func DropKeyspace(ctx context.Context, addr, keyspace string, o ConnOptions) error {
	c, err := dial(ctx, addr, o)
	if err != nil {
		return fmt.Errorf("%s: %w", addr, err)
	}
	defer c.close()
	return c.call(ctx, func(ctx context.Context, client *cassandra.CassandraClient) error {
		if _, err := client.SystemDropKeyspace(ctx, keyspace); err != nil {
			return fmt.Errorf("system_drop_keyspace %s: %w", keyspace, describeError(err))
		}
		return nil
	})
}

func keyspaceDef(m *fixtures.Model, name string) (*cassandra.KsDef, error) {
	ks := &cassandra.KsDef{
		Name:            name,
		StrategyClass:   "org.apache.cassandra.locator.SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"},
		DurableWrites:   true,
		CfDefs:          []*cassandra.CfDef{},
	}
	for _, def := range m.Keyspace.Families {
		f, ok := m.Family(def.Name)
		if !ok {
			return nil, fmt.Errorf("family %s not parsed", def.Name)
		}
		ks.CfDefs = append(ks.CfDefs, cfDef(name, f))
	}
	return ks, nil
}

func cfDef(keyspace string, f *supercol.Family) *cassandra.CfDef {
	def := f.Def
	cf := cassandra.NewCfDef()
	cf.Keyspace, cf.Name = keyspace, def.Name
	if def.Super {
		cf.ColumnType = "Super"
		sub := f.SubComparator.Name()
		cf.SubcomparatorType = &sub
	}
	cf.ComparatorType = f.Comparator.Name()
	validator, key := f.DefaultValidator.Name(), f.KeyValidator.Name()
	cf.DefaultValidationClass, cf.KeyValidationClass = &validator, &key
	for _, col := range f.Columns {
		cd := &cassandra.ColumnDef{Name: col.Name, ValidationClass: col.Validator.Name()}
		if col.IndexName != "" {
			kind, name := cassandra.IndexType_KEYS, col.IndexName
			cd.IndexType, cd.IndexName = &kind, &name
		}
		cf.ColumnMetadata = append(cf.ColumnMetadata, cd)
	}
	if def.KeyAlias != "" {
		cf.KeyAlias = []byte(def.KeyAlias)
	}
	for _, a := range def.ColumnAliases {
		cf.ColumnAliases = append(cf.ColumnAliases, []byte(a))
	}
	if def.ValueAlias != "" {
		cf.ValueAlias = []byte(def.ValueAlias)
	}
	if def.DefaultTTL > 0 {
		ttl := def.DefaultTTL
		cf.DefaultTimeToLive = &ttl
	}
	return cf
}

// loadRow writes one fixture row: its writes and deletions in one
// batch_mutate, then its counter increments one add each.
func loadRow(ctx context.Context, client *cassandra.CassandraClient, family string, row fixtures.Row) error {
	var muts []*cassandra.Mutation
	if row.DeletedAt != 0 {
		ts := row.DeletedAt
		muts = append(muts, &cassandra.Mutation{Deletion: &cassandra.Deletion{Timestamp: &ts}})
	}
	for _, c := range row.Cells {
		if c.Counter {
			continue
		}
		ts := c.Timestamp
		if c.Deleted {
			d := &cassandra.Deletion{Timestamp: &ts, SuperColumn: c.Super}
			if c.Name != nil {
				d.Predicate = &cassandra.SlicePredicate{ColumnNames: [][]byte{c.Name}}
			}
			muts = append(muts, &cassandra.Mutation{Deletion: d})
			continue
		}
		col := &cassandra.Column{Name: c.Name, Value: c.Value, Timestamp: &ts}
		if c.TTL > 0 {
			ttl := c.TTL
			col.TTL = &ttl
		}
		cosc := &cassandra.ColumnOrSuperColumn{Column: col}
		if c.Super != nil {
			cosc = &cassandra.ColumnOrSuperColumn{SuperColumn: &cassandra.SuperColumn{Name: c.Super, Columns: []*cassandra.Column{col}}}
		}
		muts = append(muts, &cassandra.Mutation{ColumnOrSupercolumn: cosc})
	}
	if len(muts) > 0 {
		batch := map[string]map[string][]*cassandra.Mutation{string(row.Key): {family: muts}}
		if err := client.BatchMutate(ctx, batch, cassandra.ConsistencyLevel_ONE); err != nil {
			return fmt.Errorf("batch_mutate: %w", describeError(err))
		}
	}
	for _, c := range row.Cells {
		if !c.Counter {
			continue
		}
		parent := &cassandra.ColumnParent{ColumnFamily: family, SuperColumn: c.Super}
		if err := client.Add(ctx, row.Key, parent, &cassandra.CounterColumn{Name: c.Name, Value: c.CounterValue}, cassandra.ConsistencyLevel_ONE); err != nil {
			return fmt.Errorf("add %x: %w", c.Name, describeError(err))
		}
	}
	return nil
}
