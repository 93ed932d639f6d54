//! What an extractor did: where each layer ran and how often the host waited for the device
//! before the output, so a user (and `fpshader bench --profile`) sees a GPU net that leaves the
//! GPU.

/// Where one layer ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placed {
    /// Recorded on the device.
    Gpu,
    /// Recorded on the device as this many bands of rows, each a forward of its own: its
    /// input or output passed a buffer of the device.
    GpuBands(usize),
    /// Run on the host: it has no GPU forward, or declined the shapes it got this time.
    Cpu,
    /// Handed its input on without running (Split).
    Alias,
    /// An activation run in the epilogue of the GPU layer before it (the net's fusion).
    Fused,
    /// Recorded on the device, its output written past its first input's values in that
    /// input's buffer (a Concat appending to the concat before it).
    GpuAppended,
}

/// The layers an extractor ran, in order, and the host round trips they cost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunRecord {
    /// `(layer index, where it ran)` per layer run.
    pub layers: Vec<(usize, Placed)>,
    /// Times the host waited for recorded device work before a CPU layer.
    pub waits: usize,
    /// Device blobs read back for a CPU layer (the output's own download not counted).
    pub downloads: usize,
    /// Per CPU layer run: its index, the time its inputs took to reach its layout (element
    /// type, packing) and the time of its forward. CPU forwards are synchronous, so these
    /// are the layers' own times.
    pub cpu_times: Vec<CpuTime>,
}

/// The host time one CPU layer took in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTime {
    /// The layer's index in the net.
    pub layer: usize,
    /// Converting its inputs to the layout its flags ask for.
    pub convert: std::time::Duration,
    /// Its forward.
    pub forward: std::time::Duration,
}

impl RunRecord {
    /// The indices of the layers that ran on the CPU.
    pub fn cpu_layers(&self) -> Vec<usize> {
        self.layers_where(|p| p == Placed::Cpu)
    }

    /// The indices of the layers that ran on the device: recorded there whole, in bands,
    /// appended, or folded into the layer before.
    pub fn gpu_layers(&self) -> Vec<usize> {
        self.layers_where(|p| !matches!(p, Placed::Cpu | Placed::Alias))
    }

    /// The indices of the activation layers that ran in the epilogue of the layer before.
    pub fn fused_layers(&self) -> Vec<usize> {
        self.layers_where(|p| p == Placed::Fused)
    }

    /// The indices of the layers whose output was written past their first input's values.
    pub fn appended_layers(&self) -> Vec<usize> {
        self.layers_where(|p| p == Placed::GpuAppended)
    }

    /// The indices of the layers that ran on the device in bands of rows.
    pub fn banded_layers(&self) -> Vec<usize> {
        self.layers_where(|p| matches!(p, Placed::GpuBands(_)))
    }

    /// The indices of the layers whose placement `keep` takes.
    fn layers_where(&self, keep: impl Fn(Placed) -> bool) -> Vec<usize> {
        (self.layers.iter())
            .filter(|(_, p)| keep(*p))
            .map(|(i, _)| *i)
            .collect()
    }

    /// Whether the run stayed on the device from the first GPU layer to the output: no CPU
    /// layer after a GPU one, so no wait and no download in between.
    pub fn stayed_on_gpu(&self) -> bool {
        self.waits == 0 && self.downloads == 0
    }
}
