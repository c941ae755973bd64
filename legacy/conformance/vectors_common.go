package conformance

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// vecCL is the consistency level every vector was recorded with.
const vecCL = cassandra.ConsistencyLevel_ONE

// vecLoad decodes one vectors file into v.
func vecLoad(t *testing.T, dir, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("read vectors: %v", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
}

// vecSizedPlaceholder is how the vectors abbreviate a long byte string: "N
// bytes" (a key of N times 'k', or a name or bound of N zero bytes).
var vecSizedPlaceholder = regexp.MustCompile(`^(\d+) bytes$`)

// vecBytes decodes a hex string of a vector into a set (non-nil) byte
// slice; fill is the byte a "N bytes" placeholder repeats.
func vecBytes(t testing.TB, s string, fill byte) []byte {
	t.Helper()
	if m := vecSizedPlaceholder.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			t.Fatalf("vector placeholder %q: %v", s, err)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = fill
		}
		return b
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("vector hex %q: %v", s, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// vecName decodes a column name, super column name or slice bound.
func vecName(t testing.TB, s string) []byte { return vecBytes(t, s, 0) }

// vecKey decodes a row key.
func vecKey(t testing.TB, s string) []byte { return vecBytes(t, s, 'k') }

// vecOptName decodes an optional name: nil stays unset.
func vecOptName(t testing.TB, s *string) []byte {
	if s == nil {
		return nil
	}
	return vecName(t, *s)
}

// vecExceptionName is the IDL name of the exception a call failed with, as
// the vectors record it; "" for success.
func vecExceptionName(err error) string {
	var (
		invalid     *cassandra.InvalidRequestException
		notFound    *cassandra.NotFoundException
		unavailable *cassandra.UnavailableException
		timedOut    *cassandra.TimedOutException
		authn       *cassandra.AuthenticationException
		authz       *cassandra.AuthorizationException
		schema      *cassandra.SchemaDisagreementException
		app         thrift.TApplicationException
		transport   thrift.TTransportException
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &invalid):
		return "InvalidRequestException"
	case errors.As(err, &notFound):
		return "NotFoundException"
	case errors.As(err, &unavailable):
		return "UnavailableException"
	case errors.As(err, &timedOut):
		return "TimedOutException"
	case errors.As(err, &authn):
		return "AuthenticationException"
	case errors.As(err, &authz):
		return "AuthorizationException"
	case errors.As(err, &schema):
		return "SchemaDisagreementException"
	case errors.As(err, &app):
		return "TApplicationException"
	case errors.As(err, &transport):
		return "TTransportException"
	}
	return fmt.Sprintf("%T", err)
}

// vecWhy is the reason of an InvalidRequestException, "" for any other
// outcome.
func vecWhy(err error) string {
	var invalid *cassandra.InvalidRequestException
	if errors.As(err, &invalid) {
		return invalid.Why
	}
	return ""
}

// vecCheckOutcome compares a call's outcome with a vector's: success when
// wantException is empty, else that exception and, for an
// InvalidRequestException, exactly that reason.
func vecCheckOutcome(t *testing.T, what string, err error, wantException, wantWhy string) {
	t.Helper()
	got := vecExceptionName(err)
	switch {
	case got != wantException && wantException == "":
		t.Errorf("%s: want success, got %s %q (%v)", what, got, vecWhy(err), err)
	case got != wantException:
		t.Errorf("%s: want %s %q, got %s (%v)", what, wantException, wantWhy, vecOrSuccess(got), err)
	case got == "InvalidRequestException" && vecWhy(err) != wantWhy:
		t.Errorf("%s: InvalidRequestException why:\n got  %q\n want %q", what, vecWhy(err), wantWhy)
	}
}

func vecOrSuccess(name string) string {
	if name == "" {
		return "success"
	}
	return name
}

// vecCreateKeyspace adds a SimpleStrategy keyspace with RF 1 (as the vectors'
// node had) and makes it the connection's keyspace.
func vecCreateKeyspace(t *testing.T, c *Client, name string) {
	t.Helper()
	ks := &cassandra.KsDef{
		Name:            name,
		StrategyClass:   "org.apache.cassandra.locator.SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"},
		CfDefs:          []*cassandra.CfDef{},
	}
	if _, err := c.SystemAddKeyspace(Ctx(t), ks); err != nil {
		t.Fatalf("system_add_keyspace %s: %v", name, err)
	}
	if err := c.SetKeyspace(Ctx(t), name); err != nil {
		t.Fatalf("set_keyspace %s: %v", name, err)
	}
}

