// What carries the activation between neighbouring stages: NCCL send/receive
// (one GPU per rank, or all stages on one GPU with one NCCL host each, joined by
// NCCL's network transport), or, with --link=host-page, a spin kernel that waits
// on a word of a shared page, the receiver "posting its receive" by writing it.
#pragma once

#include <memory>
#include <string>

#include "activation.hpp"
#include "mapped_release_flag.hpp"
#include "nccl_p2p.hpp"
#include "pipeline_options.hpp"
#include "pipeline_stage.hpp"
#include "release_flag.hpp"

namespace pp::gpu {

// Declared in the order they are made; the teardown frees nccl and
// release_to_next itself, the rest goes with the struct.
struct StageLinks {
  std::unique_ptr<Activation> activation_in;  // stages after the first
  std::unique_ptr<Activation> activation_out;
  std::unique_ptr<MappedReleaseFlag> release_to_next;  // single GPU, sender side
  std::unique_ptr<ReleaseFlag> release_from_previous;  // single GPU, receiver side
  std::unique_ptr<NcclP2p> nccl;                       // --link=nccl
  std::string nccl_debug_log;                          // NCCL's INFO log in the trial folder, "" if none
};

// The transports NCCL's log names ("NET/Socket/0 ..."), recorded as nccl_transport;
// nothing when the log was not routed to the trial folder.
void record_nccl_transport(const StageLinks& links);

// Collective over stage.comm. Allocates the activations, then either brings up
// NCCL (records nccl_library and nccl_version) or hands the release page's name
// from each sender to its receiver over MPI and unlinks it once both mapped it.
// A failure (an allocation, NCCL, the page) is thrown as a std::exception.
void connect_stage_links(StageLinks& links, const PipelineOptions& options, const PipelineStage& stage);

}  // namespace pp::gpu
