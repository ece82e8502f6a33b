package internal

// One git command over SSH: who runs it, on which project, under the
// same rules as smart HTTP.

import (
	"context"
	"errors"
	"fmt"
	"net"

	"go.uber.org/zap"
	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitserve"
)

// What a user reads on stderr when a command is refused. Unknown
// projects, projects the user may not see and paths that name no project
// read alike, so that nothing tells them apart.
const (
	msgSSHNotFound   = "The project you were looking for could not be found or you don't have permission to view it."
	msgSSHNotAllowed = "Fennec serves git only: the command is not allowed (git-upload-pack and git-receive-pack are)."
	msgSSHArchive    = "git-upload-archive is not served; download archives through the API (GET /projects/:id/repository/archive)."
	msgSSHKeyGone    = "The key you authenticated with is no longer registered."
	msgSSHInternal   = "An internal error occurred; try again later."
)

// exec runs one command and returns its exit status; refusals go to the
// channel's stderr.
func (s *SSHServer) exec(ctx context.Context, conn *ssh.ServerConn, ch ssh.Channel, line, gitProtocol string) int {
	refuse := func(msg string) int {
		fmt.Fprintln(ch.Stderr(), msg)
		return 1
	}
	if !s.begin() {
		return refuse("The server is shutting down; try again in a moment.")
	}
	defer s.end()
	cmd, err := parseSSHCommand(line)
	switch {
	case errors.Is(err, errSSHCommand):
		s.log.Info("ssh: command refused", zap.String("remote", conn.RemoteAddr().String()), zap.String("command", clip(line, 200)))
		return refuse(msgSSHNotAllowed)
	case cmd.service == svcUploadArchive:
		return refuse(msgSSHArchive)
	case err != nil:
		return refuse(msgSSHNotFound)
	}

	// The key's owner again: a key deleted or a user blocked since the
	// connection was opened stops here.
	owner, err := s.keys.SSHKeyOwner(ctx, []byte(conn.Permissions.Extensions[permKey]))
	if errors.Is(err, identity.ErrKeyNotFound) {
		return refuse(msgSSHKeyGone)
	}
	if err != nil {
		s.log.Error("ssh: key lookup", zap.Error(err))
		return refuse(msgSSHInternal)
	}
	p, err := auth.ForUser(owner.User)
	if err != nil {
		return refuse(msgBlocked)
	}
	uid := p.UserID()
	if !s.acquireUser(uid) {
		return refuse(fmt.Sprintf("Too many git sessions at once for this user (at most %d); try again later.", s.cfg.SSHMaxSessionsPerUser))
	}
	defer s.releaseUser(uid)
	ctx = auth.WithPrincipal(ctx, p)
	if host, _, err := net.SplitHostPort(conn.RemoteAddr().String()); err == nil {
		ctx = auth.WithClientAddr(ctx, host)
	}

	push := cmd.service == svcReceivePack
	action := projects.ReadCode
	if push {
		action = projects.PushCode
	}
	g := s.git
	info, err := g.access.Require(ctx, cmd.project, action)
	if err != nil {
		notFound, forbidden := errors.Is(err, projects.ErrNotFound), errors.Is(err, projects.ErrForbidden)
		switch {
		case forbidden && push:
			msg := "You are not allowed to push code to this project."
			if seen, err := g.access.Resolve(ctx, cmd.project); err == nil && seen.Archived {
				msg = "You are not allowed to push code to an archived project."
			}
			return refuse(msg)
		case forbidden:
			return refuse("You are not allowed to download code from this project.")
		case notFound:
			return refuse(msgSSHNotFound)
		}
		s.log.Error("ssh: access", zap.Error(err))
		return refuse(msgSSHInternal)
	}
	if g.activity != nil {
		if err := g.activity.RecordActivity(ctx, uid); err != nil {
			s.log.Warn("ssh: record activity", zap.Error(err))
		}
	}
	log := s.log.With(zap.String("service", cmd.service), zap.Int64("project", info.ID), zap.Int64("user", uid))
	repo, _, err := g.repoFor(ctx, info.ID)
	if err != nil {
		log.Error("ssh: open repository", zap.Error(err))
		return refuse(msgSSHInternal)
	}
	version := gitserve.ProtocolVersion(gitProtocol)
	if !push {
		if err := gitserve.ServeUploadPack(ctx, ch, ch, repo, version); err != nil {
			log.Info("ssh: upload-pack ended with an error", zap.Error(err))
			return 1
		}
		return 0
	}
	if err := gitserve.AdvertiseReceivePackSession(ch, repo, receivePackCaps, version); err != nil {
		log.Debug("ssh: advertise", zap.Error(err))
		return 1
	}
	req, err := gitserve.ReadPushRequest(ch)
	if err != nil {
		var re *gitserve.RequestError
		if errors.As(err, &re) {
			return refuse("fatal: " + re.Msg)
		}
		return refuse("fatal: bad request")
	}
	if len(req.Commands) == 0 {
		return 0 // nothing to update
	}
	if err := g.push(ctx, ch, info, req); err != nil {
		return refuse(msgSSHInternal)
	}
	return 0
}

// clip shortens s for a log line.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
