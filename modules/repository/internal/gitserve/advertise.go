package gitserve

import (
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// Agent is sent as agent=<Agent> among the capabilities.
const Agent = "fennec/1"

// Ref is an advertised ref.
type Ref struct {
	Name plumbing.ReferenceName
	Hash plumbing.Hash
}

// Repo is what a service needs of a repository.
type Repo struct {
	Objects *gitpack.Store
	// Refs are the branches and tags (refs/heads/*, refs/tags/*, ...), in
	// any order; HEAD is not among them.
	Refs []Ref
	// Head is HEAD's target branch, "" when HEAD points at nothing that
	// exists.
	Head plumbing.ReferenceName
}

// objectSource is what the walk and the advertisement need of a store.
type objectSource interface {
	Has(h plumbing.Hash) bool
	Read(h plumbing.Hash) (gitpack.Type, []byte, error)
}

// uploadPackCaps are the capabilities git-upload-pack advertises, before
// symref and agent.
var uploadPackCaps = []string{
	"multi_ack_detailed",
	"no-done",
	"side-band-64k",
	"side-band",
	"thin-pack",
	"ofs-delta",
	"shallow",
	"deepen-since",
	"deepen-not",
	"deepen-relative",
	"no-progress",
	"include-tag",
	"allow-tip-sha1-in-want",
	"allow-reachable-sha1-in-want",
	"object-format=sha1",
}

// advRef is one line of the advertisement.
type advRef struct {
	name   string
	hash   plumbing.Hash
	peeled plumbing.Hash // zero unless the ref names an annotated tag
}

// sortedRefs sorts the refs by name, drops the invalid ones and resolves
// HEAD; with peel it also peels annotated tags.
func sortedRefs(src objectSource, repo Repo, peel bool) (refs []advRef, head plumbing.Hash, err error) {
	refs = make([]advRef, 0, len(repo.Refs))
	for _, r := range repo.Refs {
		if r.Hash.IsZero() || !strings.HasPrefix(string(r.Name), "refs/") {
			continue
		}
		refs = append(refs, advRef{name: string(r.Name), hash: r.Hash})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].name < refs[j].name })
	// Drop duplicates (keeping the first).
	out := refs[:0]
	for i, r := range refs {
		if i > 0 && r.name == refs[i-1].name {
			continue
		}
		out = append(out, r)
	}
	refs = out
	if repo.Head != "" {
		i := sort.Search(len(refs), func(i int) bool { return refs[i].name >= string(repo.Head) })
		if i < len(refs) && refs[i].name == string(repo.Head) {
			head = refs[i].hash
		}
	}
	if peel && src != nil {
		for i := range refs {
			p, isTag, err := peelTag(src, refs[i].hash)
			if err != nil {
				return nil, head, err
			}
			if isTag {
				refs[i].peeled = p
			}
		}
	}
	return refs, head, nil
}

// peelTag follows annotated tags from h; isTag reports whether h was one.
// A missing object is not an error here (the ref is advertised as is).
func peelTag(src objectSource, h plumbing.Hash) (plumbing.Hash, bool, error) {
	isTag := false
	for depth := 0; depth < 64; depth++ {
		t, data, err := src.Read(h)
		if err != nil {
			if err == gitpack.ErrNotFound {
				return h, isTag, nil
			}
			return h, isTag, err
		}
		if t != gitpack.Tag {
			return h, isTag, nil
		}
		target, _, ok := parseTagTarget(data)
		if !ok {
			return h, isTag, nil
		}
		isTag = true
		h = target
	}
	return h, isTag, nil
}

// AdvertiseUploadPack writes the whole body of GET
// info/refs?service=git-upload-pack: the "# service=git-upload-pack" pkt,
// a flush, then the refs with the capabilities on the first (HEAD first
// when it resolves, with symref=HEAD:<target>; annotated tags followed by
// their peeled "<name>^{}"), and a flush. An empty repository advertises
// only the header and the flushes.
func AdvertiseUploadPack(w io.Writer, repo Repo) error {
	p := newPktWriter(w)
	p.line("# service=git-upload-pack\n")
	p.flushPkt()
	if err := advertiseUploadPack(p, repo); err != nil {
		return err
	}
	return p.flush()
}

// advertiseUploadPack writes the refs and capabilities of upload-pack
// (without the smart HTTP service header) and the closing flush.
func advertiseUploadPack(p *pktWriter, repo Repo) error {
	var src objectSource
	if repo.Objects != nil {
		src = repo.Objects
	}
	refs, head, err := sortedRefs(src, repo, true)
	if err != nil {
		return err
	}
	caps := strings.Join(uploadPackCaps, " ")
	if !head.IsZero() {
		caps += " symref=HEAD:" + string(repo.Head)
	}
	caps += " agent=" + Agent
	first := true
	emit := func(h plumbing.Hash, name string) {
		if first {
			p.line(h.String() + " " + name + "\x00" + caps + "\n")
			first = false
			return
		}
		p.line(h.String() + " " + name + "\n")
	}
	if !head.IsZero() {
		emit(head, "HEAD")
	}
	for _, r := range refs {
		emit(r.hash, r.name)
		if !r.peeled.IsZero() {
			emit(r.peeled, r.name+"^{}")
		}
	}
	p.flushPkt()
	return nil
}

// AdvertiseReceivePack writes the whole body of GET
// info/refs?service=git-receive-pack with the given capabilities: the
// service header, a flush, the refs sorted by name (capabilities after the
// first; an empty repository advertises "capabilities^{}" with the zero
// id), and a flush.
func AdvertiseReceivePack(w io.Writer, repo Repo, caps []string) error {
	p := newPktWriter(w)
	p.line("# service=git-receive-pack\n")
	p.flushPkt()
	if err := advertiseReceivePack(p, repo, caps); err != nil {
		return err
	}
	return p.flush()
}

// advertiseReceivePack writes the refs and capabilities of receive-pack
// (without the smart HTTP service header) and the closing flush.
func advertiseReceivePack(p *pktWriter, repo Repo, caps []string) error {
	refs, _, err := sortedRefs(nil, repo, false)
	if err != nil {
		return err
	}
	capStr := strings.Join(caps, " ")
	if len(refs) == 0 {
		p.line(plumbing.ZeroHash.String() + " capabilities^{}\x00" + capStr + "\n")
	}
	for i, r := range refs {
		if i == 0 {
			p.line(r.hash.String() + " " + r.name + "\x00" + capStr + "\n")
			continue
		}
		p.line(r.hash.String() + " " + r.name + "\n")
	}
	p.flushPkt()
	return nil
}
