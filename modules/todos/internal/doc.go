// Package internal implements the todos module: its table, the service the
// owners of targets call (todos.Service), the /todos operations and the
// cleanup subscribers. Only modules/todos may import it.
package internal
