"""A script asks a repository about its history: blame, merge base, the refs
and merge requests of a commit, every branch's commits, and reverts one."""
import gitlab

from check import client, eq, raises

gl = client()
project = gl.projects.create({"name": "history"})
first = project.files.create({"file_path": "app.py", "branch": "main", "commit_message": "first",
                              "content": "import os\n\ndef main():\n    pass\n"})
project.files.update("app.py", {"branch": "main", "commit_message": "second",
                                "content": "import os\nimport sys\n\ndef main():\n    pass\n"})
project.branches.create({"branch": "topic", "ref": "main"})
project.files.create({"file_path": "topic.txt", "branch": "topic", "commit_message": "topic work",
                      "content": "topic\n"})
project.files.create({"file_path": "notes.txt", "branch": "main", "commit_message": "notes",
                      "content": "a note\n"})
main = project.commits.list(ref_name="main", get_all=True)
eq([c.title for c in main], ["notes", "second", "first"], "the history of main")
topic = project.commits.list(ref_name="topic", get_all=True)
eq([c.title for c in topic], ["topic work", "second", "first"], "the history of topic")
notes, second, first_commit = main

# Blame: consecutive lines of one commit come as one range.
blame = project.files.blame("app.py", "main")
eq([(b["commit"]["id"], b["lines"]) for b in blame],
   [(first_commit.id, ["import os"]), (second.id, ["import sys"]), (first_commit.id, ["", "def main():", "    pass"])],
   "files.blame()")
eq(sorted(blame[1]["commit"].keys()),
   ["author_email", "author_name", "authored_date", "committed_date", "committer_email", "committer_name",
    "id", "message", "parent_ids"], "a blame range's commit fields")
eq(blame[1]["commit"]["parent_ids"], [first_commit.id], "a blame range's parent_ids")
raises(lambda: project.files.blame("nope.txt", "main"), 404, "files.blame() of a missing file")

# The merge base of two branches, and GitLab's refusal of a single ref.
eq(project.repository_merge_base(["main", "topic"])["id"], second.id, "repository_merge_base()")
e = raises(lambda: project.repository_merge_base(["main"]), 400, "repository_merge_base() of one ref")
eq(e.error_message, "Provide at least 2 refs", "its message")

# The branches and tags that hold a commit.
project.tags.create({"tag_name": "v1", "ref": second.id})
refs = project.commits.get(second.id).refs()
eq(refs, [{"type": "branch", "name": "main"}, {"type": "branch", "name": "topic"}, {"type": "tag", "name": "v1"}],
   "commit.refs()")
eq(project.commits.get(notes.id).refs("branch"), [{"type": "branch", "name": "main"}], "commit.refs('branch')")
eq(project.commits.get(notes.id).refs("tag"), [], "commit.refs('tag')")

# The merge requests that hold a commit.
mr = project.mergerequests.create({"source_branch": "topic", "target_branch": "main", "title": "Topic"})
topic_work = topic[0]
eq([m["iid"] for m in project.commits.get(topic_work.id).merge_requests()], [mr.iid], "commit.merge_requests()")
eq(project.commits.get(second.id).merge_requests(), [], "commit.merge_requests() of a commit already in main")

# Every branch's commits at once, newest first.
everything = project.commits.list(get_all=True, all=True)
eq(sorted(c.id for c in everything), sorted({c.id for c in main + topic}), "commits.list(all=True)")
dates = [c.committed_date for c in everything]
eq(dates, sorted(dates, reverse=True), "all=True is newest first")

# Revert: a new commit on the branch; twice is refused as GitLab refuses.
reverted = project.commits.get(notes.id).revert(branch="main")
eq(reverted["message"], 'Revert "notes"\n\nThis reverts commit ' + notes.id, "commit.revert(): message")
eq(reverted["parent_ids"], [notes.id], "commit.revert(): parent")
eq(project.branches.get("main").commit["id"], reverted["id"], "main moved to the revert")
raises(lambda: project.files.get("notes.txt", ref="main"), 404, "the reverted file is gone")
try:
    project.commits.get(notes.id).revert(branch="main")
    eq("no error", "GitlabRevertError", "reverting twice")
except gitlab.exceptions.GitlabRevertError as err:
    eq(err.response_code, 400, "reverting twice: status")
    eq(err.error_message.startswith("Sorry, we cannot revert this commit automatically."), True,
       "reverting twice: GitLab's message")
