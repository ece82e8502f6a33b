#!/bin/sh
echo
more
