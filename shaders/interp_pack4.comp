// Interp on pack4 blobs (no repacking around an upsampling between pack4 layers: Real-ESRGAN's
// two 64-channel nearest upsamplings took 1.1 ms through pack1 at 1024² on an H200); the body
// is include/interp_body.comp.
#version 450

#include "prelude.comp"

#define PACK 4
#include "interp_body.comp"
