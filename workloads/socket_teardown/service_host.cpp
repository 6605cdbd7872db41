#include "service_host.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <future>
#include <new>
#include <system_error>
#include <thread>

namespace socket_teardown {
namespace {

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

class ThreadHost : public ServiceHost {
 public:
  ThreadHost(Listener listener, const SharedAbortFlag& flag, ServiceOptions options, ServiceHooks hooks) {
    std::promise<int> finished;
    done_ = finished.get_future();
    thread_ = std::thread([fd = listener.fd, abort = flag.get(), options, hooks = std::move(hooks),
                           finished = std::move(finished)]() mutable {
      ServiceLoop loop(fd, abort, options, std::move(hooks));
      finished.set_value(loop.run());
    });
  }
  ~ThreadHost() override {
    if (thread_.joinable()) thread_.join();
  }
  bool wait_for_exit(int timeout_ms) override {
    return done_.wait_for(std::chrono::milliseconds(timeout_ms)) == std::future_status::ready;
  }
  int join() override {
    thread_.join();  // commFree's pthread_join(comm->proxyState.thread)
    return done_.get();
  }
  pid_t pid() const override { return getpid(); }

 private:
  std::future<int> done_;
  std::thread thread_;
};

class ProcessHost : public ServiceHost {
 public:
  ProcessHost(Listener listener, const SharedAbortFlag& flag, ServiceOptions options, ServiceHooks hooks) {
    pid_ = ::fork();
    if (pid_ < 0) throw_errno("fork service");
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the rank that waits for it
      ServiceLoop loop(listener.fd, flag.get(), options, std::move(hooks));
      _exit(loop.run() == 0 ? 0 : 1);
    }
    ::close(listener.fd);  // the service process owns the listener now
    pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd_ < 0) throw_errno("pidfd_open");
  }
  ~ProcessHost() override {
    if (pidfd_ >= 0) ::close(pidfd_);
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool wait_for_exit(int timeout_ms) override {
    pollfd p{pidfd_, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms) > 0;
  }
  int join() override {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0) {
      if (errno != EINTR) throw_errno("waitpid service");
    }
    reaped_ = true;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  }
  pid_t pid() const override { return pid_; }

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;
  bool reaped_ = false;
};

}  // namespace

SharedAbortFlag::SharedAbortFlag() {
  void* mem = ::mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) throw_errno("mmap abort flag");
  flag_ = new (mem) std::atomic<int>(0);
}

SharedAbortFlag::~SharedAbortFlag() { ::munmap(flag_, sizeof(std::atomic<int>)); }

std::unique_ptr<ServiceHost> start_service(Topology topology, Listener listener, const SharedAbortFlag& abort_flag,
                                           ServiceOptions options, ServiceHooks hooks) {
  if (topology == Topology::Thread)
    return std::make_unique<ThreadHost>(listener, abort_flag, options, std::move(hooks));
  return std::make_unique<ProcessHost>(listener, abort_flag, options, std::move(hooks));
}

}  // namespace socket_teardown
