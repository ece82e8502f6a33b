#!/bin/sh
echo one
echo two
echo three
