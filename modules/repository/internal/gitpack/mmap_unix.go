//go:build unix

package gitpack

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only. mapped is false when the bytes
// are a heap copy instead (nothing to unmap).
func mapFile(f *os.File, size int64) (data []byte, mapped bool, err error) {
	if int64(int(size)) != size {
		return nil, false, errTooBig
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

func unmapFile(data []byte) { unix.Munmap(data) }
