#include "rendezvous.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

namespace hangbench::ddp {

void publish_blob(const std::string& dir, const std::string& name, const std::string& bytes) {
  if (dir.empty()) throw std::runtime_error("no rendezvous folder: pass --rendezvous-dir or set HANGBENCH_TRIAL_DIR");
  const std::string final_path = dir + "/" + name;
  const std::string temp_path = final_path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + temp_path);
  }
  std::error_code ec;
  std::filesystem::rename(temp_path, final_path, ec);
  if (ec) throw std::runtime_error("cannot rename " + temp_path + " to " + final_path + ": " + ec.message());
}

std::string await_blob(const std::string& dir, const std::string& name, size_t size, double timeout_s) {
  if (dir.empty()) throw std::runtime_error("no rendezvous folder: pass --rendezvous-dir or set HANGBENCH_TRIAL_DIR");
  const std::string path = dir + "/" + name;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (bytes.size() == size) return bytes;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("rank 0 did not publish " + path + " within " + std::to_string(timeout_s) + " s");
}

}  // namespace hangbench::ddp
