#include "core/lolwut_art.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

namespace ringkv::core::lolwut {
namespace {

std::set<std::pair<int, int>> SetPixels(const Canvas& c) {
  std::set<std::pair<int, int>> out;
  for (int y = 0; y < c.height(); ++y) {
    for (int x = 0; x < c.width(); ++x) {
      if (c.Get(x, y) != 0) out.insert({x, y});
    }
  }
  return out;
}

TEST(LolwutCanvasTest, DrawingOutsideIsDroppedAndReadsAsBackgroundZero) {
  Canvas c(3, 2, 0);
  c.Set(-1, 0, 1);
  c.Set(3, 1, 1);
  c.Set(0, 2, 1);
  EXPECT_TRUE(SetPixels(c).empty());
  c.Set(2, 1, 7);
  EXPECT_EQ(c.Get(2, 1), 7);
  EXPECT_EQ(c.Get(5, 5), 0);
  Canvas white(2, 2, kWhite);
  EXPECT_EQ(white.Get(1, 1), kWhite);
  EXPECT_EQ(white.Get(2, 1), 0);
}

TEST(LolwutCanvasTest, LinesIncludeBothEndsWhicheverWayTheyAreDrawn) {
  Canvas a(10, 10, 0), b(10, 10, 0);
  a.DrawLine(1, 2, 8, 6, 1);
  b.DrawLine(8, 6, 1, 2, 1);
  EXPECT_EQ(a.Get(1, 2), 1);
  EXPECT_EQ(a.Get(8, 6), 1);
  EXPECT_EQ(SetPixels(a).size(), 8u);  // one pixel per column of the longer axis
  EXPECT_EQ(SetPixels(b).size(), 8u);
  Canvas h(10, 10, 0);
  h.DrawLine(2, 3, 6, 3, 1);
  EXPECT_EQ(SetPixels(h), (std::set<std::pair<int, int>>{{2, 3}, {3, 3}, {4, 3}, {5, 3}, {6, 3}}));
}

TEST(LolwutCanvasTest, AnUnturnedSquareIsAnAxisAlignedOutline) {
  Canvas c(40, 40, 0);
  c.DrawSquare(20, 20, 10, 0, 1);  // corners round(sin(45deg) * round(10 / sqrt 2)) = 5 from the centre
  const auto pixels = SetPixels(c);
  EXPECT_EQ(pixels.size(), 40u);  // four sides of 11 pixels, corners shared
  for (auto [x, y] : pixels) {
    EXPECT_TRUE(x == 15 || x == 25 || y == 15 || y == 25) << x << "," << y;
    EXPECT_TRUE(x >= 15 && x <= 25 && y >= 15 && y <= 25) << x << "," << y;
  }
  EXPECT_EQ(c.Get(20, 20), 0);
}

TEST(LolwutSchotterTest, CanvasSizeAndTheOrderedTopRowFollowRedis) {
  std::mt19937 rng(1);
  // 66 columns, 8 x 12 squares: 132 pixels wide, 2 of padding, squares of
  // 16, 16 * 12 + 4 tall.
  Canvas c = DrawSchotter(66, 8, 12, rng);
  EXPECT_EQ(c.width(), 132);
  EXPECT_EQ(c.height(), 196);
  // The first square sits at (10, 10), its corners 8 away: rows 0 and 1
  // are never moved.
  for (auto [x, y] : {std::pair{2, 2}, {18, 2}, {2, 18}, {18, 18}, {10, 2}, {2, 10}}) {
    EXPECT_EQ(c.Get(x, y), 1) << x << "," << y;
  }
  EXPECT_EQ(c.Get(10, 10), 0);
  EXPECT_EQ(c.Get(0, 0), 0);  // the padding
}

TEST(LolwutSchotterTest, OneColumnOneSquareIsTheCharacterRedisPrints) {
  std::mt19937 rng(1);
  // LOLWUT VERSION 5 1 1 1 on redis-server 7.0.15: "⠋" and a newline.
  EXPECT_EQ(RenderBraille(DrawSchotter(1, 1, 1, rng)), "\u280b\n");
}

TEST(LolwutSchotterTest, LowerRowsAreDisorderedDifferentlyForDifferentRandomness) {
  std::mt19937 a(1), b(2);
  EXPECT_NE(SetPixels(DrawSchotter(66, 8, 12, a)), SetPixels(DrawSchotter(66, 8, 12, b)));
}

TEST(LolwutBrailleTest, EachTwoByFourBlockIsOneCharacter) {
  Canvas c(4, 4, 0);
  // Left block: every dot. Right block: dots 1 (0,0), 5 (1,1) and 8 (1,3).
  for (int y = 0; y < 4; ++y) {
    c.Set(0, y, 1);
    c.Set(1, y, 1);
  }
  c.Set(2, 0, 1);
  c.Set(3, 1, 1);
  c.Set(3, 3, 1);
  EXPECT_EQ(RenderBraille(c), "\u28ff\u2891\n");
}

TEST(LolwutBrailleTest, LinesEndWithANewlineUnlessTheirFirstRowIsTheLast) {
  EXPECT_EQ(RenderBraille(Canvas(2, 8, 0)), "\u2800\n\u2800\n");
  EXPECT_EQ(RenderBraille(Canvas(2, 5, 0)), "\u2800\n\u2800");  // 5 rows: the second line starts on row 4
  EXPECT_EQ(RenderBraille(Canvas(2, 1, 0)), "\u2800");
  EXPECT_EQ(RenderBraille(Canvas(0, 0, 0)), "");
}

TEST(LolwutSkylineTest, BuildingsStandOnTheBottomAndNeverReachTheTopRow) {
  for (int seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    Canvas c(80, 20, kWhite);
    DrawSkyline(c, rng);
    int black_at_bottom = 0;
    for (int x = 0; x < c.width(); ++x) {
      // The tallest building is 20 / 2 + 19 / 2 = 19 pixels: row 0 is sky.
      EXPECT_EQ(c.Get(x, 0), kWhite) << "seed " << seed << " x " << x;
      black_at_bottom += c.Get(x, c.height() - 1) == kBlack;
      for (int y = 0; y < c.height(); ++y) EXPECT_LE(c.Get(x, y), kWhite);
    }
    EXPECT_GT(black_at_bottom, 0) << "seed " << seed;
  }
}

TEST(LolwutSkylineTest, WindowsAreAtMostTwoPixelsWideAndOneGray) {
  std::mt19937 rng(7);
  Canvas c(200, 60, kWhite);
  DrawSkyline(c, rng);
  // A gray pixel with black above and below it is part of a window of a
  // front building: two pixels of one gray, or one where the building's
  // inner edge cuts the pair, with black between windows.
  int pairs = 0;
  for (int y = 1; y + 1 < c.height(); ++y) {
    for (int x = 0; x < c.width();) {
      auto window_at = [&](int at, uint8_t gray) {
        return c.Get(at, y) == gray && c.Get(at, y - 1) == kBlack && c.Get(at, y + 1) == kBlack;
      };
      const uint8_t p = c.Get(x, y);
      if ((p != kDarkGray && p != kLightGray) || !window_at(x, p)) {
        ++x;
        continue;
      }
      int run = 1;
      while (x + run < c.width() && window_at(x + run, p)) ++run;
      EXPECT_LE(run, 2) << x << "," << y;
      pairs += run == 2;
      x += run;
    }
  }
  EXPECT_GT(pairs, 0);
}

TEST(LolwutGraysTest, EachPixelIsASpaceOnItsGray) {
  Canvas c(2, 2, 0);
  c.Set(1, 0, kWhite);
  c.Set(0, 1, kDarkGray);
  c.Set(1, 1, kLightGray);
  EXPECT_EQ(RenderGrays(c),
            "\033[0;30;40m \033[0m\033[0;97;107m \033[0m\n"
            "\033[0;90;100m \033[0m\033[0;37;47m \033[0m");
}

}  // namespace
}  // namespace ringkv::core::lolwut
