#include "rendezvous_threshold.hpp"

#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace hangbench::mpi_progress {

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

template <typename T>
std::uint64_t load_as(const unsigned char* raw) {
  T value;
  std::memcpy(&value, raw, sizeof value);
  return static_cast<std::uint64_t>(value);
}

std::optional<std::uint64_t> integer_from(const unsigned char* raw, MPI_Datatype type) {
  if (type == MPI_INT) return load_as<int>(raw);
  if (type == MPI_UNSIGNED) return load_as<unsigned>(raw);
  if (type == MPI_LONG) return load_as<long>(raw);
  if (type == MPI_UNSIGNED_LONG) return load_as<unsigned long>(raw);
  if (type == MPI_LONG_LONG) return load_as<long long>(raw);
  if (type == MPI_UNSIGNED_LONG_LONG) return load_as<unsigned long long>(raw);
  return std::nullopt;
}

// Reads one integer control variable of the MPI tool interface.
std::optional<std::uint64_t> read_cvar(const std::string& name) {
  int index = -1;
  if (MPI_T_cvar_get_index(name.c_str(), &index) != MPI_SUCCESS) return std::nullopt;
  char cvar_name[256], desc[1024];
  int name_len = sizeof cvar_name, desc_len = sizeof desc, verbosity = 0, bind = 0, scope = 0;
  MPI_Datatype type;
  MPI_T_enum enumtype;
  if (MPI_T_cvar_get_info(index, cvar_name, &name_len, &verbosity, &type, &enumtype, desc,
                          &desc_len, &bind, &scope) != MPI_SUCCESS) {
    return std::nullopt;
  }
  MPI_T_cvar_handle handle;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) != MPI_SUCCESS) return std::nullopt;
  unsigned char raw[32] = {};  // large enough for any integer type
  const bool read_ok = count == 1 && MPI_T_cvar_read(handle, raw) == MPI_SUCCESS;
  MPI_T_cvar_handle_free(&handle);
  if (!read_ok) return std::nullopt;
  return integer_from(raw, type);
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
      error = "OMPI_MCA_pml=ucx: set UCX_RNDV_THRESH to a byte count so the rendezvous path is known (got '" +
              rndv + "')";
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
  // Ask for THREAD_MULTIPLE here too: Open MPI 4.1's MPI_T_init_thread
  // overwrites the process's provided thread level with the one requested.
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    error = "MPI_T_init_thread failed: cannot read the eager limits";
    return std::nullopt;
  }
  std::stringstream list(t.btl);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (name.empty() || name == "self" || name[0] == '^') continue;
    const std::string cvar = "btl_" + name + "_eager_limit";
    const auto value = read_cvar(cvar);
    if (!value) {
      error = "cannot read " + cvar + " through MPI_T";
      MPI_T_finalize();
      return std::nullopt;
    }
    if (*value >= t.bytes) {
      t.bytes = *value;
      t.source = cvar + " (MPI_T)";
    }
  }
  MPI_T_finalize();
  if (t.source.empty()) {
    error = "OMPI_MCA_btl='" + t.btl + "' names no transport other than self (exclusion lists are not supported)";
    return std::nullopt;
  }
  return t;
}

}  // namespace hangbench::mpi_progress
