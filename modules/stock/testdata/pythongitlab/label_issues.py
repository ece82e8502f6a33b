"""A script files and labels issues; python-gitlab sends lists as JSON
arrays (they were refused as '400 labels is invalid')."""
from check import client, eq

gl = client()
project = gl.projects.create({"name": "labelled"})
for name, color in [("bug", "#d9534f"), ("ui", "#5843ad"), ("backend", "#428bca")]:
    project.labels.create({"name": name, "color": color})

issue = project.issues.create({"title": "crash on start", "labels": ["bug", "ui"]})
eq(sorted(issue.labels), ["bug", "ui"], "issues.create with a list of labels")
issue.labels = ["backend"]
issue.save()
eq(project.issues.get(issue.iid).labels, ["backend"], "issue.save() with a list of labels")
eq([i.iid for i in project.issues.list(labels=["backend"], get_all=True)], [issue.iid], "issues.list(labels=[...])")

# A label read by name (405 before, while PUT and DELETE worked).
label = project.labels.get("backend")
eq((label.name, label.color, label.open_issues_count), ("backend", "#428bca", 1), "labels.get by name")
