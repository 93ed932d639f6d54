//! Blobs past a buffer of the device, run in bands of rows. A layer whose one input or output
//! would not fit one buffer (or one binding) of the device, and that says how its output rows
//! read its input rows ([`Layer::gpu_rows`](crate::layer::Layer::gpu_rows): a window with fixed
//! padding, an integral upscale, an elementwise function), runs as a forward per band of
//! output rows on the input rows it reads, halo included; each band's rows that the whole
//! forward would give are kept. An output that fits one buffer is put together on the device;
//! a larger one stays a blob of [`Bands`](crate::tensor::Bands), which the next such layer reads band by band and
//! any other reader gets on the host.

use std::sync::Arc;

use super::NetLayer;
use super::extractor::Extractor;
use crate::error::{Error, Result, TensorError};
use crate::gpu::Recorder;
use crate::layer::rows::Band;
use crate::tensor::BlobShape;
use crate::tensor::{BandPart, Bands, ElemType, GpuMat, Mat, StorageFormat};

/// Where a banded forward reads its input.
enum Source {
    /// On the device: in bands, or one mat as a band of all its rows.
    Bands(Arc<Bands>),
    Host(Arc<Mat>),
}

impl Extractor<'_> {
    /// Whether a banded forward is worth trying for `l`: it runs on the device and an input
    /// is banded or would not fit one binding.
    pub(super) fn wants_bands(&self, l: &NetLayer) -> bool {
        l.on_gpu
            && !l.support.alias
            && (l.bottoms.iter().any(|&b| self.bands[b].is_some()) || !self.fits_a_binding(l))
    }

    /// Runs GPU layer `i` as bands of rows into `rec`: the number of bands, or `None` where
    /// it cannot (more than one input or output, no row map for this input, a row past a
    /// buffer, an image or unaligned rows); then nothing of the extractor has changed.
    pub(super) fn forward_banded(
        &mut self,
        i: usize,
        rec: &mut Recorder<'_>,
        remaining: &mut [usize],
        target: usize,
    ) -> Result<Option<usize>> {
        let net = self.net;
        let l = &net.layers[i];
        let s = l.support;
        let (&[b], &[t]) = (&l.bottoms[..], &l.tops[..]) else {
            return Ok(None);
        };
        let options = l.gpu_options;
        let shape = self.shape_of(b);
        let Some(rows) = (s.one_blob_only && !options.contains(crate::Opt::Image))
            .then(|| l.layer.gpu_rows(shape))
            .flatten()
        else {
            return Ok(None);
        };
        let [w, h, _, c] = shape.shape;
        let opt = self.opt.masked(l.featmask);
        let Some(&(pack, pad)) = self.gpu_layouts(l, &[shape], &opt).first() else {
            return Ok(None);
        };
        let limit = rec.context().largest_mat_bytes() / 2;
        let channels = if pad { c.next_multiple_of(4) } else { c };
        let value = StorageFormat::of(options, pack).size() as u64;
        let in_row = (w * channels.next_multiple_of(pack)) as u64 * value;
        // the output's packing is the layer's: count fp32 values in blocks of 4
        let [ow, oh, oc] = rows.out;
        let out_row = (ow * oc.next_multiple_of(4)) as u64 * 4;
        let Some(mut height) = rows.band_height(in_row, out_row, limit) else {
            return Ok(None);
        };
        let source = match (&self.bands[b], &self.gpu[b], &self.cpu[b]) {
            (Some(bands), _, _) => Source::Bands(bands.clone()),
            (None, Some(g), _) => Source::Bands(Arc::new(Bands::whole(g.clone()))),
            (None, None, Some(m)) => Source::Host(m.clone()),
            (None, None, None) => return Err(super::no_input()),
        };
        // a layer's own buffers (a Winograd transform, a GEMM's partial sums) may pass a
        // limit where its input and output do not: then in bands half as high
        let (parts, count) = loop {
            let Some(bands) = rows.bands(height, h) else {
                return Ok(None);
            };
            match record_bands(rec, l, &source, &bands, (pack, pad), rows.out) {
                Ok(Some(parts)) => break (parts, bands.len()),
                Ok(None) => return Ok(None),
                Err(e) if e.is_device_limit() && height > 1 => height /= 2,
                Err(e) => return Err(e),
            }
        };
        let bands_out = Bands::new([ow, oh, oc], parts);
        let whole = bands_out.record_one(rec)?;
        // the input is read: it leaves the extractor after its last reader
        remaining[b] = remaining[b].saturating_sub(1);
        if remaining[b] == 0 && self.opt.lightmode && b != target {
            (self.bands[b], self.gpu[b], self.cpu[b]) = (None, None, None);
        }
        self.cpu[t] = None;
        self.shared[t] = false;
        (self.gpu[t], self.bands[t]) = match whole {
            Some(m) => (Some(m), None),
            None => (None, Some(Arc::new(bands_out))),
        };
        Ok(Some(count))
    }

    /// `(dims, [w, h, d, c])` of blob `b` where it is.
    pub(super) fn shape_of(&self, b: usize) -> BlobShape {
        match (&self.bands[b], &self.cpu[b], &self.gpu[b]) {
            (Some(bands), _, _) => {
                let [w, h, c] = bands.shape;
                BlobShape {
                    dims: 3,
                    shape: [w, h, 1, c],
                }
            }
            (None, Some(m), _) => m.blob_shape(),
            (None, None, Some(g)) => g.blob_shape(),
            (None, None, None) => BlobShape::new(0, [0; 4]),
        }
    }

    /// Blob `b` on the host, put together from its bands (`None` where it has none).
    pub(super) fn bands_to_host(&mut self, b: usize) -> Result<Option<Arc<Mat>>> {
        let Some(bands) = self.bands[b].clone() else {
            return Ok(None);
        };
        let ctx = (self.net.ctx.as_deref()).ok_or(Error::NoDevice {
            what: "a blob in bands",
        })?;
        self.record.downloads += bands.len();
        Ok(Some(Arc::new(bands.to_host(ctx)?)))
    }
}

