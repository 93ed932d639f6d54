// Activation helpers shared by layer shaders, included the way ncnn shaders include theirs.
// activation_type: 0 none, 1 relu, 2 leaky relu (param_0 = slope), 3 clip (param_0 min, param_1 max),
// 4 sigmoid, 5 mish, 6 hardswish (param_0 alpha, param_1 beta).

afp activation_afp(afp v, int activation_type, float activation_param_0, float activation_param_1)
{
    if (activation_type == 1)
    {
        v = max(v, afp(0.f));
    }
    if (activation_type == 2)
    {
        const afp slope = afp(activation_param_0);
        v = v < afp(0.f) ? v * slope : v;
    }
    if (activation_type == 3)
    {
        v = clamp(v, afp(activation_param_0), afp(activation_param_1));
    }
    if (activation_type == 4)
    {
        v = afp(1.f) / (afp(1.f) + exp(-v));
    }
    if (activation_type == 5)
    {
        v = v * tanh(log(exp(v) + afp(1.f)));
    }
    if (activation_type == 6)
    {
        const afp alpha = afp(activation_param_0);
        const afp beta = afp(activation_param_1);
        v = v * clamp(v * alpha + beta, afp(0.f), afp(1.f));
    }
    return v;
}

afpvec4 activation_afpvec4(afpvec4 v, int activation_type, float activation_param_0, float activation_param_1)
{
    if (activation_type == 1)
    {
        v = max(v, afp(0.f));
    }
    if (activation_type == 2)
    {
        const afp slope = afp(activation_param_0);
        v = mix(v, v * slope, lessThan(v, afpvec4(0.f)));
    }
    if (activation_type == 3)
    {
        v = clamp(v, afp(activation_param_0), afp(activation_param_1));
    }
    if (activation_type == 4)
    {
        v = afp(1.f) / (afp(1.f) + exp(-v));
    }
    if (activation_type == 5)
    {
        v = v * tanh(log(exp(v) + afp(1.f)));
    }
    if (activation_type == 6)
    {
        const afp alpha = afp(activation_param_0);
        const afp beta = afp(activation_param_1);
        v = v * clamp(v * alpha + beta, afp(0.f), afp(1.f));
    }
    return v;
}

afpvec8 activation_afpvec8(afpvec8 v, int activation_type, float activation_param_0, float activation_param_1)
{
    v[0] = activation_afpvec4(v[0], activation_type, activation_param_0, activation_param_1);
    v[1] = activation_afpvec4(v[1], activation_type, activation_param_0, activation_param_1);
    return v;
}
