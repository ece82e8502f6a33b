"""A team votes on an issue and a merge request with award emoji, as a
script does: issue.awardemojis, note.awardemojis, mr.awardemojis, and a
comment that is only ':+1:'. upvotes and downvotes count the votes (they
were always 0, and ':+1:' was stored as a comment)."""
from check import client, eq, raises

gl = client()
project = gl.projects.create({"name": "votes"})
project.files.create({"file_path": "README.md", "branch": "main", "content": "hi\n",
                      "commit_message": "first"})
project.branches.create({"branch": "feature", "ref": "main"})
project.files.create({"file_path": "b.txt", "branch": "feature", "content": "b\n",
                      "commit_message": "feature"})

voters = []
for name in ("ann", "ben"):
    u = gl.users.create({"email": f"{name}@example.com", "username": name, "name": name.title(),
                         "password": "a-long-password-1", "skip_confirmation": True})
    project.members.create({"user_id": u.id, "access_level": 30})
    token = u.impersonationtokens.create({"name": "votes", "scopes": ["api"]}).token
    voters.append(client(token).projects.get(project.id))
ann, ben = voters

issue = project.issues.create({"title": "Should we ship?"})
up = ann.issues.get(issue.iid).awardemojis.create({"name": "thumbsup"})
eq((up.name, up.awardable_type, up.awardable_id, up.user["username"]),
   ("thumbsup", "Issue", issue.id, "ann"), "issue.awardemojis.create()")
ben.issues.get(issue.iid).awardemojis.create({"name": "-1"})
ben.issues.get(issue.iid).awardemojis.create({"name": "tada"})
eq([(a.user["username"], a.name) for a in issue.awardemojis.list(get_all=True)],
   [("ann", "thumbsup"), ("ben", "thumbsdown"), ("ben", "tada")], "issue.awardemojis.list()")
eq(issue.awardemojis.get(up.id).name, "thumbsup", "issue.awardemojis.get()")
got = project.issues.get(issue.iid)
eq((got.upvotes, got.downvotes), (1, 1), "upvotes and downvotes")

# The author does not vote on their own issue; nobody gives an emoji twice.
raises(lambda: issue.awardemojis.create({"name": "thumbsup"}), 404, "the author's own vote")
raises(lambda: ann.issues.get(issue.iid).awardemojis.create({"name": "+1"}), 404, "a second upvote")
raises(lambda: ann.issues.get(issue.iid).awardemojis.create({"name": "no_such_emoji"}), 404, "an unknown emoji")

# A comment that is only an emoji is an award.
award = ann.issues.get(issue.iid).notes.create({"body": ":tada:"})
eq((award.name, award.awardable_type), ("tada", "Issue"), "notes.create({'body': ':tada:'}) awards")
eq(len(issue.notes.list(get_all=True)), 0, "no comment stored for ':tada:'")

# Only its user (or an administrator) takes an award back.
raises(lambda: ann.issues.get(issue.iid).awardemojis.delete(
    [a for a in issue.awardemojis.list(get_all=True) if a.name == "tada" and a.user["username"] == "ben"][0].id),
    401, "someone else's award")
ann_issue = ann.issues.get(issue.iid)
ann_issue.awardemojis.get(up.id).delete()
eq(project.issues.get(issue.iid).upvotes, 0, "upvotes after the award's deletion")

# Awards on a comment.
note = issue.notes.create({"body": "Ship it on Friday"})
ben.issues.get(issue.iid).notes.get(note.id).awardemojis.create({"name": "thumbsup"})
eq([(a.name, a.awardable_type, a.awardable_id) for a in issue.notes.get(note.id).awardemojis.list(get_all=True)],
   [("thumbsup", "Note", note.id)], "note.awardemojis")

# A merge request counts its votes too.
mr = project.mergerequests.create({"source_branch": "feature", "target_branch": "main", "title": "Ship"})
ann.mergerequests.get(mr.iid).awardemojis.create({"name": "thumbsup"})
ben.mergerequests.get(mr.iid).notes.create({"body": ":+1:"})
got = project.mergerequests.get(mr.iid)
eq((got.upvotes, got.downvotes, got.user_notes_count), (2, 0, 0), "merge request votes")
eq(sorted(a.user["username"] for a in mr.awardemojis.list(get_all=True)), ["ann", "ben"], "mr.awardemojis.list()")