/// Records layer `l`'s forward on each band of `source`: the bands' outputs, `None` where a
/// band's rows cannot be copied.
fn record_bands(
    rec: &mut Recorder<'_>,
    l: &NetLayer,
    source: &Source,
    bands: &[Band],
    layout: (usize, bool),
    [ow, _, oc]: [usize; 3],
) -> Result<Option<Vec<BandPart>>> {
    let mut parts = Vec::with_capacity(bands.len());
    for band in bands {
        let Some(input) = band_input(rec, source, band, layout, l.gpu_options)? else {
            return Ok(None);
        };
        let out = if l.support.inplace {
            let mut m = input;
            l.layer.forward_gpu_inplace(&mut m, rec)?;
            m
        } else {
            l.layer.forward_gpu(&input, rec)?
        };
        let made = [out.dims as usize, out.w, out.c * out.elempack];
        if made != [3, ow, oc] || out.h < band.keep.end || !out.rows_copyable() {
            return Err(TensorError::Rows {
                start: band.keep.start,
                end: band.keep.end,
                height: out.h,
                problem: "a band's output is not the rows its layer declared",
            }
            .into());
        }
        parts.push(BandPart {
            mat: out,
            keep: band.keep.clone(),
            rows: band.out.clone(),
        });
    }
    Ok(Some(parts))
}

/// The input of one band in the layer's layout: its rows copied out of the bands or the
/// device blob, or uploaded from the host. `None` where rows cannot be copied.
fn band_input(
    rec: &mut Recorder<'_>,
    source: &Source,
    band: &Band,
    (pack, pad): (usize, bool),
    options: crate::OptionSet,
) -> Result<Option<GpuMat>> {
    let rows = band.input.clone();
    let m = match source {
        Source::Host(m) => {
            let m = match m.elemtype() {
                ElemType::F32 => m.rows(rows)?,
                _ => m.cast(ElemType::F32).rows(rows)?,
            };
            let m = if m.elempack == pack {
                m
            } else {
                m.to_packing(pack)?
            };
            GpuMat::record_upload(rec, &m, options)?
        }
        Source::Bands(bands) => match bands.record_rows(rec, rows)? {
            Some(m) => m,
            None => return Ok(None),
        },
    };
    if StorageFormat::of(options, m.elempack) != m.format {
        return Ok(None);
    }
    let m = if m.elempack == pack {
        m
    } else {
        m.record_packing(rec, pack)?
    };
    Ok(Some(if pad { m.record_padded_pack4(rec)? } else { m }))
}
