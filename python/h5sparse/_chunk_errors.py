"""The connector-free reader's errors (vl_chunks.py and the codecs it calls)."""


class CorruptChunkError(ValueError):
    """Stored bytes or parameters that break docs/FORMAT.md (checksums included)."""


class MissingCodecError(RuntimeError):
    """A section pipeline uses a codec that no library here decodes."""
