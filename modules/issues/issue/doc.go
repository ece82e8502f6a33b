// Package issue is the issues module's contract: the Service (the
// commands and queries of issues, of project and group labels, of project
// and group milestones and of the issues' label events), the inputs of its
// commands, the records it returns and its domain errors. The module's
// internal/ implements it; its HTTP adapter renders GitLab's views of the
// records and maps the errors.
package issue
