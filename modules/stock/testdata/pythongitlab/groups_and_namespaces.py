"""A script reads namespaces, plans a group milestone and sets a group CI
variable that a job of the group's project receives."""
from check import client, eq, raises, until

gl = client()
group = gl.groups.create({"name": "Platform", "path": "platform"})

# Namespaces: the caller's own and the group, searchable, readable by id.
found = gl.namespaces.list(search="platf")
eq([(n.kind, n.path, n.full_path) for n in found], [("group", "platform", "platform")], "namespaces.list(search=)")
ns = gl.namespaces.get(group.id)
eq((ns.id, ns.kind, ns.name, ns.parent_id), (group.id, "group", "Platform", None), "namespaces.get(id)")
eq(gl.namespaces.get("platform").id, group.id, "namespaces.get(path)")
eq("root" in [n.path for n in gl.namespaces.list(get_all=True)], True, "the caller's own namespace is listed")
raises(lambda: gl.namespaces.get(999999), 404, "namespaces.get(missing)")

# Group milestones, and an issue of the group's project that takes one.
ms = group.milestones.create({"title": "Q1", "description": "first quarter", "due_date": "2027-03-31"})
eq((ms.iid, ms.group_id, ms.title, ms.state, ms.due_date), (1, group.id, "Q1", "active", "2027-03-31"),
   "group.milestones.create()")
ms.state_event = "close"
ms.save()
eq(group.milestones.get(ms.id).state, "closed", "a group milestone closed")
eq([m.title for m in group.milestones.list(state="closed")], ["Q1"], "group.milestones.list(state='closed')")
project = gl.projects.create({"name": "svc", "namespace_id": group.id})
issue = project.issues.create({"title": "ship it", "milestone_id": ms.id})
eq(issue.milestone["id"], ms.id, "an issue takes its group's milestone")
eq([i.title for i in ms.issues()], ["ship it"], "group milestone issues()")

# Group CI variables reach the jobs of the group's projects.
var = group.variables.create({"key": "K", "value": "v"})
eq((var.key, var.value, var.protected), ("K", "v", False), "group.variables.create()")
eq([v.key for v in group.variables.list()], ["K"], "group.variables.list()")
project.files.create({"file_path": ".gitlab-ci.yml", "branch": "master",
                      "content": "echo:\n  script: [\"echo $K\"]\n", "commit_message": "ci"})
until(lambda: project.jobs.list(get_all=True), "a job for the pushed .gitlab-ci.yml")
# No executor here: a runner of the project picks the job up and is given
# the group's variable.
runner = gl.http_post("/runners", post_data={"token": gl.projects.get(project.id).runners_token})
job = until(lambda: gl.http_post("/jobs/request", post_data={"token": runner["token"]}), "the job for a runner")
eq([(v["key"], v["value"]) for v in job["variables"] if v["key"] == "K"], [("K", "v")], "a job receives the group variable")
