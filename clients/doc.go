// Package clients holds the compatibility matrix of Thrift-era client
// libraries: in each clients/<name>/ a small application of that era and a
// run.sh HOST:PORT that installs the client under .cache/ and runs it.
// clients/matrix.sh (make check-clients) runs every one against thriftd and,
// with CASSANDRA_THRIFT set, against a real Cassandra 3.11; README.md says
// where the two servers answer differently. The clients come from PyPI, npm,
// Maven Central and Debian's packages; `make test` runs the matrix
// (test/run-tests.sh) against Cassandra 3.11 and thriftd on both backends.
package clients
