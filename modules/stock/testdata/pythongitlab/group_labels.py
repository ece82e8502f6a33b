"""A script keeps a group's labels (create, list, get, save, delete) and a
project two levels down uses them: they are in its label list, its issues
take them by name, and its issue lists filter by them."""
from check import client, eq, raises

gl = client()
group = gl.groups.create({"name": "Labelled", "path": "labelled"})
team = gl.groups.create({"name": "Team", "path": "team", "parent_id": group.id})

bug = group.labels.create({"name": "bug", "color": "#d9534f", "description": "Broken"})
eq((bug.name, bug.color, bug.description), ("bug", "#d9534f", "Broken"), "group.labels.create")
group.labels.create({"name": "feature", "color": "#428bca"})
raises(lambda: group.labels.create({"name": "bug", "color": "#000000"}), 409, "a second bug in the group")
raises(lambda: team.labels.create({"name": "bug", "color": "#000000"}), 409, "a subgroup's bug while its parent has one")
eq([l.name for l in group.labels.list()], ["bug", "feature"], "group.labels.list()")
eq([l.name for l in team.labels.list()], ["bug", "feature"], "a subgroup lists its parent's labels")
eq(group.labels.get("bug").id, bug.id, "group.labels.get(name)")

# save() sends PUT /groups/:id/labels with the name and what changed.
feature = group.labels.get("feature")
feature.color = "#5843ad"
feature.description = "New things"
feature.save()
feature = group.labels.get("feature")
eq((feature.color, feature.description), ("#5843ad", "New things"), "label.save()")

project = gl.projects.create({"name": "app", "namespace_id": team.id})
project.labels.create({"name": "local", "color": "#000000"})
raises(lambda: project.labels.create({"name": "bug", "color": "#000000"}), 409, "a project label named as its group's")
eq([(l.name, l.is_project_label) for l in project.labels.list()],
   [("bug", False), ("feature", False), ("local", True)], "project.labels.list() with its groups' labels")

crash = project.issues.create({"title": "crash", "labels": ["bug", "local"]})
eq(crash.labels, ["bug", "local"], "issues.create with a group label")
project.issues.create({"title": "idea", "labels": ["feature"]})
eq([i.title for i in project.issues.list(labels=["bug"])], ["crash"], "issues.list(labels=[a group label])")
eq(project.labels.get("bug").open_issues_count, 1, "the project's count of a group label")
eq([(l.name, l.open_issues_count) for l in group.labels.list(with_counts=True)], [("bug", 1), ("feature", 1)],
   "group.labels.list(with_counts=True)")

# A rename reaches the issues; a delete takes the label off them.
bug = group.labels.get("bug")
bug.new_name = "defect"
bug.save()
eq(bug.name, "defect", "label.save() with new_name")
eq(project.issues.get(crash.iid).labels, ["defect", "local"], "the issue after the rename")
eq([i.title for i in project.issues.list(labels=["defect"])], ["crash"], "issues.list by the new name")
bug.delete()
group.labels.delete("feature")
eq(group.labels.list(), [], "group labels after delete()")
eq(project.issues.get(crash.iid).labels, ["local"], "the issue after the delete")
raises(lambda: group.labels.get("defect"), 404, "a deleted group label")
