//go:build !unix

package gitpack

import (
	"io"
	"os"
)

// mapFile reads f into memory where mmap is not available.
func mapFile(f *os.File, size int64) (data []byte, mapped bool, err error) {
	if int64(int(size)) != size {
		return nil, false, errTooBig
	}
	data = make([]byte, size)
	_, err = io.ReadFull(io.NewSectionReader(f, 0, size), data)
	return data, false, err
}

func unmapFile(data []byte) {}
