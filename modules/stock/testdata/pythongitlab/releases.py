"""A release script: seed a project, release a tag made from a branch with
asset links, add and change a link, edit the release, and see it from the
9.x tags API too (one store behind both)."""
from check import client, eq, raises

gl = client()
project = gl.projects.create({"name": "released"})
project.files.create({"file_path": "README.md", "branch": "master", "content": "v1\n", "commit_message": "first"})
head = project.commits.list(get_all=True)[0].id

# A release of a tag that does not exist yet: ref makes it.
release = project.releases.create({
    "tag_name": "v1.0", "ref": "master", "name": "First", "description": "The first release",
    "assets": {"links": [{"name": "linux", "url": "https://example.com/v1/linux", "link_type": "package"}]},
})
eq((release.tag_name, release.name, release.description), ("v1.0", "First", "The first release"), "releases.create with ref")
eq(release.commit["id"], head, "the release's commit")
eq(release.author["username"], "root", "the release's author")
eq([s["format"] for s in release.assets["sources"]], ["zip", "tar.gz", "tar.bz2", "tar"], "the release's sources")
eq([(l["name"], l["link_type"], l["external"]) for l in release.assets["links"]], [("linux", "package", True)], "the release's links")
eq(project.tags.get("v1.0").release, {"tag_name": "v1.0", "description": "The first release"}, "the tag shows the release")
raises(lambda: project.releases.create({"tag_name": "v1.0", "description": "again"}), 409, "a second release of a tag")
raises(lambda: project.releases.create({"tag_name": "v2.0", "description": "no ref"}), 422, "a release of a missing tag without ref")

# Links through the release's manager.
release = project.releases.get("v1.0")
link = release.links.create({"name": "checksums", "url": "https://example.com/v1/SHA256SUMS"})
eq((link.name, link.link_type), ("checksums", "other"), "release.links.create")
eq([l.name for l in release.links.list()], ["checksums", "linux"], "release.links.list(), newest first")
link.name = "sha256sums"
link.save()
eq(release.links.get(link.id).name, "sha256sums", "link.save()")
raises(lambda: release.links.create({"name": "dup", "url": "https://example.com/v1/SHA256SUMS"}), 400, "a link with a taken url")
release.links.delete(link.id)
eq([l.name for l in release.links.list()], ["linux"], "release.links.delete()")

# Edit: only what changed is sent.
release.description = "The first release, amended"
release.save()
got = project.releases.get("v1.0")
eq((got.name, got.description), ("First", "The first release, amended"), "release.save()")

# A 9.x release note on a tag (python-gitlab 3.12 has no method for it any
# more: a script posts it) shows in the releases API.
project.tags.create({"tag_name": "v1.1", "ref": "master"})
gl.http_post(f"/projects/{project.id}/repository/tags/v1.1/release", post_data={"description": "A patch"})
eq(project.releases.get("v1.1").description, "A patch", "a 9.x tag release seen by releases.get")
eq([r.tag_name for r in project.releases.list(get_all=True)], ["v1.1", "v1.0"], "releases.list(), newest first")

# Deleting a release keeps its tag; deleting a tag takes its release.
project.releases.delete("v1.0")
raises(lambda: project.releases.get("v1.0"), 404, "a deleted release")
eq(project.tags.get("v1.0").release, None, "the tag of a deleted release")
project.tags.delete("v1.1")
eq(project.releases.list(get_all=True), [], "the release of a deleted tag")
