#include "stage_links.hpp"

#include <cuda_runtime.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "env_or.hpp"
#include "fatal_error.hpp"
#include "nccl_debug_log.hpp"
#include "phase.hpp"
#include "placement.hpp"
#include "stage_messages.hpp"

namespace pp::gpu {

namespace {

// NCCL connects a pair of ranks at their first send/receive, and that handshake
// needs both ranks inside NCCL: a first ncclSend blocks in ncclTransportP2pSetup
// until its receiver calls ncclRecv (seen on the H200: every no-progress trial
// hung there, EAGER too, before any cold call). A pipeline that has run its
// warm-up iterations is long past that, so the links are connected here with one
// element each way down the chain, before anything is measured.
void connect_nccl_links(StageLinks& links, const PipelineStage& stage) {
  const auto start = std::chrono::steady_clock::now();
  if (stage.has_previous()) links.nccl->recv(links.activation_in->data(), 1, stage.index - 1, nullptr);
  if (stage.has_next()) links.nccl->send(links.activation_out->data(), 1, stage.index + 1, nullptr);
  cuda_check(cudaDeviceSynchronize(), "connecting the NCCL links");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  hangbench::phase::metric("nccl_connect_s", seconds);
}

}  // namespace

void connect_stage_links(StageLinks& links, const PipelineOptions& options, const PipelineStage& stage) {
  if (stage.has_previous()) links.activation_in = std::make_unique<Activation>(options.activation_elements, 0.0f);
  links.activation_out = std::make_unique<Activation>(options.activation_elements, 1.0f);
  if (options.link == ActivationLink::Nccl) {
    // Before NCCL reads its environment: a shared GPU needs one NCCL host per stage,
    // and NCCL_DEBUG=INFO goes to the trial folder, where the transport is read back.
    const std::string host = hangbench::workload::claim_nccl_host(options.placement, stage.index);
    links.nccl_debug_log = hangbench::workload::route_nccl_debug_log(env_or("HANGBENCH_TRIAL_DIR", ""), stage.index);
    links.nccl = std::make_unique<NcclP2p>(stage.comm, stage.index, stage.count);
    hangbench::phase::metric("nccl_library", links.nccl->library_path());
    hangbench::phase::metric("nccl_version", links.nccl->version());
    if (!host.empty()) hangbench::phase::metric("nccl_hostid", host);
    stage.log("NCCL " + links.nccl->version() + " from " + links.nccl->library_path() +
              (host.empty() ? "" : ", NCCL_HOSTID=" + host));
    connect_nccl_links(links, stage);
    return;
  }
  // Host page: the sender creates the flag page and tells the receiver its name.
  char name[256] = {};
  if (stage.has_next()) {
    ReleaseFlag flag = ReleaseFlag::create("s" + std::to_string(stage.index));
    std::snprintf(name, sizeof name, "%s", flag.name().c_str());
    links.release_to_next = std::make_unique<MappedReleaseFlag>(std::move(flag));
    MPI_Send(name, sizeof name, MPI_CHAR, stage.index + 1, kLinkSetupTag, stage.comm);
  }
  if (stage.has_previous()) {
    MPI_Recv(name, sizeof name, MPI_CHAR, stage.index - 1, kLinkSetupTag, stage.comm, MPI_STATUS_IGNORE);
    links.release_from_previous = std::make_unique<ReleaseFlag>(ReleaseFlag::open(name));
  }
  MPI_Barrier(stage.comm);
  // Both sides have it mapped: drop the name so nothing outlives a killed trial.
  if (links.release_to_next) links.release_to_next->host().unlink_name();
}

void record_nccl_transport(const StageLinks& links) {
  if (links.nccl_debug_log.empty()) return;
  const auto transports = hangbench::workload::nccl_transports_in_file(links.nccl_debug_log);
  hangbench::phase::metric("nccl_transport", hangbench::workload::join_transports(transports));
}

}  // namespace pp::gpu
