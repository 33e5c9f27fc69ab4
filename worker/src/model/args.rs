//! Args store: every event's minified `args` JSON, kept in LZ4 blocks of about 64 KiB.
//!
//! Args are most of a trace's model (310 of 490 MB for 1 GB of JSON) and compress about 6x, so
//! they are packed as they are read; only the block being filled is held raw. An [`ArgsRef`]
//! names its block and its place in it (never two blocks), so a read inflates one block.
//! Loops over many events read through one [`Reader`], which keeps the last block it inflated
//! (neighbouring events share blocks). Device activities' args (kernels, copies, memsets) go to
//! their own blocks, since several analyses read every kernel's args and nothing else: they
//! then inflate a fifth of the text (22% of the dlrm fixture's args bytes are kernels').

use super::ArgsRef;
use crate::codec::{CodecError, Reader as CodecReader, Writer};

/// Raw bytes gathered before a block is packed; LZ4's window is 64 KiB.
const BLOCK: usize = 64 * 1024;

/// Where one packed block starts, in its stream's raw text and in [`Stream::packed`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Block {
    raw: u64,
    packed: u64,
}

/// Which blocks an event's args go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Host events: ops, annotations, runtime calls, instants, counters.
    Host = 0,
    /// Device activities: kernels, copies, memsets.
    Device = 1,
}

/// Set in [`ArgsRef::block`] for a device activity's block.
const DEVICE: u32 = 1 << 31;

/// The bits each side's blocks carry in [`ArgsRef::block`] (index = `Side as usize`).
const SIDE_BITS: [u32; 2] = [0, DEVICE];

/// The side (its index in `Args::streams`) of a block id.
fn side_of(block: u32) -> usize {
    usize::from(block & DEVICE != 0)
}

/// Minified raw args of all events, packed in blocks: the host's and the devices' apart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// Host blocks, then device blocks.
    streams: [Stream; 2],
}

impl Args {
    /// Raw length of all args, in bytes.
    pub fn len(&self) -> u64 {
        self.streams.iter().map(Stream::len).sum()
    }

    /// True when no event had args.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes held (packed blocks, their index, the open blocks).
    pub fn heap_bytes(&self) -> usize {
        self.streams.iter().map(Stream::heap_bytes).sum()
    }

    /// Appends `text` (an event's `args` object, minified by the tokenizer) to `side`'s blocks;
    /// returns its span.
    pub fn push(&mut self, text: &[u8], side: Side) -> ArgsRef {
        let side = side as usize;
        let span = self.streams[side].push(text);
        ArgsRef { block: span.block | SIDE_BITS[side], ..span }
    }

    /// Packs the open blocks and gives back spare capacity (the model is then read-only).
    pub fn finish(&mut self) {
        self.streams.iter_mut().for_each(Stream::finish);
    }

    /// Appends `later`'s args (a later part of the same file); their spans' blocks shift by
    /// [`Args::shifted`] with the returned counts of blocks `self` had.
    pub fn append(&mut self, later: Args) -> [u32; 2] {
        let [host, device] = later.streams;
        [self.streams[0].append(host), self.streams[1].append(device)]
    }

    /// `span` of a later part appended with [`Args::append`], which returned `shift`.
    pub fn shifted(span: ArgsRef, shift: [u32; 2]) -> ArgsRef {
        if span.len == 0 {
            return span;
        }
        ArgsRef { block: span.block + shift[side_of(span.block)], ..span }
    }

    /// A reader that inflates blocks as spans ask for them.
    pub fn reader(&self) -> Reader<'_> {
        Reader { args: self, block: [None; 2], raw: [Vec::new(), Vec::new()] }
    }

    /// The raw text of one span (`{}` when empty or unreadable); loops use [`Args::reader`].
    pub fn text(&self, span: ArgsRef) -> String {
        self.reader().text(span).to_owned()
    }

    /// Calls `f` with every block's id (as in [`ArgsRef::block`]) and raw text, host blocks
    /// first, until it returns false.
    pub fn each_block(&self, mut f: impl FnMut(u32, &[u8]) -> bool) {
        let mut go = true;
        for (stream, bit) in self.streams.iter().zip(SIDE_BITS) {
            if go {
                stream.each_block(|k, raw| {
                    go = f(k | bit, raw);
                    go
                });
            }
        }
    }

    /// Appends the store to `w` (a parse part's state).
    pub fn encode(&self, w: &mut Writer) {
        self.streams.iter().for_each(|s| s.encode(w));
    }

    /// Reads a store written by [`Args::encode`].
    ///
    /// # Errors
    /// When the buffer is short or a block index is not ascending within its buffers.
    pub fn decode(r: &mut CodecReader<'_>) -> Result<Self, CodecError> {
        Ok(Args { streams: [Stream::decode(r)?, Stream::decode(r)?] })
    }
}

