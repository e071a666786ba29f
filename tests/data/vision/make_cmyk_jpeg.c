/* Writes a 32x16 CMYK JPEG (Adobe convention: stored values inverted, 255 = no ink) for
 * make_images.py: the four quadrants of make_images.py's QUAD as (R, G, B, 255), except the
 * bottom-right quadrant, which is (R, G, B, 0): full black ink.
 * cc make_cmyk_jpeg.c -ljpeg -o make_cmyk_jpeg && ./make_cmyk_jpeg cmyk.jpg */
#include <jpeglib.h>
#include <stdio.h>

int main(int argc, char** argv) {
  static const unsigned char quad[4][3] = {
      {200, 30, 40}, {30, 180, 60}, {40, 60, 220}, {230, 220, 50}};
  struct jpeg_compress_struct c;
  struct jpeg_error_mgr err;
  unsigned char row[32 * 4];
  FILE* f;
  if (argc != 2 || (f = fopen(argv[1], "wb")) == NULL) return 1;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, f);
  c.image_width = 32;
  c.image_height = 16;
  c.input_components = 4;
  c.in_color_space = JCS_CMYK;
  jpeg_set_defaults(&c);
  jpeg_set_colorspace(&c, JCS_CMYK); /* writes the Adobe marker */
  jpeg_set_quality(&c, 95, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < 16) {
    int y = (int)c.next_scanline;
    JSAMPROW r = row;
    for (int x = 0; x < 32; ++x) {
      int q = (y >= 8) * 2 + (x >= 16);
      row[4 * x] = quad[q][0];
      row[4 * x + 1] = quad[q][1];
      row[4 * x + 2] = quad[q][2];
      row[4 * x + 3] = q == 3 ? 0 : 255;
    }
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  fclose(f);
  return 0;
}
