// Package enginetest is the backend-neutral test suite of store.Engine:
// the contract every storage backend of thriftd must keep, checked through
// the interface alone. A backend runs it from its own tests through a
// small harness that opens its engines:
//
//	func TestEngineContract(t *testing.T) {
//		enginetest.Run(t, enginetest.Harness{Open: open, Reopen: reopen, Clock: true})
//	}
//
// The semantics are Cassandra's, and the oracle of the model-based test is
// a naive reference model of them (model.go) that keeps every write and
// resolves reads from scratch. A test that needs a part of the contract
// the backend lacks (store.Capabilities) or a power the harness lacks (a
// settable clock, reopening a store) is skipped with the reason, never
// failed; a test that can check the weaker promise instead does.
//
// Tests of one backend's internals (its encodings, its garbage collection)
// stay with that backend.
package enginetest
