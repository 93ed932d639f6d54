// One activation function, included by vulkan_activation.comp once per type: ACT_T (afp or
// afpvec4), its name ACT_NAME and ACT_LEAKY(v, slope), the leaky relu for that type.

ACT_T ACT_NAME(ACT_T v, int activation_type, float activation_param_0, float activation_param_1)
{
    if (activation_type == 1)
    {
        v = max(v, afp(0.f));
    }
    if (activation_type == 2)
    {
        const afp slope = afp(activation_param_0);
        v = ACT_LEAKY(v, slope);
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
    if (activation_type == 7)
    {
        // swish: no ncnn layer has it fused; the net folds a Swish layer into the one before
        v = v / (afp(1.f) + exp(-v));
    }
    return v;
}
