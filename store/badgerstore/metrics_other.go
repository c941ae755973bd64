//go:build !linux

package badgerstore

import "os"

// diskBytes is the size of a file; where the system does not tell its
// allocated blocks, a sparse file counts whole.
func diskBytes(info os.FileInfo) int64 { return info.Size() }
