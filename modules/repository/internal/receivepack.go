package internal

// receive-pack: the push side of the protocol. One POST carries the ref
// commands and the pack. The pack goes to quarantine first; each command is
// checked (ref name, object type, branch protection, the default branch);
// the accepted tips must be connected; only then is the pack installed and
// are the refs moved, each with a compare-and-set under the project's ref
// lock (all or none with the atomic capability). Whatever is refused leaves
// the repository as it was. The report goes back in git's report-status
// format, inside side-band packets when the client asked for them, and
// refusals are also shown as "remote:" lines.

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitserve"
)

// pushCommand is one ref update of a push and its outcome.
type pushCommand struct {
	old, new plumbing.Hash
	ref      plumbing.ReferenceName
	refusal  string // empty when accepted so far
}

func (c *pushCommand) isDelete() bool { return c.new.IsZero() }
func (c *pushCommand) isCreate() bool { return c.old.IsZero() }

// push carries out the commands of a push read from any transport (smart
// HTTP, SSH) and writes the report to w. It returns an error, having
// written nothing, only when the repository cannot be opened.
func (g *Git) push(ctx context.Context, w io.Writer, info projects.ProjectInfo, req *gitserve.PushRequest) error {
	caps := req.Caps
	cmds := make([]*pushCommand, len(req.Commands))
	for i, c := range req.Commands {
		cmds[i] = &pushCommand{old: c.Old, new: c.New, ref: c.Ref}
	}
	var messages []string
	report := func(unpack string) {
		refusals := make([]string, len(cmds))
		for i, c := range cmds {
			refusals[i] = c.refusal
		}
		if err := gitserve.WritePushReport(w, req, unpack, refusals, messages); err != nil {
			g.log.Debug("git receive-pack: report", zap.Error(err))
		}
	}
	repo, err := g.st.Open(ctx, info.ID)
	if err != nil {
		g.log.Error("git receive-pack: open", zap.Int64("project", info.ID), zap.Error(err))
		return err
	}
	objs, err := g.st.Objects(info.ID)
	if err != nil {
		g.log.Error("git receive-pack: objects", zap.Int64("project", info.ID), zap.Error(err))
		return err
	}

	// A repack of this repository finishes before the push goes on.
	maint := g.st.maintenanceLock(info.ID)
	maint.RLock()
	defer maint.RUnlock()

	needPack := false
	for _, c := range cmds {
		needPack = needPack || !c.isDelete()
	}
	var in *gitpack.Incoming
	if needPack {
		in, err = objs.Receive(req.Pack, gitpack.ReceiveOptions{MaxBytes: g.maxPush})
		if err != nil {
			msg := unpackError(err, g.maxPush)
			g.log.Info("git receive-pack: pack refused", zap.Int64("project", info.ID), zap.Error(err))
			for _, c := range cmds {
				c.refusal = "unpacker error"
			}
			messages = append(messages, "error: "+msg)
			report(msg)
			return nil
		}
		defer func() { _ = in.Discard() }()
	}
	read := func(h gitpack.Hash) (gitpack.Type, []byte, error) {
		if in != nil {
			if t, data, err := in.Read(h); err == nil {
				return t, data, nil
			}
		}
		return objs.Read(h)
	}

	g.checkCommands(ctx, info, repo, read, cmds)
	if caps["atomic"] {
		failAtomic(cmds)
	}
	var tips []gitpack.Hash
	for _, c := range cmds {
		if c.refusal == "" && !c.isDelete() {
			tips = append(tips, c.new)
		}
	}
	if in != nil && len(tips) > 0 {
		// With receive_fsck_objects, the walk also checks the entry names
		// of every incoming tree (reached or not) as git fsck does.
		var checkName func([]byte) string
		if g.fsck {
			checkName = entryNameProblem
		}
		if err := objs.CheckConnectedTrees(in, tips, checkName); err != nil {
			refusal := "missing necessary objects"
			var bad *gitpack.TreeEntryError
			if errors.As(err, &bad) {
				refusal = "fsck error: " + bad.Problem
				messages = append(messages, "error: object "+bad.Tree.String()+": "+bad.Problem)
				g.log.Info("git receive-pack: fsck refused a tree", zap.Int64("project", info.ID),
					zap.String("object", bad.Tree.String()), zap.String("problem", bad.Problem))
			} else {
				g.log.Info("git receive-pack: not connected", zap.Int64("project", info.ID), zap.Error(err))
			}
			for _, c := range cmds {
				if c.refusal == "" && !c.isDelete() {
					c.refusal = refusal
				}
			}
			if caps["atomic"] {
				failAtomic(cmds)
			}
		}
	}
	accepted, keepPack := 0, false
	for _, c := range cmds {
		if c.refusal == "" {
			accepted++
			// Only a ref the push moves needs its objects; a pack kept
			// for deletes alone would hold objects nothing checked.
			keepPack = keepPack || !c.isDelete()
		}
	}
	if keepPack && in != nil && len(in.Objects()) > 0 {
		if err := objs.Install(in); err != nil {
			g.log.Error("git receive-pack: install", zap.Int64("project", info.ID), zap.Error(err))
			for _, c := range cmds {
				if c.refusal == "" {
					c.refusal = "could not store the objects"
				}
			}
			report("could not store the objects")
			return nil
		}
	}
	if accepted > 0 {
		// The refs move and their push events are published before the
		// client hears "ok" (refjournal.go).
		g.moveRefs(ctx, info, repo, cmds, caps["atomic"])
	}
	for _, c := range cmds {
		if c.refusal != "" && !caps["quiet"] {
			messages = append(messages, "error: "+c.ref.String()+": "+c.refusal)
		}
	}
	report("ok")
	g.afterPush(ctx, info, repo, cmds)
	return nil
}

