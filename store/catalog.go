package store

import (
	"errors"
	"sort"
	"strings"
)

// Keyspace is a keyspace and its families as the engine serves them.
type Keyspace struct {
	Def    KeyspaceDef
	Tables map[string]*Table
}

// TableNames returns the keyspace's family names, sorted.
func (k *Keyspace) TableNames() []string {
	names := make([]string, 0, len(k.Tables))
	for n := range k.Tables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Catalog is an immutable snapshot of the schema. Readers hold on to one
// snapshot for a whole request; schema changes publish a new Catalog.
type Catalog struct {
	// Version identifies this schema; it changes with every schema change
	// and is stable across restarts (a UUID string).
	Version   string
	Keyspaces map[string]*Keyspace
}

// ErrNoKeyspace and ErrNoTable report lookups of undefined names.
var (
	ErrNoKeyspace = errors.New("keyspace does not exist")
	ErrNoTable    = errors.New("table does not exist")
	ErrExists     = errors.New("already exists")
)

// Keyspace returns the named keyspace (names are case-sensitive).
func (c *Catalog) Keyspace(name string) (*Keyspace, bool) {
	ks, ok := c.Keyspaces[name]
	return ks, ok
}

// Table returns a family by keyspace and name.
func (c *Catalog) Table(keyspace, name string) (*Table, bool) {
	ks, ok := c.Keyspaces[keyspace]
	if !ok {
		return nil, false
	}
	t, ok := ks.Tables[name]
	return t, ok
}

// KeyspaceNames returns every keyspace name, sorted.
func (c *Catalog) KeyspaceNames() []string {
	names := make([]string, 0, len(c.Keyspaces))
	for n := range c.Keyspaces {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// KeyspaceFold finds a keyspace whose name equals name ignoring case
// (Cassandra refuses keyspace names that differ only in case).
func (c *Catalog) KeyspaceFold(name string) (*Keyspace, bool) {
	for n, ks := range c.Keyspaces {
		if strings.EqualFold(n, name) {
			return ks, true
		}
	}
	return nil, false
}
