// Package projects owns namespaces and groups, projects, memberships and
// access levels, stars, forks, shares, uploads and project hooks. Its Access
// service is the one place every other module asks "may this caller do X on
// project P". It imports identity's public package and core only.
package projects
