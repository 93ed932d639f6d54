//! Counters of submitted work, per context: submissions, bind groups, new buffers, and the
//! host's recording, waiting, uploading and reading-back time ([`crate::Context::submission_stats`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Counters behind [`Context::submission_stats`].
#[derive(Debug, Default)]
pub(crate) struct StatCounters {
    pub(crate) submissions: AtomicU64,
    pub(crate) bind_groups: AtomicU64,
    pub(crate) new_buffers: AtomicU64,
    pub(crate) record_ns: AtomicU64,
    pub(crate) submit_ns: AtomicU64,
    pub(crate) wait_ns: AtomicU64,
    pub(crate) upload_ns: AtomicU64,
    pub(crate) uploads: AtomicU64,
    pub(crate) upload_bytes: AtomicU64,
    pub(crate) read_ns: AtomicU64,
}

impl StatCounters {
    pub(crate) fn add(&self, counter: &AtomicU64, d: Duration) {
        counter.fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> SubmissionStats {
        let d = |c: &AtomicU64| Duration::from_nanos(c.load(Ordering::Relaxed));
        SubmissionStats {
            submissions: self.submissions.load(Ordering::Relaxed),
            bind_groups: self.bind_groups.load(Ordering::Relaxed),
            new_buffers: self.new_buffers.load(Ordering::Relaxed),
            recording: d(&self.record_ns),
            submitting: d(&self.submit_ns),
            waiting: d(&self.wait_ns),
            uploading: d(&self.upload_ns),
            uploads: self.uploads.load(Ordering::Relaxed),
            upload_bytes: self.upload_bytes.load(Ordering::Relaxed),
            reading: d(&self.read_ns),
        }
    }
}

/// What [`Context::submission_stats`](crate::Context::submission_stats) reports; subtract two to measure what lies between.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubmissionStats {
    /// Command buffers submitted: a recorder's chunks, the last of each waited for.
    pub submissions: u64,
    /// Bind groups created (not found in a pipeline's cache of recent ones): after a warm-up
    /// run, a net's run should create none.
    pub bind_groups: u64,
    /// Storage buffers created (none free in the pool): after a warm-up run, none.
    pub new_buffers: u64,
    /// Host time from a recorder's creation to its last submission: the layers' recording,
    /// while the device already runs the chunks submitted before.
    pub recording: Duration,
    /// Host time the context's submission thread spent on the chunks, alongside the
    /// recording: ending their passes and finishing them (where wgpu validates and encodes
    /// what was recorded), and submitting them.
    pub submitting: Duration,
    /// Time from the last submission to completion: the device's work not yet done by then,
    /// plus the wait's latency.
    pub waiting: Duration,
    /// Host time writing uploads into the queue's staging memory.
    pub uploading: Duration,
    /// Uploads written, and their bytes: after a warm-up run, a net's inputs alone (weights,
    /// tables and constants stay on the device).
    pub uploads: u64,
    /// The bytes of those uploads (their buffers' padded sizes).
    pub upload_bytes: u64,
    /// Host time reading downloads back: mapping the readback buffer (its own wait for the
    /// device) and decoding out of it.
    pub reading: Duration,
}

impl std::ops::Sub for SubmissionStats {
    type Output = SubmissionStats;

    fn sub(self, before: SubmissionStats) -> SubmissionStats {
        SubmissionStats {
            submissions: self.submissions - before.submissions,
            bind_groups: self.bind_groups - before.bind_groups,
            new_buffers: self.new_buffers - before.new_buffers,
            recording: self.recording.saturating_sub(before.recording),
            submitting: self.submitting.saturating_sub(before.submitting),
            waiting: self.waiting.saturating_sub(before.waiting),
            uploading: self.uploading.saturating_sub(before.uploading),
            uploads: self.uploads - before.uploads,
            upload_bytes: self.upload_bytes - before.upload_bytes,
            reading: self.reading.saturating_sub(before.reading),
        }
    }
}
