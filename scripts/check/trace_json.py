"""The events of a trace file (`.json` or `.json.gz`, an object with `traceEvents` or a bare
array): the one loader the scripts in scripts/check share.

Times convert to integer ns as the engine's tokenizer does (`ns`): exact for up to three
decimals, half up beyond. A float cannot do that for epoch timestamps: 1694128201437021 µs
times 1000 is 1.69e18, where a float64 is only exact to 256 ns, so zero-length calls 1 µs apart
(dlrm's occupancy queries) could appear nested. Fractional numbers therefore keep their JSON text."""

import gzip
import json
from decimal import ROUND_HALF_UP, Decimal


class Num(float):
    """A JSON number with a fraction: a float that remembers its text (for `ns`)."""

    __slots__ = ("text",)

    def __new__(cls, text):
        num = float.__new__(cls, text)
        num.text = text
        return num


def load_doc(path):
    """The parsed file: a dict (with `traceEvents`) or a list of events."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw, parse_float=Num)


def load(path):
    doc = load_doc(path)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def ns(us):
    """µs as written in the trace -> integer ns, exactly (half up past three decimals)."""
    if isinstance(us, int):
        return us * 1000
    text = getattr(us, "text", None) or repr(float(us))
    return int((Decimal(text) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))
