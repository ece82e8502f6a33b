#!/bin/sh
a
b
c
D
