package badgerstore

import (
	"os"
	"syscall"
)

// diskBytes is the disk space a file takes: its allocated blocks, which
// for a sparse file are fewer than its size.
func diskBytes(info os.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512 // st_blocks counts 512-byte units
	}
	return info.Size()
}
