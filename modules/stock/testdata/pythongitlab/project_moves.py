"""A script looks at a project's forks, a user's projects and everyone with
access to a project, and moves a project into a group."""
from check import client, eq, raises

gl = client()
users = {}
for name in ("ada", "bea", "cyd"):
    u = gl.users.create({"email": f"{name}@example.com", "username": name, "name": name.title(),
                         "password": "a-long-password-1", "skip_confirmation": True})
    users[name] = (u, client(u.impersonationtokens.create({"name": "script", "scopes": ["api"]}).token))
ada, ada_gl = users["ada"]
bea, bea_gl = users["bea"]
cyd, cyd_gl = users["cyd"]

tool = ada_gl.projects.create({"name": "tool", "visibility": "public"})
tool.files.create({"file_path": "README.md", "branch": "master", "content": "tool\n", "commit_message": "first"})
ada_gl.projects.create({"name": "secret", "visibility": "private"})

# Forks: the public ones show to anyone.
bea_gl.projects.get(tool.id).forks.create({})
cyd_fork = cyd_gl.projects.get(tool.id).forks.create({})
cyd_gl.projects.update(cyd_fork.id, {"visibility": "private"})
eq([p.path_with_namespace for p in tool.forks.list(get_all=True)], ["bea/tool"], "forks.list() as the owner")
eq(sorted(p.path_with_namespace for p in gl.projects.get(tool.id).forks.list(get_all=True)),
   ["bea/tool", "cyd/tool"], "forks.list() as an administrator")

# A user's projects, as another user sees them.
eq([p.path for p in bea_gl.users.get(ada.id).projects.list(get_all=True)], ["tool"], "user.projects.list() of another user")
eq([p.path for p in gl.users.get(ada.id).projects.list(get_all=True, order_by="name", sort="asc")],
   ["secret", "tool"], "user.projects.list() as an administrator")

# Everyone with access: members of the project, of its group, and the
# owner of a personal project.
team = ada_gl.groups.create({"name": "team", "path": "team"})
team.members.create({"user_id": bea.id, "access_level": 30})
tool.members.create({"user_id": cyd.id, "access_level": 20})
eq(sorted((m.username, m.access_level) for m in tool.members_all.list(get_all=True)),
   [("ada", 50), ("cyd", 20)], "members_all.list() of a personal project")
eq([m.username for m in tool.members.list(get_all=True)], ["cyd"], "members.list() holds the explicit ones only")

# The move: into the group, by path. The project keeps its id and
# repository; its path follows the group; the old owner stays a member.
tool.transfer("team")
moved = ada_gl.projects.get(tool.id)
eq((moved.path_with_namespace, moved.namespace["kind"]), ("team/tool", "group"), "transfer() into a group")
eq(moved.web_url.endswith("/team/tool"), True, "the web_url follows")
eq(ada_gl.projects.get("team/tool").id, tool.id, "the new path names it")
raises(lambda: ada_gl.projects.get("ada/tool"), 404, "the old path does not")
eq(moved.files.get("README.md", ref="master").decode(), b"tool\n", "the repository moved with it")
eq(sorted((m.username, m.access_level) for m in moved.members_all.list(get_all=True)),
   [("ada", 50), ("bea", 30), ("cyd", 20)], "members_all.list() of the moved project")
eq(moved.members_all.get(bea.id).access_level, 30, "members_all.get() of a group member")

# Who may not move it, and where it cannot go.
raises(lambda: bea_gl.projects.get(tool.id).transfer("bea"), 403, "transfer() by a Developer")
e = raises(lambda: ada_gl.projects.get(tool.id).transfer("team"), 400, "transfer() to where it is")
eq(e.error_message, 'Failed to transfer project {:new_namespace=>["Please select a new namespace for your project."]}',
   "its message")
raises(lambda: ada_gl.projects.get(tool.id).transfer("bea"), 404, "transfer() into another user's namespace")
