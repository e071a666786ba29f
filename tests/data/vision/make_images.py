#!/usr/bin/env python3
"""Writes the fixed test images of tests/vision (run from this folder; the outputs are committed).

PNGs are written here with only zlib, byte by byte, so their pixels are exactly the formulas
below (the C++ tests recompute the same formulas). JPEG and WebP come from Debian's encoders:
  apt-get install libjpeg-turbo-progs webp      # cjpeg, cwebp, img2webp
cmyk.jpg comes from make_cmyk_jpeg.c (libjpeg). EXIF orientation files: for each orientation o the stored pixels are the upright picture
transformed by the inverse of o, so every one of them must decode to the same upright picture.
"""
import os
import struct
import subprocess
import tempfile
import zlib


def chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def png(path, width, height, color_type, bit_depth, rows, palette=None, trns=None):
    """rows: list of bytes objects, one filtered-with-None scanline each (without the filter byte)."""
    raw = b"".join(b"\x00" + r for r in rows)
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0))
    if palette is not None:
        out += chunk(b"PLTE", bytes(v for rgb in palette for v in rgb))
    if trns is not None:
        out += chunk(b"tRNS", trns)
    out += chunk(b"IDAT", zlib.compress(raw, 9))
    out += chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(out)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]


def png_interlaced(path, width, height, color_type, pixel):
    """Adam7: seven passes of sub-images, each row with filter byte 0; empty passes have no rows."""
    raw = b""
    for x0, y0, dx, dy in ADAM7:
        xs, ys = range(x0, width, dx), range(y0, height, dy)
        if len(xs) == 0 or len(ys) == 0:
            continue
        for y in ys:
            raw += b"\x00" + bytes(v for x in xs for v in pixel(x, y))
    out = b"\x89PNG\r\n\x1a\n"
    out += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 1))
    out += chunk(b"IDAT", zlib.compress(raw, 9))
    out += chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(out)


def pattern(x, y):
    """The RGB test pattern, also computed in tests/vision/image_decode_test.cpp."""
    return ((x * 37 + y * 11) % 256, (x * 5 + y * 73) % 256, (x * y * 3 + 7) % 256)


def alpha(x, y):
    return (x * 40 + y * 90) % 256


W, H = 7, 5


def write_pngs():
    png("rgb8.png", W, H, 2, 8,
        [bytes(v for x in range(W) for v in pattern(x, y)) for y in range(H)])
    png("rgba8.png", W, H, 6, 8,
        [bytes(v for x in range(W) for v in pattern(x, y) + (alpha(x, y),)) for y in range(H)])
    png("gray8.png", W, H, 0, 8, [bytes(pattern(x, y)[0] for x in range(W)) for y in range(H)])
    png("graya8.png", W, H, 4, 8,
        [bytes(v for x in range(W) for v in (pattern(x, y)[0], alpha(x, y))) for y in range(H)])
    # 16 bits: v * 257, so stripping to 8 bits gives v back exactly.
    png("rgb16.png", W, H, 2, 16,
        [b"".join(struct.pack(">H", v * 257) for x in range(W) for v in pattern(x, y))
         for y in range(H)])
    # Palette of 4 colours, entry 3 half transparent; pixel index (x + y) % 4.
    pal = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (10, 20, 30)]
    png("palette.png", W, H, 3, 8, [bytes((x + y) % 4 for x in range(W)) for y in range(H)],
        palette=pal, trns=bytes([255, 255, 255, 128]))
    # Adam7-interlaced, 11 x 9 so that every pass has pixels.
    png_interlaced("rgb8_interlaced.png", 11, 9, 2, pattern)
    png_interlaced("rgba8_interlaced.png", 11, 9, 6, lambda x, y: pattern(x, y) + (alpha(x, y),))
    # A decompression bomb: 100000 x 100000 declared, a few bytes of data.
    png("bomb.png", 100000, 100000, 2, 8, [b""])


# The upright picture for JPEG/WebP: four flat 16x8 quadrants (8x8 blocks stay flat, so a
# 4:4:4 JPEG keeps them within a few levels).
QUAD = [(200, 30, 40), (30, 180, 60), (40, 60, 220), (230, 220, 50)]
QW, QH = 32, 16


