package gitpack

// Read reads an object of the incoming pack itself (ErrNotFound for any
// other): receive-pack checks pushed objects before they are installed.
func (in *Incoming) Read(h Hash) (Type, []byte, error) {
	if in == nil || in.p == nil {
		return 0, nil, ErrNotFound
	}
	sn := &snapshot{packs: []*pack{in.p}}
	if p, i, ok := sn.find(h); ok {
		return in.s.readEntry(sn, p, p.idx.offset(i))
	}
	return 0, nil, ErrNotFound
}
