"""A maintainer's script protects branches through the protected branches API
(python-gitlab has no other way to protect one), with push and merge access
levels and a wildcard, and a developer's writes obey them."""
import gitlab

from check import client, eq, raises

gl = client()
project = gl.projects.create({"name": "guarded"})
project.files.create({"file_path": "README.md", "branch": "main", "content": "hello\n", "commit_message": "first"})
project.branches.create({"branch": "release-1", "ref": "main"})

dev = gl.users.create({"email": "devon@example.com", "username": "devon", "name": "Devon",
                       "password": "a-long-password-1", "skip_confirmation": True})
project.members.create({"user_id": dev.id, "access_level": gitlab.const.DEVELOPER_ACCESS})
dev_token = dev.impersonationtokens.create({"name": "script", "scopes": ["api"]}).token
dev_project = client(dev_token).projects.get(project.id, lazy=True)

masters = [{"access_level": 40, "access_level_description": "Masters"}]
developers = [{"access_level": 30, "access_level_description": "Developers + Masters"}]

pb = project.protectedbranches.create({"name": "main", "push_access_level": 40, "merge_access_level": 30})
eq((pb.name, pb.push_access_levels, pb.merge_access_levels), ("main", masters, developers), "protectedbranches.create()")
raises(lambda: project.protectedbranches.create({"name": "main"}), 409, "protecting main twice")
wild = project.protectedbranches.create({"name": "release-*"})
eq((wild.push_access_levels, wild.merge_access_levels), (masters, masters), "a wildcard with the default levels")

eq([p.name for p in project.protectedbranches.list()], ["main", "release-*"], "protectedbranches.list()")
got = project.protectedbranches.get("release-*")
eq((got.name, got.push_access_levels), ("release-*", masters), "protectedbranches.get() of a wildcard")
raises(lambda: project.protectedbranches.get("release-1"), 404, "get() of a branch only a wildcard covers")

# The branches API agrees, wildcards included.
eq(project.branches.get("main").protected, True, "main protected in the branches API")
eq(project.branches.get("release-1").protected, True, "release-1 protected by release-*")

# A developer may neither read the protections nor push to a protected branch.
raises(lambda: dev_project.protectedbranches.list(), 403, "a developer lists protected branches")
for branch in ["main", "release-1"]:
    raises(lambda: dev_project.files.create({"file_path": "dev.txt", "branch": branch, "content": "d",
                                             "commit_message": "dev"}), 403, f"a developer commits to {branch}")

# Unprotecting frees the branch.
got.delete()
project.protectedbranches.delete("main")
eq(project.protectedbranches.list(), [], "protectedbranches.list() after delete()")
eq(project.branches.get("release-1").protected, False, "release-1 after its wildcard is gone")
f = dev_project.files.create({"file_path": "dev.txt", "branch": "release-1", "content": "d", "commit_message": "dev"})
eq(f.file_path, "dev.txt", "a developer commits to release-1 once it is unprotected")
