// Package auth keeps thriftd's users: their bcrypt password hashes and
// their permissions in a file of the data directory, managed by `thriftd
// user`, and the locks of the data directory.
//
// The users live in their own file (UsersFile), not in the Badger store:
// editing them needs neither the store nor its partitioner, so a user can
// be added to a data directory that holds no data yet; the Thrift API,
// which sees only the store, cannot list them; and the file is replaced
// atomically (a temporary file, fsync, rename, fsync of the directory), so
// a crash leaves either the old users or the new ones, and a reader never
// sees half a file.
//
// Writers of the file take UsersLockFile, so two `thriftd user` commands
// never lose each other's change. A running thriftd holds LockFile (the
// data directory's) and only reads the users file: Live rereads it when
// it changes, so users, passwords and permissions change under a running
// server without a restart.
//
// The file is one Store of the users document; with the CQL backend the
// same document is a row of the cluster (package auth/cqlusers), shared
// by every thriftd on it, and Live follows either.
//
// Permissions follow Cassandra's CassandraAuthorizer, in thriftd's three
// words: read is SELECT, write is MODIFY, schema is CREATE, ALTER and DROP,
// granted on every keyspace, a keyspace, or one family of it (Cassandra's
// <all keyspaces>, <keyspace ks> and <table ks.cf>); a grant holds for
// what lies below its resource. A superuser has every permission.
package auth
