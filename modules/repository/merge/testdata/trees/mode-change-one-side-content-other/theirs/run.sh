#!/bin/sh
echo one
echo two
echo 3
