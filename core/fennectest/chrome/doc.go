// Package chrome drives a real headless Chromium for the web interface's
// black-box tests: a browser per test, a fresh browser context per tab (no
// cookies shared), screenshots written as test artifacts, and an
// accessibility check with axe-core injected into the page.
//
// Chromium is Debian's package chromium and axe-core npm's axe-core, both
// installed by .ci/run; a test skips (saying which is missing) on a machine
// without them. It imports no other package of this repository.
package chrome