/// One sequence of packed blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Stream {
    /// LZ4 blocks back to back.
    packed: Vec<u8>,
    /// Start of every packed block, ascending.
    blocks: Vec<Block>,
    /// Raw text of the block being filled (block `blocks.len()`); its first byte is raw offset
    /// `open_start`.
    open: Vec<u8>,
    open_start: u64,
}

impl Stream {
    fn len(&self) -> u64 {
        self.open_start + self.open.len() as u64
    }

    fn heap_bytes(&self) -> usize {
        self.packed.capacity()
            + self.blocks.capacity() * std::mem::size_of::<Block>()
            + self.open.capacity()
    }

    /// Appends `text`; returns its span in this stream.
    fn push(&mut self, text: &[u8]) -> ArgsRef {
        // A span stays within one block.
        if !self.open.is_empty() && self.open.len() + text.len() > BLOCK {
            self.seal();
        }
        let at = self.open.len();
        self.open.extend_from_slice(text);
        let len = text.len();
        // A block holds at most 64 KiB, or one args object; one over 4 GiB keeps its first 4 GiB.
        ArgsRef {
            block: u32::try_from(self.blocks.len()).unwrap_or(u32::MAX),
            at: u32::try_from(at).unwrap_or(u32::MAX),
            len: u32::try_from(len).unwrap_or(u32::MAX),
        }
    }

    /// Packs the open block, if any.
    fn seal(&mut self) {
        if self.open.is_empty() {
            return;
        }
        let at = self.packed.len();
        self.blocks.push(Block {
            raw: self.open_start,
            packed: at as u64,
        });
        // Packed into a buffer of its own: packing in place would zero LZ4's worst-case room
        // (the block's size and more) for every block. A block that does not shrink is stored
        // as it came (a read then sees a packed length equal to the raw length and copies it).
        let packed = lz4_flex::block::compress(&self.open);
        self.packed.extend_from_slice(if packed.len() < self.open.len() { &packed } else { &self.open });
        self.open_start += self.open.len() as u64;
        self.open.clear();
    }

    fn finish(&mut self) {
        self.seal();
        self.open = Vec::new();
        self.packed.shrink_to_fit();
        self.blocks.shrink_to_fit();
    }

    /// Appends `later`; returns the count of blocks `self` had.
    fn append(&mut self, later: Stream) -> u32 {
        self.seal();
        let shift = u32::try_from(self.blocks.len()).unwrap_or(u32::MAX);
        let base = self.len();
        let packed_base = self.packed.len() as u64;
        self.blocks.extend(later.blocks.iter().map(|b| Block {
            raw: b.raw + base,
            packed: b.packed + packed_base,
        }));
        self.packed.extend_from_slice(&later.packed);
        self.open_start = base + later.open_start;
        self.open = later.open;
        shift
    }

    /// Calls `f` with every block's index and raw text, in order, until it returns false.
    fn each_block(&self, mut f: impl FnMut(u32, &[u8]) -> bool) {
        let mut raw = Vec::new();
        for k in 0..self.blocks.len() {
            if !self.inflate(k, &mut raw) || !f(k as u32, &raw) {
                return;
            }
        }
        if !self.open.is_empty() {
            f(self.blocks.len() as u32, &self.open);
        }
    }

    /// Raw and packed extent of block `k`.
    fn extent(&self, k: usize) -> (u64, u64, std::ops::Range<usize>) {
        let b = self.blocks[k];
        let (raw_end, packed_end) = self
            .blocks
            .get(k + 1)
            .map_or((self.open_start, self.packed.len() as u64), |n| {
                (n.raw, n.packed)
            });
        (b.raw, raw_end, b.packed as usize..packed_end as usize)
    }

    /// Inflates block `k` into `out`; false when it cannot be read.
    fn inflate(&self, k: usize, out: &mut Vec<u8>) -> bool {
        let (raw_start, raw_end, packed) = self.extent(k);
        let Some(src) = self.packed.get(packed) else {
            return false;
        };
        let n = (raw_end - raw_start) as usize;
        out.clear();
        if src.len() == n {
            out.extend_from_slice(src);
            return true;
        }
        out.resize(n, 0);
        matches!(lz4_flex::block::decompress_into(src, out), Ok(m) if m == n)
    }

    fn encode(&self, w: &mut Writer) {
        w.u64s(&self.blocks.iter().map(|b| b.raw).collect::<Vec<_>>());
        w.u64s(&self.blocks.iter().map(|b| b.packed).collect::<Vec<_>>());
        w.bytes(&self.packed);
        w.u64(self.open_start);
        w.bytes(&self.open);
    }

