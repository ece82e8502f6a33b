#!/bin/sh
A
b
c
d
