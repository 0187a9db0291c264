// The computer art of LOLWUT: Redis 5's Schotter and Redis 6's skyline,
// drawn on a canvas of small colour numbers and rendered as terminal text.
//
// The geometry (canvas sizes, square positions, building widths and heights,
// rounding) follows Redis 7.0's lolwut5.c / lolwut6.c, so that the same
// arguments give a picture of the same size and kind; the randomness comes
// from the caller, so a test can fix it. Pure computation, no state beyond
// the canvas; not thread-safe per canvas.
//
//   absl::BitGen rng;
//   std::string art = RenderBraille(DrawSchotter(66, 8, 12, rng));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/random/bit_gen_ref.h"

namespace ringkv::core::lolwut {

// A width x height grid of colours, (0, 0) at the top left. Writes outside
// the grid are dropped and reads outside it give 0, so shapes may cross the
// edges. One byte a pixel: the caller bounds the size (LOLWUT clamps its
// arguments as Redis does).
class Canvas {
 public:
  // REQUIRES: width >= 0, height >= 0.
  Canvas(int width, int height, uint8_t background);

  int width() const { return width_; }
  int height() const { return height_; }

  void Set(int x, int y, uint8_t color);
  uint8_t Get(int x, int y) const;

  // A straight line from (x1, y1) to (x2, y2), both ends included
  // (Bresenham).
  void DrawLine(int x1, int y1, int x2, int y2, uint8_t color);

  // The outline of a square of side `side` centred on (x, y) and turned by
  // `angle` radians, its corners rounded to whole pixels.
  void DrawSquare(int x, int y, float side, float angle, uint8_t color);

 private:
  int width_;
  int height_;
  std::vector<uint8_t> pixels_;  // row after row
};

// Georg Nees's "Schotter" (1968): squares_per_row x squares_per_col squares
// on a canvas 2 * console_cols pixels wide, in order at the top and more and
// more turned and displaced row by row. Colours: 0 background, 1 line.
// REQUIRES: console_cols, squares_per_row, squares_per_col >= 1.
Canvas DrawSchotter(int console_cols, int squares_per_row, int squares_per_col, absl::BitGenRef rng);

// Each 2 x 4 block of pixels as one Braille character (U+2800 + the block's
// eight dots, UTF-8), a line of text per four rows of pixels; every line
// ends with '\n' except one whose first row is the canvas's last (Redis's
// rule, so the text and its footer line up the same way).
std::string RenderBraille(const Canvas& canvas);

// Colours of the skyline's canvas.
inline constexpr uint8_t kBlack = 0;
inline constexpr uint8_t kDarkGray = 1;
inline constexpr uint8_t kLightGray = 2;
inline constexpr uint8_t kWhite = 3;

// A city skyline after the parallax backgrounds of 8-bit games, drawn over
// the canvas (which LOLWUT fills with kWhite first): two rows of windowless
// buildings in the grays, the lighter behind, then black buildings in front
// with windows of either gray.
void DrawSkyline(Canvas& canvas, absl::BitGenRef rng);

// Each pixel as a space on a background of its grey level (ANSI escapes
// setting foreground and background, then a reset), a line per row, lines
// joined by '\n'.
std::string RenderGrays(const Canvas& canvas);

}  // namespace ringkv::core::lolwut
