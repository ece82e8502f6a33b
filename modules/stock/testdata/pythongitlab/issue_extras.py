"""A script reads who takes part in an issue and how its labels changed,
lists a milestone's merge requests and asks for a repository's
housekeeping."""
from check import client, eq, raises

gl = client()
alice = gl.users.create({"username": "alice", "name": "Alice", "email": "alice@example.com",
                         "password": "alice-password-1", "skip_confirmation": True})
bob = gl.users.create({"username": "bob", "name": "Bob", "email": "bob@example.com",
                       "password": "bob-password-1", "skip_confirmation": True})
project = gl.projects.create({"name": "extras"})
for user in (alice, bob):
    project.members.create({"user_id": user.id, "access_level": 30})
project.files.create({"file_path": "README", "branch": "master", "content": "x", "commit_message": "init"})

# Participants: the author, the assignee, a commenter, the mentioned.
issue = project.issues.create({"title": "Crash", "description": "seen by @bob", "assignee_ids": [alice.id]})
issue.notes.create({"body": "cannot reproduce"})
eq([u["username"] for u in issue.participants()], ["root", "alice", "bob"], "issue.participants()")
eq(sorted(issue.participants()[0].keys()), ["avatar_url", "id", "name", "state", "username", "web_url"],
   "a participant is a basic user")

# Label events, from creation on.
issue.labels = ["bug"]
issue.save()
issue.labels = ["bug", "p1"]
issue.save()
issue.labels = ["p1"]
issue.save()
events = issue.resourcelabelevents.list(get_all=True)
eq([(e.label["name"], e.action) for e in events], [("bug", "add"), ("p1", "add"), ("bug", "remove")],
   "issue.resourcelabelevents.list()")
eq((events[0].resource_type, events[0].resource_id, events[0].user["username"]), ("Issue", issue.id, "root"),
   "a label event's resource and user")
eq(issue.resourcelabelevents.get(events[2].id).action, "remove", "issue.resourcelabelevents.get()")

# A milestone's merge requests.
milestone = project.milestones.create({"title": "v1.0"})
project.branches.create({"branch": "feature", "ref": "master"})
project.branches.create({"branch": "other", "ref": "master"})
mr = project.mergerequests.create({"source_branch": "feature", "target_branch": "master", "title": "Feature",
                                   "milestone_id": milestone.id})
project.mergerequests.create({"source_branch": "other", "target_branch": "master", "title": "Other"})
eq([m.iid for m in milestone.merge_requests()], [mr.iid], "milestone.merge_requests()")
eq([u["username"] for u in mr.participants()], ["root"], "mr.participants()")

# Housekeeping: a Master's; a Developer is refused.
project.housekeeping()
print("ok   project.housekeeping()")
alice_gl = gl.__class__(gl.url, private_token=alice.impersonationtokens.create(
    {"name": "script", "scopes": ["api"]}).token)
raises(lambda: alice_gl.projects.get(project.id, lazy=True).housekeeping(), 403, "housekeeping by a Developer")
