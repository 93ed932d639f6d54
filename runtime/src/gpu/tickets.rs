//! Which recorded work may still read a freed storage buffer: every chunk of recorded work
//! takes a ticket when it opens, gives it up from the open set when it is handed to the
//! submission thread, and from the unsubmitted set once it is in the queue.
//!
//! A buffer freed while tickets below `next` are open may still be read by those chunks. Another
//! recorder may take it only once they are handed over (its own chunks then go after them in the
//! one submission order); the queue may write it ([`crate::Context::upload`]) only once they are
//! submitted (a queue write runs before the next submission). The recorder whose open chunk read
//! it may take it at once: its own commands run in the order it records them. Without this, a
//! buffer one thread's extractor had just read went back to the shared pool before that read was
//! submitted, and another thread's extractor could overwrite it first.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};

/// Who takes a pooled buffer, which decides what recorded work may still hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Taker {
    /// Work recorded into this recorder.
    Recorder(u64),
    /// Recorded work of a recorder not known: every open chunk must be handed over.
    Unknown,
    /// A queue write, which runs before the next submission.
    Queue,
}

/// The tickets of the chunks not yet handed over, by the recorder holding each, and of those
/// not yet submitted.
#[derive(Debug, Default)]
pub(crate) struct Tickets {
    next: u64,
    open: BTreeMap<u64, u64>,
    unsubmitted: BTreeSet<u64>,
}

impl Tickets {
    /// A ticket for a chunk `recorder` opens.
    pub(crate) fn open(&mut self, recorder: u64) -> u64 {
        let ticket = self.next;
        self.next += 1;
        self.open.insert(ticket, recorder);
        self.unsubmitted.insert(ticket);
        ticket
    }

    /// The chunk went to the submission thread.
    pub(crate) fn hand_over(&mut self, ticket: u64) {
        self.open.remove(&ticket);
    }

    /// The chunk is in the queue, or was dropped unsubmitted.
    pub(crate) fn close(&mut self, ticket: u64) {
        self.open.remove(&ticket);
        self.unsubmitted.remove(&ticket);
    }

    /// What a buffer freed now is tagged with: chunks with lower tickets may read it.
    pub(crate) fn stamp(&self) -> u64 {
        self.next
    }

    /// Whether `taker` may use a buffer stamped `tag`: no chunk that may read it blocks.
    pub(crate) fn clear_for(&self, taker: Taker, tag: u64) -> bool {
        let blocking = match taker {
            Taker::Queue => self.unsubmitted.first().copied(),
            Taker::Unknown => self.open.keys().next().copied(),
            Taker::Recorder(me) => (self.open.iter())
                .find(|(_, owner)| **owner != me)
                .map(|(t, _)| *t),
        };
        blocking.is_none_or(|t| t >= tag)
    }
}

static NEXT_RECORDER: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The recorders alive on this thread, newest last: storage buffers allocated here are for
    /// the newest one's work (a layer allocates its output, then records into it).
    static ACTIVE: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// A new recorder's id, now the newest on this thread.
pub(crate) fn enter_recorder() -> u64 {
    let id = NEXT_RECORDER.fetch_add(1, Ordering::Relaxed);
    ACTIVE.with(|a| a.borrow_mut().push(id));
    id
}

/// Recorder `id` is gone (on whichever thread it was made).
pub(crate) fn leave_recorder(id: u64) {
    ACTIVE.with(|a| {
        let mut a = a.borrow_mut();
        if let Some(at) = a.iter().rposition(|x| *x == id) {
            a.remove(at);
        }
    });
}

/// Who allocates on this thread: its newest recorder, if any.
pub(crate) fn current_taker() -> Taker {
    ACTIVE.with(|a| {
        a.borrow()
            .last()
            .map_or(Taker::Unknown, |id| Taker::Recorder(*id))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_buffer_waits_for_other_recorders_chunks() {
        let mut t = Tickets::default();
        let a = t.open(1);
        let tag = t.stamp();
        // the recorder that read it takes it back at once; another one and the queue wait
        assert!(t.clear_for(Taker::Recorder(1), tag));
        assert!(!t.clear_for(Taker::Recorder(2), tag));
        assert!(!t.clear_for(Taker::Unknown, tag));
        assert!(!t.clear_for(Taker::Queue, tag));
        t.hand_over(a);
        assert!(t.clear_for(Taker::Recorder(2), tag));
        assert!(!t.clear_for(Taker::Queue, tag));
        t.close(a);
        assert!(t.clear_for(Taker::Queue, tag));
    }

    #[test]
    fn chunks_opened_after_the_free_do_not_block() {
        let mut t = Tickets::default();
        let tag = t.stamp();
        t.open(2);
        assert!(t.clear_for(Taker::Recorder(1), tag));
        assert!(t.clear_for(Taker::Queue, tag));
    }

    #[test]
    fn the_newest_recorder_on_a_thread_allocates() {
        let a = enter_recorder();
        let b = enter_recorder();
        assert_eq!(current_taker(), Taker::Recorder(b));
        leave_recorder(b);
        assert_eq!(current_taker(), Taker::Recorder(a));
        leave_recorder(a);
        assert_eq!(current_taker(), Taker::Unknown);
    }
}
