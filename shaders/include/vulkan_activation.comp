// Activation helpers shared by layer shaders, included the way ncnn shaders include theirs.
// activation_type: 0 none, 1 relu, 2 leaky relu (param_0 = slope), 3 clip (param_0 min, param_1 max),
// 4 sigmoid, 5 mish, 6 hardswish (param_0 alpha, param_1 beta), 7 swish (fpshader's: a Swish
// layer the net folds into the layer before it).

#define ACT_T afp
#define ACT_NAME activation_afp
#define ACT_LEAKY(v, slope) v < afp(0.f) ? v * slope : v
#include "activation_function.comp"
#undef ACT_T
#undef ACT_NAME
#undef ACT_LEAKY

#define ACT_T afpvec4
#define ACT_NAME activation_afpvec4
#define ACT_LEAKY(v, slope) mix(v, v * slope, lessThan(v, afpvec4(0.f)))
#include "activation_function.comp"

afpvec8 activation_afpvec8(afpvec8 v, int activation_type, float activation_param_0, float activation_param_1)
{
    v[0] = activation_afpvec4(v[0], activation_type, activation_param_0, activation_param_1);
    v[1] = activation_afpvec4(v[1], activation_type, activation_param_0, activation_param_1);
    return v;
}
