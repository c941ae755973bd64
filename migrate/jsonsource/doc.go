// Package jsonsource reads sstable2json dumps of Cassandra 1.2 and 2.0 —
// one file per family or a directory of them — with the keyspace schema
// given separately, streaming each row's columns so that memory stays
// bounded whatever the size of a row.
package jsonsource
