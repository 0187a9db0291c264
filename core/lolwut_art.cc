#include "core/lolwut_art.h"

#include <cmath>
#include <cstdlib>
#include <numbers>

#include "absl/random/distributions.h"

namespace ringkv::core::lolwut {

Canvas::Canvas(int width, int height, uint8_t background)
    : width_(width), height_(height), pixels_(static_cast<size_t>(width) * static_cast<size_t>(height), background) {}

void Canvas::Set(int x, int y, uint8_t color) {
  if (x < 0 || x >= width_ || y < 0 || y >= height_) return;
  pixels_[static_cast<size_t>(y) * static_cast<size_t>(width_) + static_cast<size_t>(x)] = color;
}

uint8_t Canvas::Get(int x, int y) const {
  if (x < 0 || x >= width_ || y < 0 || y >= height_) return 0;
  return pixels_[static_cast<size_t>(y) * static_cast<size_t>(width_) + static_cast<size_t>(x)];
}

void Canvas::DrawLine(int x1, int y1, int x2, int y2, uint8_t color) {
  const int dx = std::abs(x2 - x1);
  const int dy = std::abs(y2 - y1);
  const int step_x = x1 < x2 ? 1 : -1;
  const int step_y = y1 < y2 ? 1 : -1;
  int err = dx - dy;
  for (;;) {
    Set(x1, y1, color);
    if (x1 == x2 && y1 == y2) return;
    const int twice = err * 2;
    if (twice > -dy) {
      err -= dy;
      x1 += step_x;
    }
    if (twice < dx) {
      err += dx;
      y1 += step_y;
    }
  }
}

void Canvas::DrawSquare(int x, int y, float side, float angle, uint8_t color) {
  // A square of side s inscribed in a circle has its corners s / sqrt(2)
  // from the centre: the four points of that circle at 45 degrees + angle,
  // a quarter turn apart (Redis's arithmetic: the radius rounded, float
  // angles, double trigonometry).
  const float radius = std::round(static_cast<float>(side / 1.4142135623));
  int px[4], py[4];
  float k = static_cast<float>(std::numbers::pi / 4 + angle);
  for (int j = 0; j < 4; ++j) {
    px[j] = static_cast<int>(std::round(std::sin(static_cast<double>(k)) * radius + x));
    py[j] = static_cast<int>(std::round(std::cos(static_cast<double>(k)) * radius + y));
    k = static_cast<float>(k + std::numbers::pi / 2);
  }
  for (int j = 0; j < 4; ++j) DrawLine(px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4], color);
}

Canvas DrawSchotter(int console_cols, int squares_per_row, int squares_per_col, absl::BitGenRef rng) {
  const int width = console_cols * 2;
  const int padding = width > 4 ? 2 : 0;
  const float side = static_cast<float>(width - padding * 2) / static_cast<float>(squares_per_row);
  const int height = static_cast<int>(side * static_cast<float>(squares_per_col) + static_cast<float>(padding * 2));
  Canvas canvas(width, height, 0);
  // A random amount that grows row by row: up to row / squares_per_col (0
  // at the top, nearly 1 at the bottom); its sign is drawn apart.
  auto jitter = [&](int row) {
    return absl::Uniform(absl::IntervalClosed, rng, 0.0f, 1.0f) / static_cast<float>(squares_per_col) *
           static_cast<float>(row);
  };
  for (int row = 0; row < squares_per_col; ++row) {
    for (int col = 0; col < squares_per_row; ++col) {
      int cx = static_cast<int>(static_cast<float>(col) * side + side / 2 + static_cast<float>(padding));
      int cy = static_cast<int>(static_cast<float>(row) * side + side / 2 + static_cast<float>(padding));
      float angle = 0;
      if (row > 1) {  // the first two rows stay in order
        float turn = jitter(row), shift_x = jitter(row), shift_y = jitter(row);
        if (absl::Bernoulli(rng, 0.5)) turn = -turn;
        if (absl::Bernoulli(rng, 0.5)) shift_x = -shift_x;
        if (absl::Bernoulli(rng, 0.5)) shift_y = -shift_y;
        angle = turn;
        cx = static_cast<int>(static_cast<float>(cx) + shift_x * side / 3);
        cy = static_cast<int>(static_cast<float>(cy) + shift_y * side / 3);
      }
      canvas.DrawSquare(cx, cy, side, angle, 1);
    }
  }
  return canvas;
}

