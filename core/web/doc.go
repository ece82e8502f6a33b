// Package web is the foundation of Fennec's web interface: what every page
// shares, so that each module renders only its own pages (ARCHITECTURE.md,
// "The web interface").
//
// A Site sits beside the API on the same mux. It gives modules:
//   - routing by GitLab's URLs: fixed paths (Handle: "/dashboard/projects"),
//     pages under a project or a group ("/<namespace>/<project>/-/tree/...",
//     "/groups/<group>/-/..."; Project, Group) and the pages of a bare path
//     ("/<username>", "/<namespace>/<project>"; Path), which the module that
//     owns such paths resolves;
//   - the layout: header, the menu and project tabs modules add (AddMenu,
//     AddProjectTab), so an embedder who leaves a module out leaves its
//     pages and links out;
//   - templates (Templates) and static assets with content-hashed names and
//     a year's cache lifetime (AddAsset, served under /-/static/);
//   - the signed-in principal of the browser's session cookie, put in the
//     request's context as the API's handlers have it, so pages call module
//     services exactly as the API does and get the same permissions;
//   - CSRF protection of every form (a token bound to the session, or a
//     double-submit cookie before sign-in), checked before a handler runs;
//   - HTML error pages and the sign-in redirect of anonymous visitors;
//   - the areas' side navigation (AddSection), the admin area's gate
//     (Admin) and its overview, whose figures the modules add
//     (AddAdminStats), and the banner of an impersonating session;
//   - compression, and every link and asset under the external URL's path,
//     so the interface works mounted under a prefix;
//   - a CI status's icon (the "ci-status" partial of a CIStatus) and a
//     commit's status asked of whichever module answers (SetCommitStatus,
//     CommitStatus), for pages of modules below CI.
//
// It imports core/api (the mux, the session resolver, the request state),
// core/auth, core/log and core/markup (its stylesheet); never a module.
package web
