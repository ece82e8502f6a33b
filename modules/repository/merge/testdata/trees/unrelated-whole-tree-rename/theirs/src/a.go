package a

func A() { println() }
