#!/usr/bin/python3
"""Reference outputs from Pillow (Debian: apt-get install python3-pil python3-numpy), committed as raw RGB8:
  pil_<source>_<w>x<h>.rgb    Pillow's BICUBIC resize of the source image (as Pillow decodes it)
  pil_decode_<source>.rgb     Pillow's decode (JPEG: the same libjpeg-turbo, accurate IDCT)
  qwen_busy_32x64.f32         the Qwen-VL processor steps (PIL resize, reshape/transpose in numpy)
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


def qwen_pixel_values(im, height, width, patch=16, merge=2, temporal=2, mean=0.5, std=0.5):
    """The Qwen2-VL image processor's steps in numpy: PIL BICUBIC resize, rescale, normalise,
    a still image repeated to `temporal` frames, then its reshape and transpose into
    [grid_t * grid_h * grid_w, C * temporal * patch * patch]."""
    import numpy as np
    a = np.asarray(im.resize((width, height), Image.Resampling.BICUBIC), dtype=np.float32)
    a = (a / 255.0 - mean) / std                    # [H, W, C]
    frames = np.stack([a.transpose(2, 0, 1)] * temporal)  # [T, C, H, W]
    gt, gh, gw = 1, height // patch, width // patch
    p = frames.reshape(gt, temporal, 3, gh // merge, merge, patch, gw // merge, merge, patch)
    p = p.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    return p.reshape(gt * gh * gw, 3 * temporal * patch * patch).astype("<f4")


# busy.png with pixels in [0, 4096]: 97x61 rounds to 96x64 = 6144 > 4096, so
# beta = sqrt(97 * 61 / 4096) = 1.2019: floor(61 / 1.2019 / 32) = 1 -> 32, floor(97 / 1.2019 / 32)
# = 2 -> 64. Grid 2 x 4 patches.
with open("qwen_busy_32x64.f32", "wb") as f:
    f.write(qwen_pixel_values(rgb("busy.png"), 32, 64).tobytes())
