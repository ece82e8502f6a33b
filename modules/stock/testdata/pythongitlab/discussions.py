"""A review script: threads on an issue, a snippet and a commit, a line
comment on a merge request's diff with a reply, resolving threads, and a
project that merges only when every thread is resolved."""
from check import client, eq, raises

gl = client()
project = gl.projects.create({"name": "reviewed"})
project.files.create({"file_path": "app.py", "branch": "master", "content": "a = 1\nb = 2\n", "commit_message": "first"})
f = project.files.get("app.py", ref="master")
f.content = "a = 1\nb = 3\nc = 4\n"
f.save(branch="fix", start_branch="master", commit_message="fix b")

# Threads on an issue: a plain note is a thread by itself.
issue = project.issues.create({"title": "Crash"})
issue.notes.create({"body": "I see it too"})
thread = issue.discussions.create({"body": "What version?"})
eq([n["type"] for n in thread.attributes["notes"]], ["DiscussionNote"], "issue.discussions.create")
reply = thread.notes.create({"body": "9.5"})
eq(reply.type, "DiscussionNote", "discussion.notes.create")
got = issue.discussions.get(thread.id)
eq([n["body"] for n in got.attributes["notes"]], ["What version?", "9.5"], "issue.discussions.get")
eq([(d.individual_note, len(d.attributes["notes"])) for d in issue.discussions.list(get_all=True)],
   [(True, 1), (False, 2)], "issue.discussions.list()")
note = got.notes.get(reply.id)
note.body = "9.5.1"
note.save()
eq(issue.discussions.get(thread.id).attributes["notes"][1]["body"], "9.5.1", "discussion note.save()")
got.notes.delete(reply.id)
eq(len(issue.discussions.get(thread.id).attributes["notes"]), 1, "discussion.notes.delete()")
raises(lambda: issue.discussions.get("0" * 40), 404, "an unknown thread")

# A thread on a snippet.
snippet = project.snippets.create({"title": "s", "file_name": "s.py", "content": "x = 1\n", "visibility": "private"})
sd = snippet.discussions.create({"body": "Nice"})
sd.notes.create({"body": "Thanks"})
eq([len(d.attributes["notes"]) for d in snippet.discussions.list(get_all=True)], [2], "snippet.discussions")

# A thread on a commit: a commit comment is a thread by itself.
commit = project.commits.get(project.branches.get("fix").commit["id"])
commit.comments.create({"note": "old style"})
cd = commit.discussions.create({"body": "Nice fix"})
cd.notes.create({"body": "Thanks"})
eq([(d.individual_note, [n["body"] for n in d.attributes["notes"]]) for d in commit.discussions.list(get_all=True)],
   [(True, ["old style"]), (False, ["Nice fix", "Thanks"])], "commit.discussions")
eq([c.note for c in commit.comments.list(get_all=True)], ["old style", "Nice fix", "Thanks"], "commit.comments lists the threads' notes")

# A line comment on a merge request's diff.
project.only_allow_merge_if_all_discussions_are_resolved = True
project.save()
mr = project.mergerequests.create({"source_branch": "fix", "target_branch": "master", "title": "Fix b"})
start = project.branches.get("master").commit["id"]
head = project.branches.get("fix").commit["id"]
position = {"base_sha": start, "start_sha": start, "head_sha": head, "position_type": "text",
            "new_path": "app.py", "old_path": "app.py", "new_line": 2}
line = mr.discussions.create({"body": "Why 3?", "position": position})
first = line.attributes["notes"][0]
eq((first["type"], first["position"]["new_line"], first["position"]["head_sha"], first["resolvable"], first["resolved"]),
   ("DiffNote", 2, head, True, False), "mr.discussions.create with a position")
answer = line.notes.create({"body": "The spec says so"})
eq((answer.type, answer.position["new_line"]), ("DiffNote", 2), "a reply on the same line")
raises(lambda: mr.discussions.create({"body": "x", "position": dict(position, new_line=1)}), 400,
       "a line comment on a line the diff does not change")
general = mr.discussions.create({"body": "Add a test?"})

# Unresolved threads keep it from merging.
raises(lambda: mr.merge(), 405, "merge with unresolved threads")
done = mr.discussions.update(line.id, {"resolved": True})
eq([n["resolved"] for n in done["notes"]], [True, True], "mr.discussions.update(id, {'resolved': True})")
general.resolved = True
general.save()
eq(all(n["resolved"] for n in mr.discussions.get(general.id).attributes["notes"]), True, "discussion.save() resolved")
mr.merge()
eq(project.mergerequests.get(mr.iid).state, "merged", "merge once every thread is resolved")
