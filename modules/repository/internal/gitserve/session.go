package gitserve

// Sessions: the protocol on one two-way stream (git over SSH), where the
// server speaks first and a whole fetch or push is one conversation, not
// a series of stateless requests. The advertisements carry no "# service="
// header; upload-pack negotiates round after round on the same stream
// (each answer pushed to the client as soon as it is complete), and
// protocol v2 serves commands until the client ends with a flush or EOF.

import (
	"context"
	"errors"
	"io"
	"strings"
)

// ProtocolVersion is the version a GIT_PROTOCOL value (colon-separated
// key=value, as git sends it in the environment of an SSH session) asks
// for: 2, 1, or 0 when it names none of them.
func ProtocolVersion(gitProtocol string) int {
	v := 0
	for _, kv := range strings.Split(gitProtocol, ":") {
		switch strings.TrimSpace(kv) {
		case "version=2":
			return 2
		case "version=1":
			v = 1
		}
	}
	return v
}

// ServeUploadPack serves one git-upload-pack session on a two-way stream:
// r is what the client sends, w what it reads. version is
// ProtocolVersion of the client's GIT_PROTOCOL: with 2 the capability
// advertisement and then every command the client sends (ls-refs, fetch)
// until it ends; otherwise the ref advertisement ("version 1" first for
// 1), the wants, the negotiation rounds and the pack. Request errors are
// reported to the client with an "ERR" pkt-line, as with UploadPack.
func ServeUploadPack(ctx context.Context, w io.Writer, r io.Reader, repo Repo, version int) error {
	if repo.Objects == nil {
		return errors.New("gitserve: no object store")
	}
	pw := newPktWriter(w)
	pr := newPktReader(r)
	if version == 2 {
		for _, c := range v2Caps {
			pw.line(c + "\n")
		}
		pw.flushPkt()
		if err := pw.flush(); err != nil {
			return err
		}
		for {
			s := &uploadState{ctx: ctx, repo: repo, src: repo.Objects, pack: repo.Objects, pr: pr, pw: pw, v2: true}
			pw.sentPack = false
			command, args, err := s.readV2Request()
			if err == nil && command == "" {
				return nil // the client is done
			}
			if err == nil {
				err = s.runV2Command(command, args)
			}
			if err != nil {
				if !pw.sentPack {
					pw.line("ERR " + clientMessage(err) + "\n")
				}
				_ = pw.flush()
				return err
			}
			if err := pw.flush(); err != nil {
				return err
			}
		}
	}
	if version == 1 {
		pw.line("version 1\n")
	}
	if err := advertiseUploadPack(pw, repo); err != nil {
		return err
	}
	if err := pw.flush(); err != nil {
		return err
	}
	s := &uploadState{ctx: ctx, repo: repo, src: repo.Objects, pack: repo.Objects, pr: pr, pw: pw, stateful: true}
	err := s.run(repo.Objects.ClosedPacks())
	if err != nil && !pw.sentPack {
		pw.line("ERR " + clientMessage(err) + "\n")
	}
	if ferr := pw.flush(); err == nil && ferr != nil {
		err = ferr
	}
	return err
}

// AdvertiseReceivePackSession writes the ref advertisement that opens a
// git-receive-pack session on a two-way stream ("version 1" first when
// version is 1; protocol v2 has no push, so 2 is served as 0, as git
// does). The caller then reads the request with ReadPushRequest from the
// same stream and answers with WritePushReport.
func AdvertiseReceivePackSession(w io.Writer, repo Repo, caps []string, version int) error {
	p := newPktWriter(w)
	if version == 1 {
		p.line("version 1\n")
	}
	if err := advertiseReceivePack(p, repo, caps); err != nil {
		return err
	}
	return p.flush()
}
