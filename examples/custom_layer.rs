//! A user's own layer in a net: GLSL written with the ncnn extension and compiled by `shader!`
//! in fp32 and fp16 variants, a CPU path for any element type and packing, support flags set in
//! `create_pipeline` (as ncnn's `Clip_arm` does in its constructor), registered by type name and
//! run inside a net loaded from a `.param` that names it, on the GPU if there is one and on the
//! CPU, compared.
//!
//! `cargo run --example custom_layer`

use std::sync::Arc;

use fpshader::gpu::specialize::SpecValue;
use fpshader::layer::shared::flat::unary;
use fpshader::layer::shared::pipelines::PackPipelines;
use fpshader::layer::{GpuSetup, Implements, Layer, ParamDict, RunOptions, Support};
use fpshader::meta::ShaderModule;
use fpshader::net::Net;
use fpshader::{Context, ContextOptions, GpuMat, Mat, Recorder, shader};

/// `top = bottom * a + b`, elementwise, pack1.
static SCALE_SHIFT: &ShaderModule = shader!(
    src: "#version 450
#if NCNN_fp16_storage
#extension GL_EXT_shader_16bit_storage: require
#endif
#if NCNN_fp16_arithmetic
#extension GL_EXT_shader_explicit_arithmetic_types_float16: require
#endif
layout (constant_id = 0) const float a = 1;
layout (constant_id = 1) const float b = 0;
layout (constant_id = 2) const int w = 0;
layout (constant_id = 3) const int h = 0;
layout (constant_id = 4) const int c = 0;
layout (constant_id = 5) const int cstep = 0;
layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (push_constant) uniform parameter { int w; int h; int c; int cstep; } p;
void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);
    if (gx >= psc(w) || gy >= psc(h) || gz >= psc(c))
        return;
    const int gi = gz * psc(cstep) + gy * psc(w) + gx;
    buffer_st1(top_blob_data, gi, buffer_ld1(bottom_blob_data, gi) * afp(a) + afp(b));
}
",
    fp16p,
    fp16s,
    fp16a,
);

/// The layer: `0=a 1=b`.
#[derive(Default)]
struct ScaleShift {
    a: f32,
    b: f32,
    support: Support,
    gpu: Option<PackPipelines>,
}

impl Layer for ScaleShift {
    fn support(&self) -> Support {
        self.support
    }

    fn implements(&self) -> Implements {
        Implements {
            forward_inplace: true,
            forward_gpu_inplace: true,
            ..Implements::default()
        }
    }

    fn load_param(&mut self, pd: &ParamDict) -> fpshader::Result<()> {
        self.a = pd.float(0, 1.0);
        self.b = pd.float(1, 0.0);
        Ok(())
    }

    fn create_pipeline(
        &mut self,
        _opt: &RunOptions,
        gpu: Option<GpuSetup<'_>>,
    ) -> fpshader::Result<()> {
        // the CPU path takes any packing and 16-bit storage; the GPU path exists when the net
        // gives a device, and takes pack1 only (one shader)
        self.support = Support {
            one_blob_only: true,
            inplace: true,
            packing: true,
            any_packing: true,
            fp16_storage: true,
            bf16_storage: true,
            vulkan: gpu.is_some(),
            ..Support::default()
        };
        if let Some(gpu) = gpu {
            let values = [(0, SpecValue::F32(self.a)), (1, SpecValue::F32(self.b))];
            self.gpu = Some(PackPipelines::create(gpu, &[(1, SCALE_SHIFT)], &values)?);
        }
        Ok(())
    }

    fn forward_inplace(&self, blob: &mut Mat, _opt: &RunOptions) -> fpshader::Result<()> {
        for i in 0..blob.data.len() {
            let x = blob.data.get(i);
            blob.data.set(i, x * self.a + self.b);
        }
        Ok(())
    }

    fn forward_gpu_inplace(
        &self,
        blob: &mut GpuMat,
        rec: &mut Recorder<'_>,
    ) -> fpshader::Result<()> {
        let pipelines = self.gpu.as_ref().ok_or(fpshader::Error::NoDevice {
            what: "the custom layer's GPU forward",
        })?;
        *blob = unary(rec, pipelines, blob)?;
        Ok(())
    }
}

const PARAM: &str = "7767517
3 3
Input data 0 1 data
ScaleShift affine 1 1 data y 0=2.0 1=-0.5
ReLU relu 1 1 y out
";

fn run(ctx: Option<Arc<Context>>, input: &Mat) -> Result<(Vec<f32>, Vec<bool>), fpshader::Error> {
    let mut net = Net::new();
    net.register_layer("ScaleShift", || Box::<ScaleShift>::default());
    if let Some(ctx) = ctx {
        net.set_context(ctx);
    }
    net.load_param_str("custom.param", PARAM)?;
    net.load_model_zeros()?;
    let on_gpu = net.layers().iter().map(|l| l.on_gpu()).collect();
    let mut ex = net.create_extractor()?;
    ex.input("data", input.clone())?;
    Ok((ex.extract("out")?.to_values(), on_gpu))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let values: Vec<f32> = (0..4 * 4 * 8)
        .map(|i| (i % 7) as f32 * 0.25 - 0.5)
        .collect();
    let input = Mat::from_values(4, 4, 8, &values)?;
    let (cpu, _) = run(None, &input)?;
    let want: Vec<f32> = values.iter().map(|x| (x * 2.0 - 0.5).max(0.0)).collect();
    let max_err = |got: &[f32]| {
        got.iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max)
    };
    println!("CPU: max error {}", max_err(&cpu));
    // lavapipe too where there is no GPU: the point is the comparison, not the speed
    match Context::new(ContextOptions {
        allow_cpu_adapter: true,
        ..Default::default()
    }) {
        Ok(ctx) => {
            let name = ctx.describe();
            let (gpu, on_gpu) = run(Some(Arc::new(ctx)), &input)?;
            println!(
                "GPU {name}: layers on the GPU {on_gpu:?}, max error {}",
                max_err(&gpu)
            );
            if max_err(&gpu) > 0.01 {
                return Err("the GPU result differs from the reference".into());
            }
        }
        Err(e) => println!("no GPU ({e}); CPU only"),
    }
    if max_err(&cpu) > 1e-6 {
        return Err("the CPU result differs from the reference".into());
    }
    Ok(())
}