def upright():
    return [[QUAD[(y >= QH // 2) * 2 + (x >= QW // 2)] for x in range(QW)] for y in range(QH)]


def rot_cw(r):
    return [list(row) for row in zip(*r[::-1])]


def rot_ccw(r):
    return [list(row) for row in zip(*r)][::-1]


def transpose(r):
    return [list(row) for row in zip(*r)]


def rot180(r):
    return [row[::-1] for row in r[::-1]]


# stored = inverse of what orientation o asks the viewer to do
STORED = {
    1: lambda r: r,
    2: lambda r: [row[::-1] for row in r],
    3: rot180,
    4: lambda r: r[::-1],
    5: transpose,
    6: rot_ccw,   # the viewer rotates 90 degrees clockwise
    7: lambda r: rot180(transpose(r)),
    8: rot_cw,    # the viewer rotates 90 degrees counter-clockwise
}


def ppm(path, rows):
    h, w = len(rows), len(rows[0])
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w, h))
        f.write(bytes(v for row in rows for px in row for v in px))


def exif_app1(orientation, big_endian):
    e = ">" if big_endian else "<"
    tiff = (b"MM" if big_endian else b"II") + struct.pack(e + "HI", 42, 8)
    # IFD0: two entries (a dummy ImageWidth before Orientation), next-IFD offset 0.
    tiff += struct.pack(e + "H", 2)
    tiff += struct.pack(e + "HHI", 0x0100, 4, 1) + struct.pack(e + "I", QW)
    tiff += struct.pack(e + "HHI", 0x0112, 3, 1) + struct.pack(e + "HH", orientation, 0)
    tiff += struct.pack(e + "I", 0)
    payload = b"Exif\x00\x00" + tiff
    return b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload


def cjpeg(ppm_path, out, *args):
    subprocess.run(["cjpeg", "-quality", "95", "-sample", "1x1", *args, "-outfile", out, ppm_path],
                   check=True)


def write_jpegs_webps(tmp):
    up = os.path.join(tmp, "up.ppm")
    ppm(up, upright())
    cjpeg(up, "quad.jpg")
    cjpeg(up, "quad_progressive.jpg", "-progressive")
    cjpeg(up, "quad_gray.jpg", "-grayscale")
    for o in range(1, 9):
        p = os.path.join(tmp, "o%d.ppm" % o)
        ppm(p, STORED[o](upright()))
        j = os.path.join(tmp, "o%d.jpg" % o)
        cjpeg(p, j)
        data = open(j, "rb").read()
        with open("exif_orientation_%d.jpg" % o, "wb") as f:
            f.write(data[:2] + exif_app1(o, big_endian=(o % 2 == 0)) + data[2:])
    # CMYK (Adobe, inverted) from a small libjpeg program: needs a C compiler and libjpeg-dev.
    exe = os.path.join(tmp, "make_cmyk_jpeg")
    subprocess.run(["cc", "-O1", "make_cmyk_jpeg.c", "-ljpeg", "-o", exe], check=True)
    subprocess.run([exe, "cmyk.jpg"], check=True)
    # A CPU bomb: a progressive JPEG whose last scan is repeated 400 times (each scan makes the
    # decoder pass over the whole image again; libjpeg only warns about the bogus progression).
    data = open("quad_progressive.jpg", "rb").read()
    sos = data.rindex(b"\xff\xda")
    eoi = data.rindex(b"\xff\xd9")
    open("many_scans.jpg", "wb").write(data[:eoi] + data[sos:eoi] * 400 + data[eoi:])
    # JPEG bomb: the quad JPEG with its SOF0 saying 60000 x 60000.
    data = bytearray(open("quad.jpg", "rb").read())
    i = data.index(b"\xff\xc0")
    struct.pack_into(">HH", data, i + 5, 60000, 60000)
    open("bomb.jpg", "wb").write(bytes(data))

    # WebP: lossless (exact) from the RGB pattern PNG and the RGBA one, lossy from the quadrants.
    subprocess.run(["cwebp", "-quiet", "-lossless", "-exact", "rgb8.png", "-o", "rgb8_lossless.webp"],
                   check=True)
    subprocess.run(["cwebp", "-quiet", "-lossless", "-exact", "rgba8.png", "-o",
                    "rgba8_lossless.webp"], check=True)
    qpng = os.path.join(tmp, "quad.png")
    rows = upright()
    png(qpng, QW, QH, 2, 8, [bytes(v for px in row for v in px) for row in rows])
    subprocess.run(["cwebp", "-quiet", "-q", "95", "-sharp_yuv", qpng, "-o", "quad_lossy.webp"],
                   check=True)
    # Animated WebP (two frames): refused, a still image is expected.
    subprocess.run(["img2webp", "-lossless", "rgb8.png", "rgba8.png", "-o",
                    "animated.webp"], check=True)
    # WebP bomb: the lossless header's 14-bit sizes set to 16384 x 16384 (268 megapixels).
    data = bytearray(open("rgb8_lossless.webp", "rb").read())
    i = data.index(b"VP8L") + 8
    assert data[i] == 0x2F
    bits = (16383) | (16383 << 14) | (data[i + 4] >> 4 << 28)
    struct.pack_into("<I", data, i + 1, bits)
    open("bomb.webp", "wb").write(bytes(data))


def exif_tiff(orientation, big_endian):
    """The TIFF data of exif_app1 without JPEG's APP1 framing (what PNG eXIf and WebP EXIF hold)."""
    app1 = exif_app1(orientation, big_endian)
    return app1[4 + 6:]


def write_exif_png_webp(tmp):
    """exif_orientation_<o>.png (eXIf chunk before IDAT) and .webp (lossless, EXIF chunk added
    with webpmux), stored transformed like the JPEGs: all decode to the same upright picture."""
    for o in range(1, 9):
        rows = STORED[o](upright())
        h, w = len(rows), len(rows[0])
        raw = b"".join(b"\x00" + bytes(v for px in row for v in px) for row in rows)
        out = b"\x89PNG\r\n\x1a\n"
        out += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
        out += chunk(b"eXIf", exif_tiff(o, big_endian=(o % 2 == 0)))
        out += chunk(b"IDAT", zlib.compress(raw, 9))
        out += chunk(b"IEND", b"")
        with open("exif_orientation_%d.png" % o, "wb") as f:
            f.write(out)
        plain = os.path.join(tmp, "o%d.png" % o)
        png(plain, w, h, 2, 8, [bytes(v for px in row for v in px) for row in rows])
        lossless = os.path.join(tmp, "o%d.webp" % o)
        subprocess.run(["cwebp", "-quiet", "-lossless", "-exact", plain, "-o", lossless], check=True)
        tiff = os.path.join(tmp, "o%d.exif" % o)
        with open(tiff, "wb") as f:
            f.write(exif_tiff(o, big_endian=(o % 2 == 1)))
        subprocess.run(["webpmux", "-set", "exif", tiff, lossless, "-o",
                        "exif_orientation_%d.webp" % o], check=True)


if __name__ == "__main__":
    write_pngs()
    with tempfile.TemporaryDirectory() as tmp:
        write_jpegs_webps(tmp)
        write_exif_png_webp(tmp)
