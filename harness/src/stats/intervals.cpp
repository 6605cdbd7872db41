// Clopper-Pearson exact binomial intervals through the inverse regularized
// incomplete beta function of Boost.Math.
#include <boost/math/special_functions/beta.hpp>
#include <stdexcept>

#include "hangbench/stats.hpp"

namespace hangbench::stats {

Interval clopper_pearson(long long k, long long n, double confidence) {
  if (k < 0 || n < 0 || k > n) throw std::invalid_argument("clopper_pearson: need 0 <= k <= n");
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("clopper_pearson: confidence must lie in (0, 1)");
  Interval ci;  // n = 0: nothing is known, [0, 1]
  if (n == 0) return ci;
  const double tail = (1 - confidence) / 2;
  const double kd = static_cast<double>(k), nd = static_cast<double>(n);
  ci.lo = k == 0 ? 0.0 : boost::math::ibeta_inv(kd, nd - kd + 1, tail);
  ci.hi = k == n ? 1.0 : boost::math::ibeta_inv(kd + 1, nd - kd, 1 - tail);
  return ci;
}

}  // namespace hangbench::stats