    fn decode(r: &mut CodecReader<'_>) -> Result<Self, CodecError> {
        let raw = r.u64s()?;
        let packed_at = r.u64s()?;
        let packed = r.bytes()?.to_vec();
        let open_start = r.u64()?;
        let open = r.bytes()?.to_vec();
        let ascending = |v: &[u64], end: u64| {
            v.windows(2).all(|w| w[0] <= w[1]) && v.last().is_none_or(|&l| l <= end)
        };
        if raw.len() != packed_at.len()
            || !ascending(&raw, open_start)
            || !ascending(&packed_at, packed.len() as u64)
        {
            return Err(CodecError(
                "inconsistent part encoding: args block index out of order".into(),
            ));
        }
        let blocks = raw
            .iter()
            .zip(&packed_at)
            .map(|(&raw, &packed)| Block { raw, packed })
            .collect();
        Ok(Stream {
            packed,
            blocks,
            open,
            open_start,
        })
    }
}

/// Reads spans of an [`Args`], keeping the last block it inflated of each side.
pub struct Reader<'a> {
    args: &'a Args,
    /// Per side, the block in `raw`, if any.
    block: [Option<u32>; 2],
    raw: [Vec<u8>; 2],
}

impl Reader<'_> {
    /// The raw JSON text of a span (`{}` when empty or unreadable).
    pub fn text(&mut self, span: ArgsRef) -> &str {
        std::str::from_utf8(self.bytes(span)).unwrap_or("{}")
    }

    /// The raw bytes of a span (`{}` when empty or unreadable).
    pub fn bytes(&mut self, span: ArgsRef) -> &[u8] {
        if span.len == 0 {
            return b"{}";
        }
        let side = side_of(span.block);
        let stream = &self.args.streams[side];
        let k = (span.block & !SIDE_BITS[side]) as usize;
        let range = span.at as usize..span.at as usize + span.len as usize;
        if k == stream.blocks.len() {
            return stream.open.get(range).unwrap_or(b"{}");
        }
        if self.block[side] != Some(span.block) {
            self.block[side] = None;
            if k > stream.blocks.len() || !stream.inflate(k, &mut self.raw[side]) {
                return b"{}";
            }
            self.block[side] = Some(span.block);
        }
        self.raw[side].get(range).unwrap_or(b"{}")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{Args, Side, BLOCK};
    use crate::codec::{Reader, Writer};

    /// `n` args, every third on the device side.
    fn filled(n: usize) -> (Args, Vec<(super::ArgsRef, String)>) {
        let mut args = Args::default();
        let spans = (0..n)
            .map(|i| {
                let minified = format!("{{\"External id\":{i},\"Input Dims\":[[{i},64],[64]],\"name\":\"op {}\"}}", i % 7);
                let side = if i % 3 == 0 { Side::Device } else { Side::Host };
                (args.push(minified.as_bytes(), side), minified)
            })
            .collect();
        (args, spans)
    }

    #[test]
    fn spans_read_back_across_blocks_in_any_order() {
        let (mut args, spans) = filled(30_000);
        args.finish();
        assert!(args.streams.iter().all(|s| s.blocks.len() > 5));
        assert!(args.heap_bytes() * 3 < args.len() as usize, "{} packed of {}", args.heap_bytes(), args.len());
        let mut reader = args.reader();
        for (span, text) in spans.iter().chain(spans.iter().rev()).step_by(3) {
            assert_eq!(reader.text(*span), text);
        }
        assert_eq!(args.text(super::ArgsRef::default()), "{}");
    }

    #[test]
    fn no_span_crosses_a_block_and_big_args_get_their_own() {
        let mut args = Args::default();
        let big = format!("{{\"k\":\"{}\"}}", "x".repeat(3 * BLOCK));
        let a = args.push(b"{\"a\":1}", Side::Host);
        let b = args.push(big.as_bytes(), Side::Host);
        let c = args.push(b"{\"c\":3}", Side::Device);
        args.finish();
        let mut reader = args.reader();
        assert_eq!(reader.text(b), big);
        assert_eq!(reader.text(a), "{\"a\":1}");
        assert_eq!(reader.text(c), "{\"c\":3}");
    }

    #[test]
    fn appended_and_decoded_stores_read_as_one() {
        let (mut first, spans) = filled(3000);
        let (second, later) = filled(2000);
        let shift = first.append(second);
        let mut w = Writer::with_capacity(0);
        first.encode(&mut w);
        let bytes = w.into_bytes();
        let mut whole = Args::decode(&mut Reader::new(&bytes)).unwrap();
        whole.finish();
        let mut reader = whole.reader();
        for (span, text) in &spans {
            assert_eq!(reader.text(*span), text);
        }
        for (span, text) in &later {
            assert_eq!(reader.text(Args::shifted(*span, shift)), text);
        }
        let mut seen = String::new();
        whole.each_block(|_, raw| {
            seen.push_str(std::str::from_utf8(raw).unwrap());
            true
        });
        assert_eq!(seen.len() as u64, whole.len());
    }
}
