// Package slabprotocol is Thrift's framed transport and binary protocol
// made cheaper to read, with the same bytes on the wire:
//
//   - FramedTransport reads each frame whole into memory, and
//     FrameProtocol reads its values from there, where the library reads
//     each through the transport's interface, a few bytes at a time.
//     thriftd's server transport holds its request frames in a Frame too
//     and reads them with FrameProtocol.
//   - Binary fields (names, values, keys) are copied into shared blocks
//     instead of a buffer each: a fraction of the allocations.
//   - AppendProtocol appends each value it writes to the frame in memory,
//     where the library writes each through the transport's interface:
//     thriftd's replies, and the requests of a FramedTransport's protocol.
//
// convert's Thrift source reads its pages with it, and thriftbench its
// replies (and the echo server its requests), so that the load generator
// does not spend more per call than the server it measures.
package slabprotocol