// moveRefs applies the accepted commands, each only if its ref is still at
// the old value the client saw (refused as "fetch first" otherwise), through
// the ref journal, so that every ref that moves gets its push event.
func (g *Git) moveRefs(ctx context.Context, info projects.ProjectInfo, repo *git.Repository, cmds []*pushCommand, atomic bool) {
	projectID := info.ID
	var ups []RefUpdate
	var which []*pushCommand
	for _, c := range cmds {
		if c.refusal == "" {
			ups = append(ups, RefUpdate{Name: c.ref, Old: c.old, New: c.new})
			which = append(which, c)
		}
	}
	errs, err := g.w.moveRefs(ctx, info, repo, ups, atomic)
	if err != nil {
		// Nothing moved: without its journal entry a ref change could
		// lose its event.
		g.log.Error("git receive-pack: journal", zap.Int64("project", projectID), zap.Error(err))
		for _, c := range which {
			c.refusal = "failed to update the ref"
		}
		return
	}
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, ErrRefMoved):
			which[i].refusal = "fetch first"
		case errors.Is(err, errAtomicAborted):
			which[i].refusal = "atomic push failed"
		case errors.Is(err, errRefRead):
			which[i].refusal = "failed to read the ref"
		default:
			g.log.Error("update ref", zap.Int64("project", projectID), zap.String("ref", which[i].ref.String()), zap.Error(err))
			which[i].refusal = "failed to update the ref"
		}
	}
}

