#!/usr/bin/env python3
"""Extracts the frames of a FlameGraph (flamegraph.pl) SVG: one line per frame,
`depth samples name`, depth 0 being `all`, sorted. The frame's depth is the rank of its
rect's y from the bottom; its samples are those of its <title> ("name (N samples, P%)").
Usage: svg-frames.py FLAME.svg > FLAME.frames"""
import html, re, sys

svg = open(sys.argv[1]).read()
frames = re.findall(
    r'<title>(.*) \(([0-9,]+) samples, [0-9.]+%\)</title><rect x="[0-9.]+" y="([0-9.]+)"', svg)
ys = sorted({float(y) for _, _, y in frames}, reverse=True)
depth = {y: i for i, y in enumerate(ys)}
lines = sorted((depth[float(y)], int(n.replace(',', '')), html.unescape(name))
               for name, n, y in frames)
for d, n, name in lines:
    print(d, n, name)
