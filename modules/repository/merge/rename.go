package merge

// This file owns rename detection and the rewiring of paths that renames
// cause. Like merge-ort, each side is compared with the base on its own:
// files deleted on a side are rename sources and files added on it are
// targets; identical contents pair first, then files with the same unique
// base name, then the most similar pairs. Renames are then followed: the
// other side's version of the old path moves to the new path so that both
// sides' changes meet there.

import (
	"path"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// emptyBlob is the hash of the empty blob; empty files are never renames.
var emptyBlob = plumbing.NewHash("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")

// Similarity scores are out of maxScore, as in git.
const (
	maxScore           = 60000
	defaultRenameScore = 30000
	defaultRenameLimit = 7000
	candidatesPerDst   = 4
)

type renameSource struct {
	path  string
	entry Entry
	// relevant says the other side changed or deleted the path, so only
	// a rename can carry that change to where this side put the file.
	relevant bool
	used     bool
}

type renameTarget struct {
	path    string
	entry   Entry
	renamed bool
}

type renameCandidates struct {
	sources []*renameSource
	targets []*renameTarget
}

// rename is one detected rename on one side.
type rename struct {
	src, dst string
	side     int
}

// noteRenameCandidates records a path as a rename source or target for
// each side on which it was deleted or added.
func (m *treeMerge) noteRenameCandidates(n *node) {
	fm := n.filemask
	if fm == 0 || fm == 7 {
		return
	}
	for side := sideOurs; side <= sideTheirs; side++ {
		sm := uint8(1) << side
		if fm&1 != 0 && fm&sm == 0 {
			m.candidates[side].sources = append(m.candidates[side].sources, &renameSource{
				path: n.path, entry: n.stages[sideBase], relevant: n.matchMask&fm == 0,
			})
		}
		if fm&1 == 0 && fm&sm != 0 {
			m.candidates[side].targets = append(m.candidates[side].targets, &renameTarget{
				path: n.path, entry: n.stages[side],
			})
		}
	}
}

func (m *treeMerge) renames() error {
	var all []rename
	for side := sideOurs; side <= sideTheirs; side++ {
		found, err := m.detect(side)
		if err != nil {
			return err
		}
		all = append(all, found...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].src < all[j].src })
	return m.followRenames(all)
}

func sameBasename(a, b string) bool { return path.Base(a) == path.Base(b) }