// unpackError is the reason shown for a pack that could not be taken.
func unpackError(err error, limit int64) string {
	if errors.Is(err, gitpack.ErrTooLarge) {
		return "pack exceeds the maximum push size of " + strconv.FormatInt(limit, 10) + " bytes"
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return "invalid pack: " + msg
}

// failAtomic refuses every command once one is refused.
func failAtomic(cmds []*pushCommand) {
	failed := false
	for _, c := range cmds {
		failed = failed || c.refusal != ""
	}
	if !failed {
		return
	}
	for _, c := range cmds {
		if c.refusal == "" {
			c.refusal = "atomic push failed"
		}
	}
}

// Refs under these prefixes are the server's own.
var reservedRefs = []string{"refs/merge-requests/", "refs/pipelines/", "refs/environments/", "refs/keep-around/"}

// The refusals a user reads, in GitLab's words where GitLab has some.
const (
	msgProtectedPush     = "You are not allowed to push code to protected branches on this project."
	msgProtectedForce    = "You are not allowed to force push code to a protected branch on this project."
	msgProtectedDelete   = "You are not allowed to delete protected branches from this project."
	msgDefaultDelete     = "The default branch of a project cannot be deleted."
	msgProtectionUnknown = "could not check the branch protection; try again"
)

// checkCommands refuses what may not happen, command by command.
func (g *Git) checkCommands(ctx context.Context, info projects.ProjectInfo, repo *git.Repository, read readFunc, cmds []*pushCommand) {
	ref := strconv.FormatInt(info.ID, 10)
	mayPushProtected, _ := g.access.Can(ctx, ref, projects.PushProtected)
	seen := map[plumbing.ReferenceName]bool{}
	for _, c := range cmds {
		name := c.ref.String()
		switch {
		case seen[c.ref]:
			c.refusal = "duplicate ref in one push"
			continue
		case !validPushRef(name, c.isDelete()):
			c.refusal = "funny refname"
			continue
		case c.old.IsZero() && c.new.IsZero():
			c.refusal = "nothing to do"
			continue
		}
		seen[c.ref] = true
		for _, p := range reservedRefs {
			if strings.HasPrefix(name, p) {
				c.refusal = "deny updating a hidden ref"
			}
		}
		if c.refusal != "" {
			continue
		}
		if !c.isDelete() {
			may := func() bool { return mayPushProtected }
			b, err := g.w.hiddenProtected(ctx, info.ID, name, may)
			if err != nil {
				g.log.Error("git receive-pack: protection", zap.Int64("project", info.ID), zap.Error(err))
				c.refusal = msgProtectionUnknown
				continue
			}
			if b != "" {
				c.refusal = "You are not allowed to create a ref that hides the protected branch " + b + "."
				continue
			}
		}
		if !c.isDelete() {
			t, _, err := read(c.new)
			switch {
			case err != nil:
				c.refusal = "missing necessary objects"
				continue
			case c.ref.IsBranch() && t != gitpack.Commit:
				c.refusal = "branches must point at commits"
				continue
			}
		}
		if !c.ref.IsBranch() {
			continue
		}
		branch := c.ref.Short()
		if c.isDelete() && branch == info.DefaultBranch {
			c.refusal = msgDefaultDelete
			continue
		}
		prot, err := g.w.protection(ctx, info.ID, branch)
		if err != nil {
			// Fail closed: an unreadable protection refuses the push.
			g.log.Error("git receive-pack: protection", zap.Int64("project", info.ID), zap.Error(err))
			c.refusal = msgProtectionUnknown
			continue
		}
		if prot == nil {
			continue
		}
		switch {
		case c.isDelete():
			c.refusal = msgProtectedDelete
		case !prot.allowsPush(func() bool { return mayPushProtected }):
			c.refusal = msgProtectedPush
		case !c.isCreate():
			ff, err := isAncestor(read, c.old, c.new)
			if err != nil || !ff {
				c.refusal = msgProtectedForce
			}
		}
	}
}

func hasBranches(repo *git.Repository) bool {
	iter, err := repo.Branches()
	if err != nil {
		return false
	}
	defer iter.Close()
	_, err = iter.Next()
	return err == nil
}

// afterPush records the pusher's activity. (The push events are published
// with the ref changes, and a first branch made the default, by moveRefs.)
func (g *Git) afterPush(ctx context.Context, info projects.ProjectInfo, repo *git.Repository, cmds []*pushCommand) {
	// The push happened: a client hanging up after "ok" must not stop this.
	ctx = context.WithoutCancel(ctx)
	var done []*pushCommand
	for _, c := range cmds {
		if c.refusal == "" {
			done = append(done, c)
		}
	}
	if len(done) == 0 {
		return
	}
	if uid := auth.FromContext(ctx).UserID(); uid != 0 && g.activity != nil {
		if err := g.activity.RecordActivity(ctx, uid); err != nil {
			g.log.Warn("git receive-pack: record activity", zap.Error(err))
		}
	}
	if g.hk != nil {
		g.hk.Pushed(ctx, info.ID)
	}
}
