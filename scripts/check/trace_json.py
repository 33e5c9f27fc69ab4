"""The events of a trace file (`.json` or `.json.gz`, an object with `traceEvents` or a bare
array): the one loader the scripts in scripts/check share."""

import gzip
import json


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    return doc["traceEvents"] if isinstance(doc, dict) else doc
