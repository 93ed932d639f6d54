//! The VGF file itself: its model ([`format`](mod@format)), read ([`reader`], through the flatbuffer
//! tables of `fb`) and written ([`writer`]) as Arm's format lays it out, and dumped as Arm's
//! `vgf_dump` prints it ([`dump`]). The conversion stages around it are in the parent folder.

pub mod dump;
mod fb;
pub mod format;
pub mod reader;
pub mod writer;
