#include "rendezvous_threshold.hpp"

#include <cstdlib>
#include <sstream>

#include "mpi_eager_limits.hpp"

namespace hangbench::mpi_progress {

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

}  // namespace

std::optional<RendezvousThreshold> read_rendezvous_threshold(std::string& error) {
  RendezvousThreshold t;
  t.pml = env_or_empty("OMPI_MCA_pml");
  t.btl = env_or_empty("OMPI_MCA_btl");
  if (t.pml == "ucx") {
    const std::string rndv = env_or_empty("UCX_RNDV_THRESH");
    char* end = nullptr;
    const unsigned long long v = std::strtoull(rndv.c_str(), &end, 10);
    if (rndv.empty() || end == nullptr || *end != '\0') {
      error =
          "OMPI_MCA_pml=ucx: set UCX_RNDV_THRESH to a byte count so the rendezvous path is known (got '" + rndv + "')";
      return std::nullopt;
    }
    t.bytes = v;
    t.source = "UCX_RNDV_THRESH";
    return t;
  }
  if (t.btl.empty()) {
    error = "set OMPI_MCA_btl explicitly (e.g. self,tcp) so the eager limit that applies is known";
    return std::nullopt;
  }
  const rendezvous::MpiToolSession mpi_t;
  if (!mpi_t.ok()) {
    error = "MPI_T_init_thread failed: cannot read the eager limits";
    return std::nullopt;
  }
  std::stringstream list(t.btl);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (name.empty() || name == "self" || name[0] == '^') continue;
    const std::string cvar = "btl_" + name + "_eager_limit";
    const auto value = mpi_t.read(cvar);
    if (!value) {
      error = "cannot read " + cvar + " through MPI_T";
      return std::nullopt;
    }
    if (*value >= t.bytes) {
      t.bytes = *value;
      t.source = cvar + " (MPI_T)";
    }
  }
  if (t.source.empty()) {
    error = "OMPI_MCA_btl='" + t.btl + "' names no transport other than self (exclusion lists are not supported)";
    return std::nullopt;
  }
  return t;
}

}  // namespace hangbench::mpi_progress
