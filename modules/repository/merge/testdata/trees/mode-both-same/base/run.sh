#!/bin/sh
a
b
c
d
