#include "mpi_eager_limits.hpp"

#include <mpi.h>

#include <cstdlib>
#include <cstring>

namespace hangbench::rendezvous {
namespace {

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
  if (type == MPI_COUNT) return load_as<MPI_Count>(raw);
  return std::nullopt;
}

struct CvarInfo {
  std::string name;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

std::optional<CvarInfo> cvar_info(int index) {
  char name[256] = {}, description[1024] = {};
  int name_length = sizeof name, description_length = sizeof description, verbosity = 0, bind = 0, scope = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_T_enum enumtype = MPI_T_ENUM_NULL;
  if (MPI_T_cvar_get_info(index, name, &name_length, &verbosity, &type, &enumtype, description, &description_length,
                          &bind, &scope) != MPI_SUCCESS) {
    return std::nullopt;
  }
  return CvarInfo{name, type};
}

std::optional<std::uint64_t> read_cvar(int index, MPI_Datatype type) {
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

MpiToolSession::MpiToolSession() {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  int provided = 0;
  ok_ = MPI_T_init_thread(level, &provided) == MPI_SUCCESS;
}

MpiToolSession::~MpiToolSession() {
  if (ok_) MPI_T_finalize();
}

std::optional<std::uint64_t> MpiToolSession::read(const std::string& name) const {
  int index = -1;
  if (!ok_ || MPI_T_cvar_get_index(name.c_str(), &index) != MPI_SUCCESS) return std::nullopt;
  const auto info = cvar_info(index);
  if (!info) return std::nullopt;
  return read_cvar(index, info->type);
}

ThresholdReading MpiToolSession::read_every_eager_limit() const {
  ThresholdReading reading;
  int count = 0;
  if (!ok_) return reading;
  MPI_T_cvar_get_num(&count);
  for (int i = 0; i < count; ++i) {
    const auto info = cvar_info(i);
    if (!info || !is_eager_limit_variable(info->name)) continue;
    if (const auto value = read_cvar(i, info->type)) {
      reading.limits.push_back({info->name, static_cast<std::size_t>(*value)});
    }
  }
  return reading;
}

ThresholdReading read_mpi_eager_limits() {
  ThresholdReading reading = MpiToolSession().read_every_eager_limit();
  if (auto ucx = parse_ucx_threshold(std::getenv("UCX_RNDV_THRESH"))) {
    reading.limits.push_back({"UCX_RNDV_THRESH", *ucx});
  }
  return reading;
}

}  // namespace hangbench::rendezvous