// detect finds the renames of one side.
func (m *treeMerge) detect(side int) ([]rename, error) {
	c := m.candidates[side]
	var sources []*renameSource
	var targets []*renameTarget
	for _, s := range c.sources {
		if s.entry.Hash != emptyBlob {
			sources = append(sources, s)
		}
	}
	for _, t := range c.targets {
		if t.entry.Hash != emptyBlob {
			targets = append(targets, t)
		}
	}
	if len(sources) == 0 || len(targets) == 0 {
		return nil, nil
	}
	sort.Slice(sources, func(i, j int) bool { return sources[i].path < sources[j].path })
	sort.Slice(targets, func(i, j int) bool { return targets[i].path < targets[j].path })

	var found []rename
	pair := func(s *renameSource, t *renameTarget) {
		s.used, t.renamed = true, true
		found = append(found, rename{src: s.path, dst: t.path, side: side})
	}

	// Exact renames: same blob, and same mode unless both are regular.
	for _, t := range targets {
		var best *renameSource
		for _, s := range sources {
			if s.used || s.entry.Hash != t.entry.Hash {
				continue
			}
			if (!isRegular(s.entry.Mode) || !isRegular(t.entry.Mode)) && s.entry.Mode != t.entry.Mode {
				continue
			}
			if sameBasename(s.path, t.path) {
				best = s
				break
			}
			if best == nil {
				best = s
			}
		}
		if best != nil {
			pair(best, t)
		}
	}

	minScore := defaultRenameScore
	if m.opts.RenameScore > 0 {
		minScore = min(m.opts.RenameScore, 100) * maxScore / 100
	}
	if minScore >= maxScore {
		return found, nil
	}
	sim := similarity{m: m, spans: map[plumbing.Hash]map[uint32]uint32{}, sizes: map[plumbing.Hash]int{}}

	// Files with a base name that no other remaining source or target
	// has are paired if they are similar enough (halfway between the
	// minimum score and identical).
	srcByName := map[string]int{}
	dstByName := map[string]int{}
	for _, s := range sources {
		if !s.used {
			srcByName[path.Base(s.path)]++
		}
	}
	for _, t := range targets {
		if !t.renamed {
			dstByName[path.Base(t.path)]++
		}
	}
	basenameScore := minScore + (maxScore-minScore)/2
	for _, s := range sources {
		name := path.Base(s.path)
		if s.used || !s.relevant || srcByName[name] != 1 || dstByName[name] != 1 {
			continue
		}
		for _, t := range targets {
			if t.renamed || path.Base(t.path) != name {
				continue
			}
			score, err := sim.score(s.entry, t.entry, minScore)
			if err != nil {
				return nil, err
			}
			if score >= basenameScore {
				pair(s, t)
			}
			break
		}
	}

	// Everything else: keep the best few sources per target, then pair
	// the best-scoring candidates first.
	var srcs []*renameSource
	var dsts []*renameTarget
	for _, s := range sources {
		if !s.used && s.relevant {
			srcs = append(srcs, s)
		}
	}
	for _, t := range targets {
		if !t.renamed {
			dsts = append(dsts, t)
		}
	}
	limit := m.opts.RenameLimit
	if limit <= 0 {
		limit = defaultRenameLimit
	}
	if len(srcs) == 0 || len(dsts) == 0 || len(srcs)*len(dsts) > limit*limit {
		return found, nil
	}
	type candidate struct {
		src      *renameSource
		dst      *renameTarget
		score    int
		sameName bool
	}
	better := func(a, b candidate) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.sameName && !b.sameName
	}
	var all []candidate
	for _, t := range dsts {
		var best []candidate
		for _, s := range srcs {
			score, err := sim.score(s.entry, t.entry, minScore)
			if err != nil {
				return nil, err
			}
			cand := candidate{src: s, dst: t, score: score, sameName: sameBasename(s.path, t.path)}
			if len(best) < candidatesPerDst {
				best = append(best, cand)
				continue
			}
			worst := 0
			for i := 1; i < len(best); i++ {
				if better(best[worst], best[i]) {
					worst = i
				}
			}
			if better(cand, best[worst]) {
				best[worst] = cand
			}
		}
		all = append(all, best...)
	}
	sort.SliceStable(all, func(i, j int) bool { return better(all[i], all[j]) })
	for _, cand := range all {
		if cand.score < minScore {
			break
		}
		if cand.dst.renamed || cand.src.used {
			continue
		}
		pair(cand.src, cand.dst)
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].dst < found[j].dst })
	return found, nil
}

// similarity scores how much of a target's content comes from a source,
// with git's measure: both files are cut into spans (lines, or 64 bytes
// without a newline), spans are hashed, and the bytes of matching spans
// are counted.
type similarity struct {
	m     *treeMerge
	spans map[plumbing.Hash]map[uint32]uint32
	sizes map[plumbing.Hash]int
}

func (s *similarity) load(e Entry) (map[uint32]uint32, int, error) {
	if sp, ok := s.spans[e.Hash]; ok {
		return sp, s.sizes[e.Hash], nil
	}
	data, err := s.m.readBlob(e.Hash, e.Hash.String())
	if err != nil {
		return nil, 0, err
	}
	sp := spanHashes(data)
	s.spans[e.Hash], s.sizes[e.Hash] = sp, len(data)
	return sp, len(data), nil
}

func (s *similarity) score(src, dst Entry, minScore int) (int, error) {
	if !isRegular(src.Mode) || !isRegular(dst.Mode) {
		return 0, nil
	}
	ss, srcSize, err := s.load(src)
	if err != nil {
		return 0, err
	}
	ds, dstSize, err := s.load(dst)
	if err != nil {
		return 0, err
	}
	maxSize, baseSize := max(srcSize, dstSize), min(srcSize, dstSize)
	delta := maxSize - baseSize
	if float64(maxSize)*float64(maxScore-minScore) < float64(delta)*maxScore {
		return 0, nil
	}
	if dstSize == 0 {
		return 0, nil
	}
	var copied uint64
	for h, n := range ss {
		copied += uint64(min(n, ds[h]))
	}
	return int(float64(copied) * maxScore / float64(maxSize)), nil
}

// spanHashes sums span lengths per span hash; a last span that neither
// reaches 64 bytes nor ends in a newline is not counted, as in git. In text,
// the CR of a CRLF is skipped.
func spanHashes(data []byte) map[uint32]uint32 {
	const hashBase = 107927
	text := !IsBinary(data)
	out := make(map[uint32]uint32)
	var acc1, acc2 uint32
	n := uint32(0)
	for i, b := range data {
		c := uint32(b)
		if text && c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			continue
		}
		old1 := acc1
		acc1 = (acc1 << 7) ^ (acc2 >> 25)
		acc2 = (acc2 << 7) ^ (old1 >> 25)
		acc1 += c
		n++
		if n < 64 && c != '\n' {
			continue
		}
		out[(acc1+acc2*0x61)%hashBase] += n
		n, acc1, acc2 = 0, 0, 0
	}
	return out
}

