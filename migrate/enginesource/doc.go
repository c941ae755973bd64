// Package enginesource reads a legacy keyspace offline from thriftd's
// store through the store.Engine interface, with exact expiry times.
package enginesource