std::string RenderBraille(const Canvas& canvas) {
  std::string text;
  for (int y = 0; y < canvas.height(); y += 4) {
    for (int x = 0; x < canvas.width(); x += 2) {
      // Braille dot numbering: 1-3 down the left column, 4-6 down the
      // right, 7 and 8 at the bottom left and right.
      int dots = 0;
      if (canvas.Get(x, y)) dots |= 1 << 0;
      if (canvas.Get(x, y + 1)) dots |= 1 << 1;
      if (canvas.Get(x, y + 2)) dots |= 1 << 2;
      if (canvas.Get(x + 1, y)) dots |= 1 << 3;
      if (canvas.Get(x + 1, y + 1)) dots |= 1 << 4;
      if (canvas.Get(x + 1, y + 2)) dots |= 1 << 5;
      if (canvas.Get(x, y + 3)) dots |= 1 << 6;
      if (canvas.Get(x + 1, y + 3)) dots |= 1 << 7;
      const int code = 0x2800 + dots;  // three UTF-8 bytes: 1110xxxx 10xxxxxx 10xxxxxx
      text.push_back(static_cast<char>(0xE0 | (code >> 12)));
      text.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      text.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
    if (y != canvas.height() - 1) text.push_back('\n');
  }
  return text;
}

namespace {

struct Building {
  int left;
  int width;
  int height;
  bool windows;
  uint8_t color;
};

// A building standing on the canvas's bottom row, its roof two pixels
// narrower on each side. Windows are two pixels wide and one tall, on every
// other pair of columns and every other row inside a two-pixel border, each
// window one gray chosen at random.
void DrawBuilding(Canvas& canvas, const Building& b, absl::BitGenRef rng) {
  const int bottom = canvas.height() - 1;
  const int top = bottom - b.height + 1;
  for (int y = bottom; y >= top; --y) {
    for (int x = b.left; x < b.left + b.width; ++x) {
      if (y == top && (x <= b.left + 1 || x >= b.left + b.width - 2)) continue;
      uint8_t color = b.color;
      if (b.windows && x > b.left + 1 && x < b.left + b.width - 2 && y > top + 1 && y < bottom - 1) {
        const int rel_x = x - (b.left + 1);
        const int rel_y = y - (top + 1);
        if ((rel_x / 2) % 2 != 0 && rel_y % 2 != 0) {
          do {
            color = static_cast<uint8_t>(absl::Uniform(rng, 1, 3));
          } while (color == b.color);
          if (rel_x % 2 != 0) color = canvas.Get(x - 1, y);  // a window's second pixel matches its first
        }
      }
      canvas.Set(x, y, color);
    }
  }
}

}  // namespace

void DrawSkyline(Canvas& canvas, absl::BitGenRef rng) {
  const int h = canvas.height();
  // The background rows, light gray first so that it stays behind.
  for (uint8_t color : {kLightGray, kDarkGray}) {
    for (int offset = -10; offset < canvas.width();) {
      offset += absl::Uniform(rng, 0, 8);
      Building b{offset, 10 + absl::Uniform(rng, 0, 9), 0, false, color};
      b.height = h / 2 + absl::Uniform(rng, 0, h) / (color == kLightGray ? 2 : 3);
      DrawBuilding(canvas, b, rng);
      offset += color == kLightGray ? b.width / 2 : b.width + 1;
    }
  }
  // The front row, with windows.
  for (int offset = -10; offset < canvas.width();) {
    offset += absl::Uniform(rng, 0, 8);
    Building b{offset, 5 + absl::Uniform(rng, 0, 14), 0, true, kBlack};
    if (b.width % 4 != 0) b.width += b.width % 3;
    b.height = h / 3 + absl::Uniform(rng, 0, h) / 2;
    DrawBuilding(canvas, b, rng);
    offset += b.width + 5;
  }
}

std::string RenderGrays(const Canvas& canvas) {
  std::string text;
  for (int y = 0; y < canvas.height(); ++y) {
    for (int x = 0; x < canvas.width(); ++x) {
      // Foreground and background both, for the same look on every terminal.
      const char* escape;
      switch (canvas.Get(x, y)) {
        case kDarkGray: escape = "0;90;100m"; break;
        case kLightGray: escape = "0;37;47m"; break;
        case kWhite: escape = "0;97;107m"; break;
        default: escape = "0;30;40m"; break;
      }
      text.append("\033[").append(escape).append(" \033[0m");
    }
    if (y != canvas.height() - 1) text.push_back('\n');
  }
  return text;
}

}  // namespace ringkv::core::lolwut
