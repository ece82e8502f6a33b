"""A script builds a tree of subgroups, finds them by their full paths,
gives a member of the top group work two levels down, and lists what is
below a group."""
import gitlab

from check import URL, client, eq, raises

gl = client()
top = gl.groups.create({"name": "Acme", "path": "acme", "visibility": "internal"})
web = gl.groups.create({"name": "Web", "path": "web", "parent_id": top.id})
eq((web.full_path, web.full_name, web.parent_id), ("acme/web", "Acme / Web", top.id), "groups.create(parent_id=)")
ui = gl.groups.create({"name": "UI", "path": "ui", "parent_id": web.id})
eq(gl.groups.get("acme/web/ui").id, ui.id, "groups.get(full path)")
eq(gl.namespaces.get("acme/web").parent_id, top.id, "namespaces.get(full path).parent_id")

project = gl.projects.create({"name": "site", "namespace_id": ui.id})
eq(project.path_with_namespace, "acme/web/ui/site", "a project's path in a subgroup")
eq(project.namespace["full_path"], "acme/web/ui", "its namespace's full_path")
eq(gl.projects.get("acme/web/ui/site").id, project.id, "projects.get(nested path)")

# A Developer of acme works in acme/web/ui/site without being added there.
dev = gl.users.create({"username": "dev", "name": "Dev", "email": "dev@example.com", "password": "s3cret-pass-word"})
top.members.create({"user_id": dev.id, "access_level": gitlab.const.DEVELOPER_ACCESS})
tok = dev.impersonationtokens.create({"name": "t", "scopes": ["api"]}).token
as_dev = client(tok)
site = as_dev.projects.get("acme/web/ui/site")
site.files.create({"file_path": "index.html", "branch": "master", "content": "<p>hi</p>", "commit_message": "first"})
eq([c.title for c in site.commits.list()], ["first"], "an inherited Developer commits two levels down")
raises(lambda: as_dev.groups.create({"name": "X", "path": "x", "parent_id": web.id}), 403, "a Developer makes no subgroup")
eq(sorted(m.username for m in ui.members_all.list(get_all=True)), ["dev", "root"], "members_all of the deepest group")

# What is below a group.
eq([g.full_path for g in top.subgroups.list()], ["acme/web"], "group.subgroups.list()")
eq([g.full_path for g in top.descendant_groups.list()], ["acme/web/ui", "acme/web"], "group.descendant_groups.list() by name")
eq([p.path for p in top.projects.list(include_subgroups=True)], ["site"], "group.projects.list(include_subgroups=True)")
eq([p.path for p in top.projects.list()], [], "group.projects.list() holds the group's own")

# Deleting the middle group takes the tree below it.
web.delete()
raises(lambda: gl.groups.get(ui.id), 404, "a subgroup goes with its parent")
raises(lambda: gl.projects.get(project.id), 404, "and its projects")
