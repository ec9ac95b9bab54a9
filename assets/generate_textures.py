#!/usr/bin/env python3
"""Writes the fabric patterns in assets/textures/ (run from the repository root:
`python3 assets/generate_textures.py`). Each is a 64 x 64 grey PNG that tiles seamlessly;
the app multiplies it by the preset's cloth colour, so one pattern serves every colour.

- weave.png: plain weave (cotton, canvas): over-under yarns, one cell per 8 pixels.
- twill.png: 2/1 twill (denim): diagonal ribs.
- gingham.png: gingham check (tablecloths): bands crossing at half strength.
- grain.png: leather grain: smooth value noise.
- dots.png: polka dots (balloons, beach balls).
"""

import math
import os
import struct
import zlib

SIZE = 64
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "textures")


def write_png(name, shade):
    """A greyscale PNG whose pixel (x, y) has the brightness shade(x, y) in [0, 1]."""
    rows = b"".join(b"\x00" + bytes(round(255 * min(1.0, max(0.0, shade(x, y)))) for x in range(SIZE)) for y in range(SIZE))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 0, 0, 0, 0)  # 8-bit greyscale
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")
    with open(os.path.join(HERE, name), "wb") as out:
        out.write(png)


def weave(x, y):
    cell, along = 8, (x // 8 + y // 8) % 2
    t = (y % cell if along else x % cell) + 0.5
    return 0.78 + 0.22 * math.sin(math.pi * t / cell)


def twill(x, y):
    return 0.72 + 0.28 * (0.5 + 0.5 * math.cos(2 * math.pi * ((x + 2 * y) % 16) / 16))


def gingham(x, y):
    band = lambda v: (v // 16) % 2 == 0
    return 1.0 - 0.3 * band(x) - 0.3 * band(y)


def lattice(i, j):
    """A fixed pseudo-random value in [0, 1] per lattice point, periodic over 8 cells."""
    h = ((i % 8) * 73856093) ^ ((j % 8) * 19349663)
    return ((h * 2654435761) % 1000) / 999


def grain(x, y):
    u, v = x / 8, y / 8
    i, j = int(u), int(v)
    fu, fv = u - i, v - j
    s = lambda t: t * t * (3 - 2 * t)
    top = lattice(i, j) + s(fu) * (lattice(i + 1, j) - lattice(i, j))
    bottom = lattice(i, j + 1) + s(fu) * (lattice(i + 1, j + 1) - lattice(i, j + 1))
    return 0.75 + 0.25 * (top + s(fv) * (bottom - top))


def dots(x, y):
    cx, cy = (x % 32) - 15.5, (y % 32) - 15.5
    return 0.55 if cx * cx + cy * cy < 64 else 1.0


if __name__ == "__main__":
    os.makedirs(HERE, exist_ok=True)
    for name, shade in (("weave", weave), ("twill", twill), ("gingham", gingham), ("grain", grain), ("dots", dots)):
        write_png(f"{name}.png", shade)