// followRenames moves the other side's version of each renamed path to the
// new path, and records the rename conflicts: the same file renamed to two
// places, renamed on one side and deleted on the other, or renamed onto a
// path the other side also uses.
func (m *treeMerge) followRenames(all []rename) error {
	for i := 0; i < len(all); i++ {
		r := all[i]
		oldN, newN := m.paths[r.src], m.paths[r.dst]
		if oldN == nil || oldN.clean || newN == nil {
			continue
		}
		if i+1 < len(all) && all[i+1].src == r.src {
			if err := m.renamedTwice(r.src, r.dst, all[i+1].dst); err != nil {
				return err
			}
			i++
			continue
		}
		target := r.side
		other := 3 - target
		otherMask := uint8(1) << other
		sourceDeleted := oldN.filemask == 1
		collision := newN.filemask&otherMask != 0
		typeChanged := !sourceDeleted && isRegular(oldN.stages[other].Mode) != isRegular(newN.stages[target].Mode)
		if typeChanged && collision {
			collision = false
		}
		renameLabel, deleteLabel := m.labels[target], m.labels[other]

		switch {
		case collision && !sourceDeleted:
			var pathnames [3]string
			pathnames[sideBase], pathnames[other], pathnames[target] = r.src, r.src, r.dst
			base, ours, theirs := m.paths[pathnames[0]], m.paths[pathnames[1]], m.paths[pathnames[2]]
			merged, clean, err := m.contentMerge(r.src, base.stages[sideBase], ours.stages[sideOurs],
				theirs.stages[sideTheirs], pathnames, 1)
			if err != nil {
				return err
			}
			newN.stages[target] = merged
			if !clean {
				m.msg(ConflictRenameCollision, []string{r.dst, r.src},
					"CONFLICT (rename involved in collision): rename of %s -> %s has content conflicts AND collides with another path; this may result in nested conflict markers.",
					r.src, r.dst)
			}
		case collision && sourceDeleted:
			newN.pathConflict = true
			m.msg(ConflictRenameDelete, []string{r.dst, r.src},
				"CONFLICT (rename/delete): %s renamed to %s in %s, but deleted in %s.",
				r.src, r.dst, renameLabel, deleteLabel)
		default:
			newN.stages[sideBase] = oldN.stages[sideBase]
			newN.filemask |= 1
			newN.pathnames[sideBase] = r.src
			switch {
			case typeChanged:
				oldN.stages[sideBase] = Entry{}
				oldN.filemask &= 6
			case sourceDeleted:
				newN.pathConflict = true
				m.msg(ConflictRenameDelete, []string{r.dst, r.src},
					"CONFLICT (rename/delete): %s renamed to %s in %s, but deleted in %s.",
					r.src, r.dst, renameLabel, deleteLabel)
			default:
				newN.stages[other] = oldN.stages[other]
				newN.filemask |= otherMask
				newN.pathnames[other] = r.src
			}
		}
		if !typeChanged {
			oldN.isNull = true
			oldN.clean = true
		}
	}
	return nil
}

// renamedTwice handles a file both sides renamed: to one path (clean) or to
// two (both kept, each with the merged content, and a conflict).
func (m *treeMerge) renamedTwice(src, dst1, dst2 string) error {
	base, s1, s2 := m.paths[src], m.paths[dst1], m.paths[dst2]
	if dst1 == dst2 {
		s1.stages[sideBase] = base.stages[sideBase]
		s1.filemask |= 1
		base.isNull = true
		base.clean = true
		return nil
	}
	merged, clean, err := m.contentMerge(src, base.stages[sideBase], s1.stages[sideOurs], s2.stages[sideTheirs],
		[3]string{src, dst1, dst2}, 1)
	if err != nil {
		return err
	}
	wasBinary := !clean && merged == s1.stages[sideOurs]
	s1.stages[sideOurs] = merged
	if wasBinary {
		// Binary contents cannot be merged; keep each side's own.
		merged = s2.stages[sideTheirs]
	}
	s2.stages[sideTheirs] = merged
	s1.pathConflict, s2.pathConflict, base.pathConflict = true, true, true
	m.msg(ConflictRenameRename, []string{src, dst1, dst2},
		"CONFLICT (rename/rename): %s renamed to %s in %s and to %s in %s.",
		src, dst1, m.labels[sideOurs], dst2, m.labels[sideTheirs])
	return nil
}
