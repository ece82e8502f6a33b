package internal

// Ref names, in one place: which names a user may give a new branch or tag
// (git check-ref-format's rules plus GitLab's), and how a name a client asks
// for is found (git rev-parse's order, a full name first). A branch named
// "refs/heads/master" would otherwise shadow the real, protected master for
// every client that asks for the fully qualified name.

import (
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// maxRefLength bounds any ref name taken from a client.
const maxRefLength = 1024

// validRef refuses what is never a name a client means when looking a ref
// up: control characters, a leading dash (an option to git), "..", "@{"
// and other revision syntax, invalid UTF-8.
func validRef(ref string) bool {
	if ref == "" || len(ref) > maxRefLength || strings.HasPrefix(ref, "-") || strings.Contains(ref, "..") ||
		strings.Contains(ref, "@{") || !utf8.ValidString(ref) {
		return false
	}
	for _, r := range ref {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	return true
}

// checkRefFormat reports whether full, a complete ref name such as
// refs/heads/topic, follows git check-ref-format's rules: no empty
// component or leading, trailing or double slash, no component starting
// with "." or ending in ".lock", no trailing ".", no "..", no "@{", not
// "@", no control character, space or any of ~^:?*[\. Names that are not
// valid UTF-8 are refused too: they cannot be shown in JSON.
func checkRefFormat(full string) bool {
	if full == "@" || !validRef(full) || strings.HasSuffix(full, ".") {
		return false
	}
	for _, c := range strings.Split(full, "/") {
		if c == "" || strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	return true
}

// validBranchName reports whether a user may create a branch of that
// (short) name: git's rules for refs/heads/<name>, and what git and GitLab
// refuse besides, a leading dash, "HEAD", "@" and a name starting with
// "refs/" (it would read as a fully qualified ref).
func validBranchName(name string) bool {
	return name != "HEAD" && name != "@" && !strings.HasPrefix(name, "refs/") && !strings.HasPrefix(name, "-") &&
		checkRefFormat("refs/heads/"+name)
}

// validTagName is validBranchName for tags: GitLab checks both with the
// same validator.
func validTagName(name string) bool { return validBranchName(name) }

// validPushRef reports whether a push may create or move (or, del, delete)
// the ref full. Branches and tags must have names one could create through
// the API; a delete needs only a well-formed name, so that a badly named ref
// made before these rules can still be removed.
func validPushRef(full string, del bool) bool {
	if !strings.HasPrefix(full, "refs/") || !checkRefFormat(full) {
		return false
	}
	if del {
		return true
	}
	switch {
	case strings.HasPrefix(full, "refs/heads/"):
		return validBranchName(strings.TrimPrefix(full, "refs/heads/"))
	case strings.HasPrefix(full, "refs/tags/"):
		return validTagName(strings.TrimPrefix(full, "refs/tags/"))
	}
	return true
}

// refCandidates are the full names git rev-parse tries for rev, in its
// order: rev itself when it is a full name (or HEAD), then refs/<rev>,
// refs/tags/<rev>, refs/heads/<rev>, refs/remotes/<rev> and
// refs/remotes/<rev>/HEAD. So "refs/heads/master" is master even when a
// branch of that name exists, and a tag wins over a branch of the same name.
func refCandidates(rev string) []plumbing.ReferenceName {
	out := make([]plumbing.ReferenceName, 0, 6)
	if rev == "HEAD" || strings.HasPrefix(rev, "refs/") {
		out = append(out, plumbing.ReferenceName(rev))
	}
	return append(out,
		plumbing.ReferenceName("refs/"+rev),
		plumbing.ReferenceName("refs/tags/"+rev),
		plumbing.ReferenceName("refs/heads/"+rev),
		plumbing.ReferenceName("refs/remotes/"+rev),
		plumbing.ReferenceName("refs/remotes/"+rev+"/HEAD"))
}

// lookupRef finds the ref rev names, as git rev-parse does (symbolic refs
// followed). Every API parameter that names "a branch, tag or commit" goes
// through here (by resolveCommit).
func lookupRef(repo *git.Repository, rev string) (*plumbing.Reference, error) {
	if !validRef(rev) {
		return nil, plumbing.ErrReferenceNotFound
	}
	for _, name := range refCandidates(rev) {
		if r, err := repo.Reference(name, true); err == nil {
			return r, nil
		}
	}
	return nil, plumbing.ErrReferenceNotFound
}

// branchRef is the branch of that short name (symbolic refs followed);
// parameters that name a branch, and only a branch, use it.
func branchRef(repo *git.Repository, name string) (*plumbing.Reference, error) {
	if !validRef(name) {
		return nil, plumbing.ErrReferenceNotFound
	}
	return repo.Reference(plumbing.NewBranchReferenceName(name), true)
}

// tagRef is the tag of that short name.
func tagRef(repo *git.Repository, name string) (*plumbing.Reference, error) {
	if !validRef(name) {
		return nil, plumbing.ErrReferenceNotFound
	}
	return repo.Reference(plumbing.NewTagReferenceName(name), true)
}

// isHex reports whether s is only hexadecimal digits.
func isHex(s string) bool {
	return strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}

// shadowedBranches are the branches a ref outside refs/heads/ hides from a
// client that asks for the branch by its short name: git looks refs/<x>
// and refs/tags/<x> up before refs/heads/<x>, so a tag "master" (or a ref
// refs/master) is what "master" means. Creating one is a way around a
// branch's protection, like a branch named refs/heads/master was.
func shadowedBranches(full string) []string {
	if strings.HasPrefix(full, "refs/heads/") || !strings.HasPrefix(full, "refs/") {
		return nil
	}
	out := []string{strings.TrimPrefix(full, "refs/")}
	if tag, ok := strings.CutPrefix(full, "refs/tags/"); ok {
		out = append(out, tag)
	}
	return out
}
