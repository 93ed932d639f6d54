// The body of unaryop.comp, unaryop_pack4.comp and unaryop_pack8.comp: the activation layers'
// functions (unary_op.comp) elementwise on a blob of w x h x c elements, shapes from
// specialization constants when non-zero, else from push constants (psc). The including file
// declares the bindings and defines, for its packing:
//   afp_t             the arithmetic type of one element
//   LOAD_IMAGE(p)     / LOAD_BUFFER(i)      one element of bottom_blob
//   APPLY(v)          the function on the element `v`, in place
//   STORE_IMAGE(p, v) / STORE_BUFFER(i, v)  one element of top_blob

layout (constant_id = 0) const int op_type = 0;
layout (constant_id = 1) const float param_0 = 0;
layout (constant_id = 2) const float param_1 = 0;
layout (constant_id = 3) const float param_2 = 0;

#define shape_constant_id_offset 4
layout (constant_id = shape_constant_id_offset + 0) const int w = 0;
layout (constant_id = shape_constant_id_offset + 1) const int h = 0;
layout (constant_id = shape_constant_id_offset + 2) const int c = 0;
layout (constant_id = shape_constant_id_offset + 3) const int cstep = 0;

layout (push_constant) uniform parameter
{
    int w;
    int h;
    int c;
    int cstep;
} p;

#include "unary_op.comp"

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);

    if (gx >= psc(w) || gy >= psc(h) || gz >= psc(c))
        return;

#if NCNN_image_shader
    afp_t v = LOAD_IMAGE(ivec3(gx, gy, gz));
#else
    const int gi = gz * psc(cstep) + gy * psc(w) + gx;
    afp_t v = LOAD_BUFFER(gi);
#endif

    APPLY(v);

#if NCNN_image_shader
    STORE_IMAGE(ivec3(gx, gy, gz), v);
#else
    STORE_BUFFER(gi, v);
#endif
}
