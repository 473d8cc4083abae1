#!/usr/bin/env python3
"""Regenerates the fixtures' GGUF twins (golden/testdata/*/model.f32.gguf,
model.q8_0.gguf, and the vision fixtures' golden/testdata/vision/*/
model.f32.gguf and mmproj.f32.gguf: not committed) with gguf_convert.py, numpy and gguf-py
only, and checks each against its sha256 in golden/testdata/gguf.sha256,
the bytes oracle.q8_0.json was computed on.

A twin whose file already has the manifest's hash is left alone, so a warm
run only hashes. Exit status 1, naming the files, when a regenerated twin
differs from the manifest, when a fixture with twins has no manifest entry
or an entry has no fixture. The manifest lists the fixtures that have
twins (gen_gguf_fixtures.py adds them). scripts/test.sh runs it before go test, with
the venv's pinned gguf, safetensors and numpy (scripts/requirements-test.txt):

    python3 golden/make_gguf_twins.py [--all] [--only NAME]

--all rewrites every twin. After changing the converter, regenerate the
twins and their oracles with gen_gguf_fixtures.py (it rewrites the
manifest's entries), not with this.
"""

import argparse
import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_convert as conv  # noqa: E402


def twins(name):
    """The twin files of the fixture at name (a path under TESTDATA): a
    vision fixture's text model and mmproj (gguf_convert.VISION_TWINS),
    else the F32 and Q8_0 twins."""
    return conv.VISION_TWINS if name.startswith("vision/") else conv.TWINS


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--all", action="store_true", help="rewrite every twin, even those whose hash matches")
    ap.add_argument("--only", action="append", help="fixture name (repeatable)")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)  # gguf-py warns of the keys the converter writes twice, as llama.cpp's does
    start = time.time()
    manifest = conv.read_manifest()
    names = sorted({os.path.dirname(p) for p in manifest})
    errors, written = [], 0
    for name in names:
        missing = [t for t in twins(name) if f"{name}/{t}" not in manifest]
        if not os.path.isfile(os.path.join(conv.TESTDATA, name, "model.safetensors")) or missing:
            errors.append(f"{conv.MANIFEST}: {name}: no fixture folder with model.safetensors, or no entry for {missing}")
    folders = [os.path.join(conv.TESTDATA, n) for n in names if not args.only or n in args.only]
    for folder in folders:
        name = os.path.relpath(folder, conv.TESTDATA)
        paths = [os.path.join(folder, t) for t in twins(name)]
        rels = [os.path.relpath(p, conv.TESTDATA) for p in paths]
        if any(r not in manifest for r in rels) or not os.path.isfile(os.path.join(folder, "model.safetensors")):
            continue
        if not args.all and all(os.path.exists(p) and conv.sha256(p) == manifest[r] for p, r in zip(paths, rels)):
            continue
        if name.startswith("vision/"):
            conv.write_vision_twins(folder)
        else:
            conv.write_twins(folder, recorded=conv.recorded_types(folder))
        written += 1
        for p, r in zip(paths, rels):
            got = conv.sha256(p)
            if got != manifest[r]:
                errors.append(f"golden/testdata/{r}: sha256 {got}, the manifest's (the bytes oracle.q8_0.json was computed on) {manifest[r]}: "
                              "is gguf, safetensors or numpy not the pinned version (scripts/requirements-test.txt)?")
        if not args.quiet:
            print(f"make_gguf_twins: wrote {' '.join(rels)}", flush=True)
    for e in errors:
        print(f"make_gguf_twins: {e}", file=sys.stderr)
    print(f"make_gguf_twins: {len(folders)} fixtures, {written} regenerated, {len(errors)} errors, {time.time() - start:.1f} s")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
