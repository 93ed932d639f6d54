//! DetectionOutput: `0=num_class 1=nms_threshold 2=nms_top_k 3=keep_top_k
//! 4=confidence_threshold 5-8=variances`. SSD's head: the box offsets (first input, 4 per
//! prior) decoded against the priors (third input: PriorBox's corners, then its variances
//! row) in center-size form; per class but the background (class 0), the priors whose score
//! (second input, `num_prior × num_class`) passes the threshold, sorted, cut to `nms_top_k`
//! and suppressed at `nms_threshold`; all classes' survivors sorted again and cut to
//! `keep_top_k`: rows of `[label, score, xmin, ymin, xmax, ymax]`. With `num_class -233`,
//! MXNet's `MultiBoxDetection`: scores `num_class × num_prior`, priors one per row, the
//! params' variances. No detection leaves an empty output, as in ncnn. On the CPU, as ncnn's.

use rayon::prelude::*;

use crate::error::{InputError, Result};
use crate::layer::contract::{Layer, Support};
use crate::layer::detection::boxes::{Overlap, Scored, detections, sort_descending, suppress};
use crate::layer::params::ParamDict;
use crate::layer::run_options::RunOptions;
use crate::tensor::Mat;

/// SSD's box decoding and per-class suppression.
#[derive(Default)]
pub struct DetectionOutput {
    num_class: i32,
    nms_threshold: f32,
    nms_top_k: usize,
    keep_top_k: usize,
    confidence_threshold: f32,
    variances: [f32; 4],
}

/// The inputs as flat values with the counts they must agree on.
struct Inputs {
    location: Vec<f32>,
    confidence: Vec<f32>,
    priors: Vec<f32>,
    /// One row of 4 variances per prior (SSD), or none (MXNet: the params').
    variances: Option<Vec<f32>>,
    num_prior: usize,
    num_class: usize,
    mxnet: bool,
}

impl DetectionOutput {
    fn inputs(&self, bottoms: &[Mat]) -> Result<Inputs> {
        let [location, confidence, priorbox] = bottoms else {
            return Err(InputError::Count {
                got: bottoms.len(),
                expected: "3: box offsets, class scores and prior boxes",
            }
            .into());
        };
        let mxnet = self.num_class == -233;
        let [pw, ph, ..] = priorbox.shape();
        let priors = priorbox.to_values();
        let (num_prior, num_class, variances) = if mxnet {
            (ph, confidence.shape()[1], None)
        } else {
            let variances = (ph >= 2).then(|| priors[pw..2 * pw].to_vec());
            (pw / 4, self.num_class.max(0) as usize, variances)
        };
        let inputs = Inputs {
            location: location.to_values(),
            confidence: confidence.to_values(),
            // 4 per prior, read in order as ncnn reads them (MXNet's rows of fewer than 4 do not
            // hold them)
            priors: (priors.get(..num_prior * 4))
                .ok_or(InputError::Values {
                    what: "prior box values (4 per prior)",
                    got: priors.len(),
                    expected: num_prior * 4,
                })?
                .to_vec(),
            variances,
            num_prior,
            num_class,
            mxnet,
        };
        let check = |what: &'static str, got: usize, expected: usize| {
            if got < expected {
                return Err(InputError::Values {
                    what,
                    got,
                    expected,
                });
            }
            Ok(())
        };
        check(
            "box offsets (4 per prior)",
            inputs.location.len(),
            num_prior * 4,
        )?;
        check(
            "class scores",
            inputs.confidence.len(),
            num_prior * num_class,
        )?;
        if !mxnet {
            let got = inputs.variances.as_ref().map_or(0, Vec::len);
            check(
                "prior variances (PriorBox's second row)",
                got,
                num_prior * 4,
            )?;
        }
        Ok(inputs)
    }
}

impl Inputs {
    /// Prior `i`'s score for class `c`.
    fn score(&self, i: usize, c: usize) -> f32 {
        if self.mxnet {
            self.confidence[c * self.num_prior + i]
        } else {
            self.confidence[i * self.num_class + c]
        }
    }

    /// Prior `i`'s decoded corners (center-size offsets scaled by the variances).
    fn decode(&self, i: usize, params: &[f32; 4]) -> [f32; 4] {
        let loc = &self.location[i * 4..i * 4 + 4];
        let pb = &self.priors[i * 4..i * 4 + 4];
        let var = match &self.variances {
            Some(v) => [v[i * 4], v[i * 4 + 1], v[i * 4 + 2], v[i * 4 + 3]],
            None => *params,
        };
        let (pw, ph) = (pb[2] - pb[0], pb[3] - pb[1]);
        let (pcx, pcy) = ((pb[0] + pb[2]) * 0.5, (pb[1] + pb[3]) * 0.5);
        let cx = var[0] * loc[0] * pw + pcx;
        let cy = var[1] * loc[1] * ph + pcy;
        let w = (var[2] * loc[2]).exp() * pw;
        let h = (var[3] * loc[3]).exp() * ph;
        [cx - w * 0.5, cy - h * 0.5, cx + w * 0.5, cy + h * 0.5]
    }
}

impl Layer for DetectionOutput {
    fn support(&self) -> Support {
        Support::MANY
    }

    fn load_param(&mut self, pd: &ParamDict) -> Result<()> {
        self.num_class = pd.int(0, 0);
        self.nms_threshold = pd.float(1, 0.05);
        self.nms_top_k = pd.int(2, 300).max(0) as usize;
        self.keep_top_k = pd.int(3, 100).max(0) as usize;
        self.confidence_threshold = pd.float(4, 0.5);
        self.variances = [
            pd.float(5, 0.1),
            pd.float(6, 0.1),
            pd.float(7, 0.2),
            pd.float(8, 0.2),
        ];
        Ok(())
    }

    fn forward_many(&self, bottoms: &[Mat], _opt: &RunOptions) -> Result<Vec<Mat>> {
        let inputs = self.inputs(bottoms)?;
        // a prior whose background score passes 1 - threshold has no class score above the
        // threshold once scores are a softmax: ncnn decodes only the others
        let background = 1.0 - self.confidence_threshold;
        let decoded: Vec<Option<[f32; 4]>> = (0..inputs.num_prior)
            .into_par_iter()
            .map(|i| (inputs.score(i, 0) < background).then(|| inputs.decode(i, &self.variances)))
            .collect();
        let per_class: Vec<Vec<Scored>> = (1..inputs.num_class)
            .into_par_iter()
            .map(|c| {
                let mut boxes: Vec<Scored> = (0..inputs.num_prior)
                    .filter_map(|i| {
                        let score = inputs.score(i, c);
                        // a skipped prior's box is ncnn's uninitialized memory; it is left
                        // out here (it takes no part where scores are a softmax)
                        let corners = decoded[i]?;
                        (score > self.confidence_threshold).then(|| Scored::new(corners, c, score))
                    })
                    .collect();
                sort_descending(&mut boxes);
                boxes.truncate(self.nms_top_k);
                let kept = suppress(&boxes, self.nms_threshold, Overlap::Ratio);
                kept.into_iter().map(|k| boxes[k]).collect()
            })
            .collect();
        let mut all: Vec<Scored> = per_class.into_iter().flatten().collect();
        sort_descending(&mut all);
        all.truncate(self.keep_top_k);
        if all.is_empty() {
            return Ok(vec![Mat::from_numpy(&[0], &[])?]);
        }
        Ok(vec![detections(&all, 0.0)?])
    }
}
