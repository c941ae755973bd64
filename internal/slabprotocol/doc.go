// Package slabprotocol is Thrift's binary protocol reading binary fields
// (names, values, keys) into shared blocks instead of a buffer each: the
// same bytes on the wire, a fraction of the allocations. convert's Thrift
// source reads its pages with it, and thriftbench its replies (and the
// echo server its requests), so that the load generator does not spend
// more per call than the server it measures.
package slabprotocol
