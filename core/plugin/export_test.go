package plugin

// SetTestHookDown sets testHookDown for the tests of package plugin_test
// and returns what restores it.
func SetTestHookDown(f func(State)) (restore func()) {
	old := testHookDown
	testHookDown = f
	return func() { testHookDown = old }
}
