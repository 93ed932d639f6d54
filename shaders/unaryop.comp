// The activation layers' functions elementwise on a pack1 blob; the body is
// include/unaryop_body.comp.
#version 450

#include "prelude.comp"

#define PACK 1
#include "unaryop_body.comp"
