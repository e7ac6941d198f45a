"""lz4-java's block stream (net.jpountz.lz4.LZ4BlockOutputStream and LZ4BlockInputStream),
the framing Spark's HistogramSerializer writes histograms in. The blocks are liblz4's,
through the `lz4` package's block codec (lz4.block), the checksums XXH32 through `xxhash`;
only the framing is written here."""

from __future__ import annotations

import struct

import lz4.block
import xxhash

LZ4_MAGIC = b"LZ4Block"  # LZ4BlockOutputStream.MAGIC
LZ4_METHOD_RAW = 0x10  # COMPRESSION_METHOD_RAW
LZ4_METHOD_LZ4 = 0x20  # COMPRESSION_METHOD_LZ4
LZ4_COMPRESSION_LEVEL_BASE = 10  # COMPRESSION_LEVEL_BASE
LZ4_BLOCK_SIZE = 1 << 16  # the stream's default block size (64 KB)
LZ4_CHECKSUM_SEED = 0x9747B28C  # LZ4BlockOutputStream.DEFAULT_SEED
LZ4_CHECKSUM_MASK = 0xFFFFFFF  # StreamingXXHash32.asChecksum().getValue() & 0xFFFFFFFL
_LZ4_HEADER = struct.Struct("<8sBiii")  # magic, token, compressed, original, checksum


def lz4_block_stream(data: bytes, block_size: int = LZ4_BLOCK_SIZE, compress: bool = True) -> bytes:
    """`data` framed as lz4-java's LZ4BlockOutputStream writes it (LZ4BlockOutputStream.java):
    per block the magic, a token (method | compression level), compressed and original
    lengths and the XXHash32 checksum of the original bytes (little-endian), then the block,
    LZ4-compressed (liblz4's LZ4_compress_default through lz4.block, the fast compressor
    lz4-java uses) or stored RAW where that is no smaller, as lz4-java does; finish() adds an
    empty block as the end mark."""
    level = max(0, (block_size - 1).bit_length() - LZ4_COMPRESSION_LEVEL_BASE)
    out = bytearray()
    for start in range(0, len(data), block_size):
        block = data[start : start + block_size]
        check = xxhash32(block, LZ4_CHECKSUM_SEED) & LZ4_CHECKSUM_MASK
        packed = lz4.block.compress(block, store_size=False) if compress else block
        method = LZ4_METHOD_LZ4
        if len(packed) >= len(block):
            packed, method = block, LZ4_METHOD_RAW
        out += _LZ4_HEADER.pack(LZ4_MAGIC, method | level, len(packed), len(block), check)
        out += packed
    out += _LZ4_HEADER.pack(LZ4_MAGIC, LZ4_METHOD_RAW | level, 0, 0, 0)  # the end mark
    return bytes(out)


def read_lz4_block_stream(stream: bytes) -> bytes:
    """The bytes of an LZ4 block stream (LZ4BlockInputStream.java), RAW or LZ4 blocks,
    checksums verified."""
    out = bytearray()
    offset = 0
    while offset < len(stream):
        magic, token, compressed, original, check = _LZ4_HEADER.unpack_from(stream, offset)
        offset += _LZ4_HEADER.size
        if magic != LZ4_MAGIC:
            raise ValueError("not an LZ4 block stream (bad magic)")
        if original == 0 and compressed == 0:
            break
        packed = stream[offset : offset + compressed]
        offset += compressed
        method = token & 0xF0
        if method == LZ4_METHOD_RAW and compressed == original:
            block = packed
        elif method == LZ4_METHOD_LZ4:
            block = lz4_decompress_block(packed, original)
        else:
            raise ValueError(f"an LZ4 block of unknown method {method:#x}")
        if xxhash32(block, LZ4_CHECKSUM_SEED) & LZ4_CHECKSUM_MASK != check:
            raise ValueError("LZ4 block checksum mismatch")
        out += block
    return bytes(out)


def lz4_decompress_block(src: bytes, size: int) -> bytes:
    """The `size` bytes an LZ4 block encodes (lz4/doc/lz4_Block_format.md), by lz4.block;
    ValueError where the block is corrupt or encodes another size."""
    try:
        block: bytes = lz4.block.decompress(src, uncompressed_size=size)
    except lz4.block.LZ4BlockError as error:
        raise ValueError(f"a corrupt LZ4 block ({error})") from error
    if len(block) != size:
        raise ValueError(f"a corrupt LZ4 block ({len(block)} bytes, {size} expected)")
    return block


def xxhash32(data: bytes, seed: int = 0) -> int:
    """XXH32 (Cyan4973/xxHash, doc/xxhash_spec.md; lz4-java's XXHash32), unsigned, by
    `xxhash`; the seed taken modulo 2**32 as Java's int is.

    >>> hex(xxhash32(b"")), hex(xxhash32(b"abc"))
    ('0x2cc5d05', '0x32d153ff')
    """
    return xxhash.xxh32_intdigest(data, seed & 0xFFFFFFFF)
