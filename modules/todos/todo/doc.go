// Package todo is the public contract of todos that both the todos root
// package and its internal implementation use: a todo's action, target, a
// todo to add, and the kind a target's module registers. It exists only
// because the root package imports internal/ (Module()) and internal/ needs
// these types too: Go forbids the cycle. The root package re-exports every
// name here (todos.Target, todos.New, todos.Kind...); other modules use
// those. It imports no Fennec package.
package todo
