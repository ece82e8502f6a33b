package a

func B() {}