// vecAddFamily creates a family from the generated bindings' default CfDef
// changed by edit, as the vectors' generator did.
func vecAddFamily(t *testing.T, c *Client, keyspace, name string, edit func(cf *cassandra.CfDef)) {
	t.Helper()
	cf := cassandra.NewCfDef()
	cf.Keyspace, cf.Name = keyspace, name
	if edit != nil {
		edit(cf)
	}
	if _, err := c.SystemAddColumnFamily(Ctx(t), cf); err != nil {
		t.Fatalf("system_add_column_family %s: %v", name, err)
	}
}

// vecDescribedFamily returns a family's CfDef as describe_keyspace reports it.
func vecDescribedFamily(t *testing.T, c *Client, keyspace, name string) *cassandra.CfDef {
	t.Helper()
	ks, err := c.DescribeKeyspace(Ctx(t), keyspace)
	if err != nil {
		t.Fatalf("describe_keyspace %s: %v", keyspace, err)
	}
	for _, cf := range ks.CfDefs {
		if cf.Name == name {
			return cf
		}
	}
	t.Fatalf("describe_keyspace %s: no family %s", keyspace, name)
	return nil
}

// vecFullRange is a SliceRange over a whole row.
func vecFullRange(count int32, reversed bool) *cassandra.SlicePredicate {
	return &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Reversed: reversed, Count: count}}
}

// vecCell is a column as the vectors write it: hex name and value,
// timestamp, and the TTL (null when not set).
type vecCell struct {
	NameHex   string `json:"name_hex"`
	ValueHex  string `json:"value_hex"`
	Timestamp int64  `json:"timestamp"`
	TTL       *int32 `json:"ttl"`
}

// Results are compared as JSON trees in the vectors' shape: a
// ColumnOrSuperColumn becomes {"column": {...}}, {"super_column": {...}},
// {"counter_column": {...}} or {"counter_super_column": {...}}.

func vecColumnJSON(c *cassandra.Column) map[string]any {
	var ttl any
	if c.TTL != nil {
		ttl = *c.TTL
	}
	var ts any
	if c.Timestamp != nil {
		ts = *c.Timestamp
	}
	return map[string]any{"name_hex": hex.EncodeToString(c.Name), "value_hex": hex.EncodeToString(c.Value), "timestamp": ts, "ttl": ttl}
}

func vecCounterColumnJSON(c *cassandra.CounterColumn) map[string]any {
	return map[string]any{"name_hex": hex.EncodeToString(c.Name), "value": c.Value}
}

func vecCoscJSON(c *cassandra.ColumnOrSuperColumn) map[string]any {
	if c == nil {
		return nil
	}
	out := map[string]any{}
	if c.Column != nil {
		out["column"] = vecColumnJSON(c.Column)
	}
	if c.SuperColumn != nil {
		cols := []any{}
		for _, col := range c.SuperColumn.Columns {
			cols = append(cols, vecColumnJSON(col))
		}
		out["super_column"] = map[string]any{"name_hex": hex.EncodeToString(c.SuperColumn.Name), "columns": cols}
	}
	if c.CounterColumn != nil {
		out["counter_column"] = vecCounterColumnJSON(c.CounterColumn)
	}
	if c.CounterSuperColumn != nil {
		cols := []any{}
		for _, col := range c.CounterSuperColumn.Columns {
			cols = append(cols, vecCounterColumnJSON(col))
		}
		out["counter_super_column"] = map[string]any{"name_hex": hex.EncodeToString(c.CounterSuperColumn.Name), "columns": cols}
	}
	return out
}

func vecCoscsJSON(cs []*cassandra.ColumnOrSuperColumn) []any {
	out := []any{}
	for _, c := range cs {
		out = append(out, vecCoscJSON(c))
	}
	return out
}

func vecKeySlicesJSON(rows []*cassandra.KeySlice) []any {
	out := []any{}
	for _, r := range rows {
		out = append(out, map[string]any{"key_hex": hex.EncodeToString(r.Key), "columns": vecCoscsJSON(r.Columns)})
	}
	return out
}

// vecSameJSON compares a result built from the server's answer with the
// vector's JSON exactly (both are normalised through encoding/json, so
// numbers and nulls compare alike), but for the TTLs a backend that
// reports the TTL left reads back (backend divergence remaining-ttl).
func vecSameJSON(t *testing.T, target Target, what string, got any, want json.RawMessage) {
	t.Helper()
	gotJSON, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("%s: encode result: %v", what, err)
	}
	var g, w any
	if err := json.Unmarshal(gotJSON, &g); err != nil {
		t.Fatalf("%s: decode result: %v", what, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: decode vector: %v", what, err)
	}
	alignTTLs(t, target, g, w)
	if !reflect.DeepEqual(g, w) {
		gotJSON, _ = json.Marshal(g)
		wantJSON, _ := json.Marshal(w)
		t.Errorf("%s:\n got  %s\n want %s", what, gotJSON, wantJSON)
	}
}
