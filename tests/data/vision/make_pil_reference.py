#!/usr/bin/python3
"""Reference outputs from Pillow (Debian: apt-get install python3-pil), committed as raw RGB8:
  pil_<source>_<w>x<h>.rgb    Pillow's BICUBIC resize of the source image (as Pillow decodes it)
  pil_decode_<source>.rgb     Pillow's decode (JPEG: the same libjpeg-turbo, accurate IDCT)
The C++ tests compare arc::vision's decode and resize_bicubic with them (within 1 level).
Run from this folder after make_images.py."""
from PIL import Image, ImageOps


def rgb(path):
    im = ImageOps.exif_transpose(Image.open(path))
    if im.mode == "RGBA":
        bg = Image.new("RGBA", im.size, (255, 255, 255, 255))
        im = Image.alpha_composite(bg, im)
    return im.convert("RGB")


def write(name, im):
    with open(name, "wb") as f:
        f.write(im.tobytes())


# A busier picture than the test pattern, for down-scaling (the antialiasing path).
w, h = 97, 61
busy = Image.new("RGB", (w, h))
busy.putdata([((x * x + 3 * y) % 256, (x * y) % 256, (17 * x + 29 * y * y) % 256)
              for y in range(h) for x in range(w)])
busy.save("busy.png")

for src, sizes in [("rgb8.png", [(160, 112), (3, 2)]),
                   ("busy.png", [(32, 64), (150, 90), (96, 32)]),
                   ("quad.jpg", [(64, 32), (20, 9)])]:
    im = rgb(src)
    for sw, sh in sizes:
        write("pil_%s_%dx%d.rgb" % (src.split(".")[0], sw, sh),
              im.resize((sw, sh), Image.Resampling.BICUBIC))
for src in ["quad.jpg", "exif_orientation_6.jpg", "exif_orientation_7.jpg", "quad_progressive.jpg"]:
    write("pil_decode_%s.rgb" % src.split(".")[0], rgb(src))
