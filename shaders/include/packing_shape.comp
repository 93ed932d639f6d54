// The shapes of the packing shaders (packing_1to4, _4to1, _4to8, _8to4): input
// and output extents, each in elements of its own packing (c counts packed channels), from
// specialization constants when non-zero, else from push constants (psc).

#define shape_constant_id_offset 0
layout (constant_id = shape_constant_id_offset + 0) const int w = 0;
layout (constant_id = shape_constant_id_offset + 1) const int h = 0;
layout (constant_id = shape_constant_id_offset + 2) const int c = 0;
layout (constant_id = shape_constant_id_offset + 3) const int cstep = 0;
layout (constant_id = shape_constant_id_offset + 4) const int outw = 0;
layout (constant_id = shape_constant_id_offset + 5) const int outh = 0;
layout (constant_id = shape_constant_id_offset + 6) const int outc = 0;
layout (constant_id = shape_constant_id_offset + 7) const int outcstep = 0;

layout (push_constant) uniform parameter
{
    int w;
    int h;
    int c;
    int cstep;
    int outw;
    int outh;
    int outc;
    int outcstep;
} p;
