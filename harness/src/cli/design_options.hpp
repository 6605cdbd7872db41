// Options that validate and sweep share because both run the same design
// (validate/design): declared once, so the two commands cannot drift apart.
#pragma once

#include <CLI/CLI.hpp>

#include "hangbench/validate.hpp"

namespace hangbench::cli {

// --reference-trials: more trials on the two references that every library is compared with.
void add_reference_trials_option(CLI::App& sub, validate::Request& r);

// --ranks and --placement: the DDP check across ranks (mpirun, one GPU or one per rank).
void add_world_options(CLI::App& sub, validate::Request& r);

}  // namespace hangbench::cli
