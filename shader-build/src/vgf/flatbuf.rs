//! Hand-written FlatBuffers views, shared by the VGF tables ([`super::fb`]) and TOSA's
//! ([`super::tosa::flatbuffer`]): a `table!` declares a view and the verifier that checks each
//! field at its schema type, and [`Fields`] reads fields only at those types.
//!
//! Written by hand because flatc (which would generate this) is not a Rust crate; the views
//! follow the shape of generated code: `Follow` to view, `Verifiable` to bounds-check.

use flatbuffers::{Follow, ForwardsUOffset, InvalidFlatbuffer, Table, VOffsetT, Vector, Verifier};

/// The vtable slot of the `i`-th field of a table.
pub(crate) const fn field(i: usize) -> VOffsetT {
    (4 + 2 * i) as VOffsetT
}

/// What a verifier returns.
pub(crate) type Res = Result<(), InvalidFlatbuffer>;
/// A vector of tables.
pub(crate) type Tables<'a, T> = Vector<'a, ForwardsUOffset<T>>;

/// A view of one table; only reachable through a root the verifier has checked.
macro_rules! wrapper {
    ($name:ident) => {
        #[derive(Clone, Copy)]
        pub(super) struct $name<'a>(::flatbuffers::Table<'a>);

        impl<'a> ::flatbuffers::Follow<'a> for $name<'a> {
            type Inner = $name<'a>;
            unsafe fn follow(buf: &'a [u8], loc: usize) -> Self::Inner {
                // SAFETY: the caller (flatbuffers' Follow contract) vouches for `loc`
                $name(unsafe { ::flatbuffers::Table::new(buf, loc) })
            }
        }

        impl<'a> $crate::vgf::flatbuf::Fields<'a> for $name<'a> {
            fn table(self) -> ::flatbuffers::Table<'a> {
                self.0
            }
        }
    };
}
pub(crate) use wrapper;

/// A view plus a verifier that checks each field at its schema type.
macro_rules! table {
    ($name:ident { $($idx:literal $fname:literal: $ty:ty),* $(,)? }) => {
        $crate::vgf::flatbuf::wrapper!($name);

        impl ::flatbuffers::Verifiable for $name<'_> {
            fn run_verifier(
                v: &mut ::flatbuffers::Verifier,
                pos: usize,
            ) -> $crate::vgf::flatbuf::Res {
                v.visit_table(pos)?
                    $(.visit_field::<$ty>($fname, $crate::vgf::flatbuf::field($idx), false)?)*
                    .finish();
                Ok(())
            }
        }
    };
}
pub(crate) use table;

/// Typed reads of the fields of a verified table, absent fields giving the schema's default.
/// Each view's accessors name a field once, at the type its verifier checked.
pub(crate) trait Fields<'a>: Copy {
    /// The table.
    fn table(self) -> Table<'a>;

    /// Field `i` as `T`.
    fn read<T: Follow<'a> + 'a>(self, i: usize) -> Option<T::Inner> {
        // SAFETY: the table was verified (root_with_opts) with field `i` at type `T`
        unsafe { self.table().get::<T>(field(i), None) }
    }
    /// A `ubyte`/`bool` field.
    fn u8_at(self, i: usize) -> u8 {
        self.read::<u8>(i).unwrap_or(0)
    }
    /// A `uint32` field.
    fn u32_at(self, i: usize, default: u32) -> u32 {
        self.read::<u32>(i).unwrap_or(default)
    }
    /// An `int32` field.
    fn i32_at(self, i: usize) -> i32 {
        self.read::<i32>(i).unwrap_or(0)
    }
    /// A `string` field.
    fn str_at(self, i: usize) -> &'a str {
        self.read::<ForwardsUOffset<&'a str>>(i).unwrap_or("")
    }
    /// A `[uint32]` field.
    fn u32s_at(self, i: usize) -> Vec<u32> {
        self.read::<ForwardsUOffset<Vector<'a, u32>>>(i)
            .map(|v| v.iter().collect())
            .unwrap_or_default()
    }
    /// An `[int32]` field.
    fn i32s_at(self, i: usize) -> Vec<i32> {
        self.read::<ForwardsUOffset<Vector<'a, i32>>>(i)
            .map(|v| v.iter().collect())
            .unwrap_or_default()
    }
    /// A `[ubyte]` field.
    fn bytes_at(self, i: usize) -> &'a [u8] {
        self.read::<ForwardsUOffset<Vector<'a, u8>>>(i)
            .map(|v| v.bytes())
            .unwrap_or_default()
    }
    /// An `[int64]` field (see [`Int64s`]).
    fn int64s_at(self, i: usize) -> Vec<i64> {
        self.read::<ForwardsUOffset<Int64s<'a>>>(i)
            .map_or_else(Vec::new, Int64s::to_vec)
    }
    /// A `[string]` field.
    fn strings_at(self, i: usize) -> Vec<String> {
        self.read::<ForwardsUOffset<Vector<'a, ForwardsUOffset<&'a str>>>>(i)
            .map(|v| v.iter().map(str::to_string).collect())
            .unwrap_or_default()
    }
    /// A `[T]` field of tables.
    fn tables_at<T: Follow<'a, Inner = T> + 'a>(self, i: usize) -> Vec<T> {
        self.read::<ForwardsUOffset<Tables<'a, T>>>(i)
            .map(|v| v.iter().collect())
            .unwrap_or_default()
    }
}

/// A `[int64]` vector read without requiring 8-byte alignment of its elements: Arm's writer
/// leaves empty ones (`strides: []`) 4-aligned, which the crate's verifier would refuse.
#[derive(Clone, Copy)]
pub(crate) struct Int64s<'a>(&'a [u8]);

impl<'a> Follow<'a> for Int64s<'a> {
    type Inner = Int64s<'a>;
    unsafe fn follow(buf: &'a [u8], loc: usize) -> Self::Inner {
        // the verifier checked that the length and the elements lie inside `buf`
        let len = u32::from_le_bytes([buf[loc], buf[loc + 1], buf[loc + 2], buf[loc + 3]]);
        Int64s(&buf[loc + 4..loc + 4 + len as usize * 8])
    }
}

impl flatbuffers::Verifiable for Int64s<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Res {
        let len = v.get_uoffset(pos)? as usize;
        v.range_in_buffer(pos.saturating_add(4), len.saturating_mul(8))
    }
}

impl Int64s<'_> {
    fn to_vec(self) -> Vec<i64> {
        self.0
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                i64::from_le_bytes(b)
            })
            .collect()
    }
}
