// The process-wide account of memory kept between calls: keepers settle what they hold, a
// keeper over the budget frees its buffers, and a release frees every keeper's.
#include <gtest/gtest.h>

#include "h5sparse/kept_memory.hpp"

using namespace h5sparse;

namespace {

struct FakeKeeper final : Keeper {
  std::size_t holding = 0;
  int freed = 0;
  std::size_t held() const noexcept override { return holding; }
  void free_buffers() noexcept override {
    holding = 0;
    ++freed;
  }
};

}  // namespace

TEST(KeptMemory, KeepersSettleWhatTheyHold) {
  const std::size_t before = kept_memory();
  {
    FakeKeeper a, b;
    a.holding = 1000;
    a.settle();
    b.holding = 500;
    b.settle();
    EXPECT_EQ(kept_memory(), before + 1500);
    a.holding = 200;  // shrank
    a.settle();
    EXPECT_EQ(kept_memory(), before + 700);
    EXPECT_EQ(a.freed + b.freed, 0);
  }
  EXPECT_EQ(kept_memory(), before);  // a keeper's thread ends: its account goes
}

TEST(KeptMemory, AKeeperOverTheBudgetFreesItsBuffers) {
  FakeKeeper small, big;
  small.holding = 1 << 20;
  small.settle();
  big.holding = kept_memory_budget() + 1;
  big.settle();
  EXPECT_EQ(big.freed, 1);
  EXPECT_EQ(big.holding, 0u);
  EXPECT_EQ(small.freed, 0);
  EXPECT_LE(kept_memory(), kept_memory_budget());
}

TEST(KeptMemory, ReleaseFreesEveryKeeper) {
  FakeKeeper a, b;
  a.holding = 300;
  a.settle();
  b.holding = 400;
  b.settle();
  EXPECT_GE(kept_memory(), 700u);
  release_kept_memory();
  EXPECT_EQ(a.freed, 1);
  EXPECT_EQ(b.freed, 1);
  EXPECT_EQ(kept_memory(), 0u);  // every keeper's, also those earlier tests left on worker threads
}
