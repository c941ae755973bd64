// Package cqlusers keeps thriftd's users document (auth.Users, the JSON
// of the users file) in the cluster of the CQL backend: one row of the
// table thriftd_users of the metadata keyspace, changed with lightweight
// transactions on its version so that two writers never lose each
// other's change. Every thriftd on the cluster, and `thriftd user
// --backend cql://...`, sees the same users.
package cqlusers
