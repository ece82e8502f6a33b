package gitserve

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// gitpack.ClosedPack can tell whether it holds an object but not list
// its objects, which WritePack needs to stream the pack whole; until it
// can, the list is read from the pack's .idx (version 2: magic, version,
// 256-entry fan-out, then the sorted object names).
func idxNames(path string) ([]plumbing.Hash, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	const head = 8 + 256*4
	if len(data) < head || string(data[:4]) != "\xfftOc" || binary.BigEndian.Uint32(data[4:8]) != 2 {
		return nil, errors.New("gitserve: " + path + ": not a version 2 pack index")
	}
	n := int(binary.BigEndian.Uint32(data[head-4 : head]))
	if len(data) < head+20*n {
		return nil, errors.New("gitserve: " + path + ": truncated pack index")
	}
	out := make([]plumbing.Hash, n)
	for i := range out {
		copy(out[i][:], data[head+20*i:])
	}
	return out, nil
}

// closedPacksOf lists a store's closed packs with a way to list their
// objects (from gitDir's pack indexes; none without gitDir).
func closedPacksOf(st *gitpack.Store, gitDir string) []closedPack {
	if gitDir == "" {
		return nil
	}
	var out []closedPack
	for _, p := range st.ClosedPacks() {
		p := p
		path := filepath.Join(gitDir, "objects", "pack", p.Name+".idx")
		out = append(out, closedPack{ClosedPack: p, list: func() ([]plumbing.Hash, error) {
			names, err := idxNames(path)
			if err != nil {
				return nil, err
			}
			if len(names) != p.Objects {
				return nil, errors.New("gitserve: " + path + ": object count differs from the store's")
			}
			return names, nil
		}})
	}
	return out
}
