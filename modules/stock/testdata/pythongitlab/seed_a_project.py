"""A script seeds an empty project through the files API, then reads it
back: the first steps of most automation."""
import io
import tarfile

from check import client, eq

gl = client()
project = gl.projects.create({"name": "seeded"})
eq(project.default_branch, "master", "a new project's default_branch")

# The first commit of an empty repository creates its branch (404 Branch Not
# Found before), and that branch becomes the default (it stayed master).
f = project.files.create({"file_path": "README.md", "branch": "main", "content": "hello\n",
                          "commit_message": "first"})
eq(f.file_path, "README.md", "files.create on an empty project")
project = gl.projects.get(project.id)
eq(project.default_branch, "main", "default_branch after the first API commit")

# Lists python-gitlab pages through: X-Total must be a number or absent
# (an empty X-Total made commits.list() raise ValueError).
commits = project.commits.list(get_all=True)
eq([c.title for c in commits], ["first"], "commits.list()")
eq([t["path"] for t in project.repository_tree()], ["README.md"], "repository_tree() of the default branch")
eq(project.files.get("README.md", ref=project.default_branch).decode(), b"hello\n", "files.get on the default branch")

# Branching from default_branch works now that it names a real branch.
b = project.branches.create({"branch": "dev", "ref": project.default_branch})
eq(b.commit["id"], commits[0].id, "branch made from default_branch")

# Every archive spelling GitLab 9.x took (tbz, tb2 and bz2 were 404).
for fmt in ["tar.gz", "tgz", "tar.bz2", "tbz", "tbz2", "tb2", "bz2", "tar"]:
    data = project.repository_archive(format=fmt)
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        names = sorted(m.name.split("/", 1)[1] for m in tf.getmembers() if m.isfile())
    eq(names, ["README.md"], f"repository_archive(format={fmt!r})")

# An edit sends only what changed (name was required before).
project.description = "seeded by a script"
project.save()
eq(gl.projects.get(project.id).description, "seeded by a script", "save() of the description alone")

# A default_branch that does not exist is ignored, as GitLab 9.x does; an
# existing one is taken.
project.default_branch = "no-such-branch"
project.save()
eq(gl.projects.get(project.id).default_branch, "main", "save() with a missing default_branch")
project.default_branch = "dev"
project.save()
eq(gl.projects.get(project.id).default_branch, "dev", "save() with an existing default_branch")

# Uploads: an image is named without its extension, any other file with it.
up = project.upload("notes.txt", filedata=b"some notes")
eq(up["alt"], "notes.txt", "upload of a text file: alt")
eq(up["markdown"], "[notes.txt](" + up["url"] + ")", "upload of a text file: markdown")
png = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000000000500010d0a2db40000000049454e44ae426082")
up = project.upload("diagram.png", filedata=png)
eq(up["alt"], "diagram", "upload of an image: alt")
eq(up["markdown"], "![diagram](" + up["url"] + ")", "upload of an image: markdown")
