package conformance

import (
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

func runCASTests(t *testing.T, target Target) {
	t.Run("ExpectedAbsentThenEqual", func(t *testing.T) {
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1",
			standardCF("Standard1"),
			standardCF("Standard3", columnDef(b("c1"), "AsciiType"), columnDef(b("c2"), "AsciiType")),
			standardCF("Standard4", columnDef(b("c1"), "AsciiType")))
		first := []*cassandra.Column{col(b("c1"), b("value1"), 0), col(b("c2"), b("value2"), 0)}
		second := []*cassandra.Column{col(b("c1"), b("value101"), 1), col(b("c2"), b("value102"), 1)}
		for _, cf := range []string{"Standard1", "Standard3", "Standard4"} {
			t.Run(cf, func(t *testing.T) {
				cas := func(expected, updates []*cassandra.Column) *cassandra.CASResult_ {
					t.Helper()
					r, err := a.C.Cas(Ctx(t), b("key1"), cf, expected, updates, cassandra.ConsistencyLevel_SERIAL, cassandra.ConsistencyLevel_QUORUM)
					expectOK(t, "cas", err)
					return r
				}
				// Expecting values in an empty row fails with no current values.
				r := cas(first, first)
				if r.Success || len(r.CurrentValues) != 0 {
					t.Errorf("cas expecting values in an empty row: success %v current %v", r.Success, r.CurrentValues)
				}
				// Expecting the row absent applies.
				if r := cas(nil, first); !r.Success {
					t.Errorf("cas expecting an empty row was not applied: %v", r.CurrentValues)
				}
				got := map[string]string{}
				for _, c := range a.slice("key1", parent(cf), everything()) {
					got[string(c.Column.Name)] = string(c.Column.Value)
				}
				if len(got) != 2 || got["c1"] != "value1" || got["c2"] != "value2" {
					t.Errorf("after the applied cas: %v", got)
				}
				// Expecting it absent again fails and shows the first live column.
				r = cas(nil, first)
				if r.Success || len(r.CurrentValues) != 1 || string(r.CurrentValues[0].Name) != "c1" || string(r.CurrentValues[0].Value) != "value1" {
					t.Errorf("cas expecting an empty row on a full one: success %v current %v", r.Success, r.CurrentValues)
				}
				// A SERIAL read sees the value.
				c, err := a.C.Get(Ctx(t), b("key1"), colPath(cf, b("c1")), cassandra.ConsistencyLevel_SERIAL)
				expectOK(t, "get at SERIAL", err)
				if string(c.Column.Value) != "value1" {
					t.Errorf("get at SERIAL = %q", c.Column.Value)
				}
				_, err = a.C.GetSlice(Ctx(t), b("key1"), parent(cf), everything(), cassandra.ConsistencyLevel_LOCAL_SERIAL)
				expectOK(t, "get_slice at LOCAL_SERIAL", err)
				// Expecting the current values applies.
				if r := cas(first, second); !r.Success {
					t.Errorf("cas with the current values was not applied: %v", r.CurrentValues)
				}
				// A stale expectation fails and shows the current values.
				r = cas(first, second)
				if r.Success {
					t.Error("cas with stale values was applied")
				}
				cur := map[string]string{}
				for _, c := range r.CurrentValues {
					cur[string(c.Name)] = string(c.Value)
				}
				if cur["c1"] != "value101" || cur["c2"] != "value102" {
					t.Errorf("current values after a failed cas = %v", cur)
				}
				// A column expected with no value must be absent.
				if a.Diverges("cas-absent-column") {
					if r := cas([]*cassandra.Column{{Name: b("c3")}}, []*cassandra.Column{col(b("c3"), b("value3"), 2)}); r.Success || len(r.CurrentValues) != 0 {
						t.Errorf("cas expecting c3 with no value: applied %v, current values %v", r.Success, r.CurrentValues)
					}
					return
				}
				if r := cas([]*cassandra.Column{{Name: b("c3")}}, []*cassandra.Column{col(b("c3"), b("value3"), 2)}); !r.Success {
					t.Errorf("cas expecting c3 absent was not applied: %v", r.CurrentValues)
				}
				if r := cas([]*cassandra.Column{{Name: b("c3")}}, []*cassandra.Column{col(b("c3"), b("again"), 3)}); r.Success {
					t.Error("cas expecting c3 absent was applied although c3 exists")
				}
			})
		}
	})
	t.Run("Refusals", func(t *testing.T) {
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", standardCF("Standard1"), superCF("Super1"))
		up := []*cassandra.Column{col(b("c"), b("v"), 1)}
		_, err := a.C.Cas(Ctx(t), b("k"), "Super1", nil, up, cassandra.ConsistencyLevel_SERIAL, one)
		expectIRE(t, "cas on a Super family", err, "")
		_, err = a.C.Cas(Ctx(t), b("k"), "Standard1", nil, up, one, one)
		expectIRE(t, "cas with a non-serial serial consistency", err, "")
		_, err = a.C.Cas(Ctx(t), b("k"), "Standard1", nil, up, cassandra.ConsistencyLevel_SERIAL, cassandra.ConsistencyLevel_SERIAL)
		expectIRE(t, "cas committed at SERIAL", err, "")
		_, err = a.C.Cas(Ctx(t), b(""), "Standard1", nil, up, cassandra.ConsistencyLevel_SERIAL, one)
		expectIRE(t, "cas with an empty key", err, "")
		_, err = a.C.Cas(Ctx(t), b("k"), "Missing", nil, up, cassandra.ConsistencyLevel_SERIAL, one)
		expectIRE(t, "cas on a missing family", err, "")
		if got := a.slice("k", parent("Standard1"), everything()); len(got) != 0 {
			t.Errorf("a refused cas wrote %v", names(got))
		}
	})
}
